"""End to end with the real Gemini CLI (pinned, see geminicli.py) against a fake Gemini
API on 127.0.0.1 (fakegemini.py, reached through `GOOGLE_GEMINI_BASE_URL`): which hooks
fire, what each gets on stdin, and what of their answers reaches the model.

One scenario for the module (about half a minute): a git repository whose
`.gemini/settings.json` registers a capture hook for every event; the hook appends its
stdin to a file and prints a scripted answer. `gemini -p … --yolo` runs one prompt that
the fake model answers with a `run_shell_command` call, then text; the AfterAgent hook
denies once, which makes the CLI send its reason as a new prompt. `gemini --resume
latest -p …` then runs a second prompt.

The payloads are compared with the samples in payloads/gemini-*.json (paths, ids and
long texts scrubbed); `JMEM_E2E_WRITE_PAYLOADS=1` rewrites them from this run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakegemini import FakeGemini
from geminicli import VERSION, command, environment, user_settings
from helpers import base_env, git

PAYLOADS = Path(__file__).parent / "payloads"
WRITE_PAYLOADS = os.environ.get("JMEM_E2E_WRITE_PAYLOADS") == "1"  # read before conftest clears it
EVENTS = ("SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel",
          "AfterModel", "BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress",
          "Notification")
# what a yolo run with one shell call fires (Notification is for permission prompts)
FIRED = set(EVENTS) - {"Notification"}
ANSWERS: dict[str, dict[str, Any]] = {
    "SessionStart": {"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": "MARKER-123 <b>start</b>"}},
    "BeforeAgent": {"hookSpecificOutput": {"hookEventName": "BeforeAgent",
                                           "additionalContext": "MARKER-456 from the prompt"}},
    "AfterTool": {"hookSpecificOutput": {"hookEventName": "AfterTool",
                                         "additionalContext": "MARKER-789 after the tool"}},
    # only while stop_hook_active is false: the CLI then sends the reason as a prompt
    "AfterAgent": {"decision": "deny", "reason": "MARKER-STOP keep going"},
}
HOOK = '''import json, os, sys
event = sys.argv[1]
raw = sys.stdin.read()
with open(sys.argv[2], "a") as out:
    out.write(json.dumps({"event": event, "stdin": raw}) + "\\n")
answers = json.load(open(sys.argv[3]))
answer = answers.get(event)
if event == "AfterAgent" and json.loads(raw).get("stop_hook_active"):
    answer = None
print(json.dumps(answer or {}))
'''


class Run:
    """The project, the fake API, each run's requests and what the hooks received."""

    def __init__(self, root: Path, cli: list[str]) -> None:
        self.root, self.cli = root, cli
        self.project = root / "proj"
        self.project.mkdir()
        git(self.project, "init", "-q")
        self.home = root / "home"
        (self.home / ".gemini").mkdir(parents=True)
        (self.home / ".gemini" / "settings.json").write_text(user_settings())
        self.capture = root / "capture.jsonl"
        answers = root / "answers.json"
        answers.write_text(json.dumps(ANSWERS))
        hook = root / "capture_hook.py"
        hook.write_text(HOOK)
        hooks = {event: [{"hooks": [{
            "type": "command", "name": f"capture-{event}",
            "command": f"{sys.executable} {hook} {event} {self.capture} {answers}"}]}]
            for event in EVENTS}
        (self.project / ".gemini").mkdir()
        (self.project / ".gemini" / "settings.json").write_text(
            json.dumps({"hooks": hooks}, indent=2))
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.payloads: dict[str, list[dict[str, Any]]] = {}
        self.out: dict[str, str] = {}
        self.times: dict[str, float] = {}

    def gemini(self, phase: str, api: FakeGemini, *args: str) -> None:
        before = len(api.requests)
        self.capture.write_text("")
        env = base_env(**environment(api.base_url, self.home))
        for key in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA",
                    "GOOGLE_CLOUD_PROJECT", "GOOGLE_VERTEX_BASE_URL"):
            env.pop(key, None)
        start = time.monotonic()
        proc = subprocess.run([*self.cli, *args], cwd=self.project, env=env,
                              capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL, check=False)
        self.times[phase] = time.monotonic() - start
        assert proc.returncode == 0, f"gemini {phase}: {proc.stdout}\n{proc.stderr}"
        self.out[phase] = proc.stdout + proc.stderr
        self.requests[phase] = [r for r in api.requests[before:]]
        self.payloads[phase] = [json.loads(line) for line in
                                self.capture.read_text().splitlines() if line]

    def scenario(self) -> None:
        with FakeGemini() as api:
            api.shell("RUN-THE-SHELL", "echo hello-from-shell")
            self.gemini("prompt", api, "--yolo", "-p", "please RUN-THE-SHELL now")
            self.gemini("resume", api, "--yolo", "--resume", "latest", "-p", "and again")

    def received(self, phase: str, event: str) -> list[dict[str, Any]]:
        return [json.loads(p["stdin"]) for p in self.payloads[phase] if p["event"] == event]

    def agent_calls(self, phase: str) -> list[dict[str, Any]]:
        """The agent's own model requests (streamed, with tools), not the router's."""
        return [r["body"] for r in self.requests[phase]
                if ":streamGenerateContent" in r["path"] and r["body"].get("tools")]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    cli, why = command()
    if cli is None:
        print(f"gemini e2e skipped: {why}")
        pytest.skip(why)
    result = Run(tmp_path_factory.mktemp("gemini"), cli)
    result.scenario()
    return result


