"""End to end with the real Codex CLI (pinned, see codexcli.py) against a fake OpenAI
Responses API on 127.0.0.1 (fakeopenai.py): which hooks fire, what each gets on stdin,
and what of their answers reaches the model.

One scenario for the module (a few seconds): a git repository whose `.codex/hooks.json`
registers a capture hook for SessionStart, UserPromptSubmit, PreToolUse, PostToolUse and
Stop. The hook appends its stdin to a file and prints a scripted answer. `$CODEX_HOME`
trusts the project and records each hook's trust hash (as reviewing them in Codex
does), so no `--dangerously-bypass-hook-trust` is needed. `codex exec` runs one prompt
that the fake model answers with a shell call, then text; the Stop hook blocks once.
`codex exec resume --last` then runs a second prompt.

The payloads are compared with the samples in payloads/codex-*.json (paths and ids
scrubbed); `JMEM_E2E_WRITE_PAYLOADS=1` rewrites them from this run.
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
from codexcli import VERSION, binary, hook_trust, user_config
from fakeopenai import FakeOpenAI
from helpers import base_env, git

PAYLOADS = Path(__file__).parent / "payloads"
# read at import: the autouse fixture of tests/conftest.py clears JMEM_* in each test
WRITE_PAYLOADS = os.environ.get("JMEM_E2E_WRITE_PAYLOADS") == "1"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
ANSWERS: dict[str, dict[str, Any]] = {
    "SessionStart": {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                            "additionalContext": "MARKER-123 from SessionStart"}},
    "UserPromptSubmit": {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "MARKER-456 from the prompt"}},
    "PostToolUse": {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                           "additionalContext": "MARKER-789 after the tool"}},
    # only while stop_hook_active is false: Codex then runs one more model request
    "Stop": {"decision": "block", "reason": "MARKER-STOP keep going"},
}
HOOK = '''import json, os, sys
event = sys.argv[1]
raw = sys.stdin.read()
with open(os.environ["CAPTURE_FILE"], "a") as out:
    out.write(json.dumps({"event": event, "stdin": raw}) + "\\n")
answers = json.load(open(os.environ["ANSWERS_FILE"]))
answer = answers.get(event)
if event == "Stop" and json.loads(raw).get("stop_hook_active"):
    answer = None
if answer:
    print(json.dumps(answer))
'''


class Run:
    """The project, the fake API, each run's requests and what the hooks received."""

    def __init__(self, root: Path, exe: Path) -> None:
        self.root, self.exe = root, exe
        self.project = root / "proj"
        self.project.mkdir()
        git(self.project, "init", "-q")
        self.home = root / "codex-home"
        self.home.mkdir()
        self.capture = root / "capture.jsonl"
        (root / "answers.json").write_text(json.dumps(ANSWERS))
        hook = root / "capture_hook.py"
        hook.write_text(HOOK)
        self.hooks: dict[str, list[dict[str, Any]]] = {
            event: [{"hooks": [{"type": "command",
                                "command": f"{sys.executable} {hook} {event}"}]}]
            for event in EVENTS}
        self.hooks["PreToolUse"][0]["matcher"] = "Bash"
        self.hooks["PostToolUse"][0]["matcher"] = "Bash"
        (self.project / ".codex").mkdir()
        self.hooks_json = self.project / ".codex" / "hooks.json"
        self.hooks_json.write_text(json.dumps({"hooks": self.hooks}, indent=2))
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.payloads: dict[str, list[dict[str, Any]]] = {}
        self.out: dict[str, str] = {}
        self.times: dict[str, float] = {}
        self.env = base_env(HOME=str(root), CODEX_HOME=str(self.home),
                            FAKE_OPENAI_KEY="sk-test-fake", CAPTURE_FILE=str(self.capture),
                            ANSWERS_FILE=str(root / "answers.json"), NO_COLOR="1")
        for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"):
            self.env.pop(key, None)

    def codex(self, phase: str, api: FakeOpenAI, *args: str) -> None:
        before = len(api.requests)
        self.capture.write_text("")
        start = time.monotonic()
        proc = subprocess.run([str(self.exe), *args], cwd=self.project, env=self.env,
                              capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL, check=False)
        self.times[phase] = time.monotonic() - start
        assert proc.returncode == 0, f"codex {phase}: {proc.stdout}\n{proc.stderr}"
        self.out[phase] = proc.stdout
        self.requests[phase] = [r["body"] for r in api.requests[before:]]
        self.payloads[phase] = [json.loads(line) for line in
                                self.capture.read_text().splitlines() if line]

    def scenario(self) -> None:
        with FakeOpenAI() as api:
            api.shell("RUN-THE-SHELL", "echo hello-from-shell")
            (self.home / "config.toml").write_text(user_config(
                api.base_url, self.project, trusted_hooks=hook_trust(self.hooks_json,
                                                                     self.hooks)))
            self.codex("exec", api, "exec", "--json", "please RUN-THE-SHELL now")
            self.codex("resume", api, "exec", "resume", "--last", "--json", "and again")

    def received(self, phase: str, event: str) -> list[dict[str, Any]]:
        return [json.loads(p["stdin"]) for p in self.payloads[phase] if p["event"] == event]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    exe, why = binary()
    if exe is None:
        print(f"codex e2e skipped: {why}")
        pytest.skip(why)
    result = Run(tmp_path_factory.mktemp("codex"), exe)
    result.scenario()
    return result