def scrub(value: Any, root: Path) -> Any:
    """A payload with the run's paths, ids, times and long texts replaced."""
    text = json.dumps(value)
    text = text.replace(str(root.resolve()), "<tmp>").replace(str(root), "<tmp>")
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", text)
    text = re.sub(r"session-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-[0-9a-f]{8}", "session-<time>-<id>",
                  text)
    text = re.sub(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", "<timestamp>", text)

    def cut(item: Any) -> Any:
        if isinstance(item, str) and len(item) > 240:
            return item[:200] + f"… ({len(item)} chars)"
        if isinstance(item, list):
            return [cut(i) for i in item]
        if isinstance(item, dict):
            return {k: cut(v) for k, v in item.items()}
        return item
    return cut(json.loads(text))


def test_every_hook_fires_with_the_recorded_payload(run: Run) -> None:
    seen = {p["event"] for p in run.payloads["prompt"]}
    assert seen == FIRED, seen
    for event in sorted(FIRED):
        got = run.received("prompt", event)
        sample = PAYLOADS / f"gemini-{event}.json"
        if WRITE_PAYLOADS:
            PAYLOADS.mkdir(exist_ok=True)
            sample.write_text(json.dumps({
                "client": f"Gemini CLI {VERSION} (@google/gemini-cli)",
                "source": "captured by tests/e2e/test_gemini_hooks.py (gemini -p --yolo)",
                "fired": len(got),
                "stdin": scrub(got[0], run.root),
                "answer": ANSWERS.get(event)}, indent=2, ensure_ascii=False) + "\n")
        recorded = json.loads(sample.read_text())["stdin"]
        for payload in got:
            assert set(payload) == set(recorded), (event, sorted(payload))
            assert payload["hook_event_name"] == event
    assert run.received("prompt", "SessionStart")[0]["source"] == "startup"
    # headless, SessionStart's context is already in the prompt BeforeAgent is given
    prompt = run.received("prompt", "BeforeAgent")[0]["prompt"]
    assert prompt.startswith("<hook_context>MARKER-123") and \
        prompt.endswith("\n\nplease RUN-THE-SHELL now"), prompt
    tool = run.received("prompt", "AfterTool")[0]
    assert tool["tool_name"] == "run_shell_command"
    assert tool["tool_input"]["command"] == "echo hello-from-shell"
    ends = [a["stop_hook_active"] for a in run.received("prompt", "AfterAgent")]
    assert ends == [False, True], ends


def test_resume_starts_a_session_with_source_resume(run: Run) -> None:
    assert [s["source"] for s in run.received("resume", "SessionStart")] == ["resume"]


def test_the_answers_reach_the_model(run: Run) -> None:
    """SessionStart's context is put before the prompt, `<` and `>` escaped; BeforeAgent's
    after it; both in `<hook_context>`; AfterTool's joins the tool's answer; the AfterAgent
    reason comes as the next user turn."""
    calls = run.agent_calls("prompt")
    print(f"gemini cli {VERSION}: prompt {run.times['prompt']:.1f}s, "
          f"resume {run.times['resume']:.1f}s; {len(run.requests['prompt'])} requests")
    first = json.dumps(calls[0]["contents"][-1])
    assert "<hook_context>MARKER-123 &lt;b&gt;start&lt;/b&gt;</hook_context>" in first
    assert first.index("MARKER-123") < first.index("please RUN-THE-SHELL") \
        < first.index("MARKER-456")
    after_tool = [c for c in calls if "functionResponse" in json.dumps(c["contents"][-1])]
    assert after_tool and "MARKER-789" in json.dumps(after_tool[0]["contents"][-1])
    assert any("MARKER-STOP keep going" in json.dumps(c["contents"][-1]) for c in calls)


def test_what_a_resumed_session_sends(run: Run) -> None:
    """Resumed (0.61.0), the old turns come back from the transcript without the first
    user prompt (and with it the first SessionStart context); the new SessionStart's
    context is put before the new prompt: the model sees the marker once."""
    contents = json.dumps(run.agent_calls("resume")[0]["contents"])
    assert contents.count("MARKER-123") == 1, contents.count("MARKER-123")
    assert "please RUN-THE-SHELL now" not in contents
    assert "MARKER-STOP keep going" in contents and "and again" in contents