def scrub(value: Any, root: Path) -> Any:
    """A payload with the run's paths, ids and dates replaced by placeholders."""
    text = json.dumps(value)
    text = text.replace(str(root.resolve()), "<tmp>").replace(str(root), "<tmp>")
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", text)
    text = re.sub(r"\d{4}/\d{2}/\d{2}/rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}",
                  "<yyyy/mm/dd>/rollout-<time>", text)
    return json.loads(text)


def text_of(body: dict[str, Any]) -> str:
    return json.dumps(body.get("input", []))


def test_every_hook_fires_with_the_recorded_payload(run: Run) -> None:
    seen = {p["event"] for p in run.payloads["exec"]}
    assert seen == set(EVENTS), seen
    for event in EVENTS:
        got = run.received("exec", event)
        sample = PAYLOADS / f"codex-{event}.json"
        if WRITE_PAYLOADS:
            PAYLOADS.mkdir(exist_ok=True)
            sample.write_text(json.dumps({
                "client": f"Codex CLI {VERSION} (@openai/codex, linux-x64)",
                "source": "captured by tests/e2e/test_codex_hooks.py (codex exec)",
                "stdin": scrub(got[0], run.root),
                "answer": ANSWERS.get(event)}, indent=2) + "\n")
        recorded = json.loads(sample.read_text())["stdin"]
        for payload in got:
            assert set(payload) == set(recorded), (event, sorted(payload))
            assert payload["hook_event_name"] == event
            assert Path(payload["cwd"]).resolve() == run.project.resolve()
    start = run.received("exec", "SessionStart")[0]
    assert start["source"] == "startup"
    assert run.received("exec", "UserPromptSubmit")[0]["prompt"] == "please RUN-THE-SHELL now"
    pre, post = run.received("exec", "PreToolUse")[0], run.received("exec", "PostToolUse")[0]
    assert pre["tool_name"] == post["tool_name"] == "Bash"
    assert pre["tool_input"] == {"command": "echo hello-from-shell"}
    assert "hello-from-shell" in post["tool_response"]
    stops = run.received("exec", "Stop")
    assert [s["stop_hook_active"] for s in stops] == [False, True]


def test_resume_starts_a_session_with_source_resume(run: Run) -> None:
    starts = run.received("resume", "SessionStart")
    assert [s["source"] for s in starts] == ["resume"]
    assert starts[0]["session_id"] == run.received("exec", "SessionStart")[0]["session_id"]


def test_the_answers_reach_the_model_as_developer_messages(run: Run) -> None:
    first, after_tool, after_stop = run.requests["exec"]
    for marker in ("MARKER-123", "MARKER-456"):
        found = [i for i in first["input"] if marker in json.dumps(i)]
        assert len(found) == 1 and found[0]["role"] == "developer", found
    assert "MARKER-789" not in text_of(first)
    assert text_of(after_tool).count("MARKER-789") == 1
    blocked = [i for i in after_stop["input"] if "MARKER-STOP" in json.dumps(i)]
    assert len(blocked) == 1 and blocked[0]["role"] == "user"
    assert blocked[0]["content"][0]["text"].startswith("<hook_prompt ")


def test_what_a_resumed_session_sends(run: Run) -> None:
    """On resume the old SessionStart context is replayed from the transcript and the
    new SessionStart answer is added: the model sees the marker twice."""
    body = run.requests["resume"][0]
    print(f"codex {VERSION}: exec {run.times['exec']:.1f}s, resume {run.times['resume']:.1f}s")
    assert text_of(body).count("MARKER-123") == 2
