"""The hook events journal-mem builds on, as the real Claude Code CLI (claudecode.py) fires
them: what runs for a batch of parallel tool calls, a failed call, a background subagent,
a fork and a compaction. Needs no journal-mem: every event runs `capture_hook.py`, which
logs its stdin (and, for some events, answers with a context labelled `CAPTURED …`).

One session, resumed for each phase (about half a minute):
  read4       four `Read` calls in one assistant message (one batch)
  write2      two `Write` calls in one message
  fail        a `Read` of a missing file
  background  an `Agent` call with `run_in_background: true`, whose first answer the fake
              API holds back until the parent's Stop hook has run
  fork        an `Agent` call with `subagent_type: "fork"`
  compact     `/compact`

What 2.1.332 did (the tests below hold it to that):
* read4: PreToolUse x4, PostToolUse x4 — the four hook processes run at the same time
  (each sleeps 1.5 s; all four were running at once), each call's PostToolUse after
  its PreToolUse but the calls' hooks unordered — then PostToolBatch once, with
  all four `tool_calls`, after the last PostToolUse ended; then Stop. The next request
  holds the four tool_use blocks and four tool_result blocks, and a system turn with
  four `PostToolUse:Read` contexts and one `PostToolBatch` context.
* write2: the calls are not concurrency-safe, so they run one after the other:
  PreToolUse, PostToolUse, PreToolUse, PostToolUse, then PostToolBatch once.
  (A Bash batch behaves the same way: `echo`/`ls` run in parallel, `touch` in turn.)
* fail: PreToolUse, PostToolUseFailure (`error`, `is_interrupt`; no PostToolUse), then
  PostToolBatch, whose `tool_response` is the error text. Context label
  `PostToolUseFailure:Read`; the tool_result has `is_error: true`.
* background: SubagentStart and PostToolUse of `Agent` (in either order;
  `tool_response.status` `async_launched`), PostToolBatch, then Stop with
  `background_tasks: [{"id": <agent_id>, "type": "subagent", "status": "running",
  "description", "agent_type"}]`; later
  SubagentStop (whose `background_tasks` still lists the agent as running), a
  UserPromptSubmit whose prompt is the `<task-notification>`, and a second Stop with
  `background_tasks: []`. `claude -p` waits for the subagent before it exits.
* fork: SubagentStart with `agent_type: "fork"` (no other field tells a fork); the fork
  runs in the background too; its first request is a subagent request holding the
  parent's whole conversation, every context injected so far, and then its own
  SubagentStart context.
* compact: PreCompact (`trigger: "manual"`, `custom_instructions`), two SubagentStop with
  `agent_type: ""` (the CLI's own helpers: the phase's two requests, not marked as a
  subagent's, share the parent's whole conversation; no transcript of them is kept
  under `subagents/`), SessionStart `source: "compact"`, PostCompact (`trigger`,
  `compact_summary`). A SubagentStop hook must expect an empty `agent_type`.
* UserPromptSubmit carries no `source` in 2.1.332, for `-p`, stream-json input and the
  task notification alike: the binary's schema lists it as optional, its code does not
  set it.

Real payloads of these events are kept, scrubbed, in `payloads/` for unit tests; a test
here checks they still have the shape the CLI sends. `JMEM_E2E_WRITE_PAYLOADS=1`
rewrites them from the run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from claudecode import PINNED, VERSION, binary, described
from fakeapi import FakeApi
from seen import hook_context, hook_contexts, places

HERE = Path(__file__).resolve().parent
HOOK = HERE / "capture_hook.py"
PAYLOADS = HERE / "payloads"
HOLD = 1.5  # seconds each PostToolUse hook sleeps: overlapping sleeps ran at once
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
          "PostToolBatch", "Notification", "SubagentStart", "SubagentStop", "Stop",
          "StopFailure", "PreCompact", "PostCompact", "SessionEnd")
ANSWERING = {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure",
             "PostToolBatch", "SubagentStart"}  # their hook answers with a CAPTURED context
SOURCES = {"user", "sdk", "system", "loop_wakeup", "schedule_wakeup", "poll_event"}


class Events:
    """The project, the fake API, and per phase the requests sent and the hooks run."""

    def __init__(self, root: Path, exe: Path) -> None:
        self.root, self.exe = root, exe
        self.project = root / "proj"
        self.log = root / "hooks.jsonl"
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.hooks: dict[str, list[dict[str, Any]]] = {}
        self.times: dict[str, float] = {}
        self.session = ""
        (root / "home").mkdir()
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.project)], check=True)
        for name in "abcd":
            (self.project / f"{name}.txt").write_text(f"file {name}\n")
        settings = {"hooks": {event: [{"hooks": [{"type": "command", "command": " ".join(
            shlex.quote(str(a)) for a in (sys.executable, HOOK, self.log,
                                          HOLD if event == "PostToolUse" else 0,
                                          int(event in ANSWERING)))}]}] for event in EVENTS}}
        (self.project / ".claude").mkdir()
        (self.project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=1))
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("JMEM_", "GIT_", "CLAUDE", "ANTHROPIC_"))}
        self.env.update(HOME=str(root / "home"), ANTHROPIC_API_KEY="sk-test-fake",
                        DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")

    def logged(self) -> list[dict[str, Any]]:
        """The hook runs so far; a line still being written (no newline yet) is left out."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().split("\n")[:-1]]

    def stopped_since(self, count: int) -> bool:
        return any(h["event"] == "Stop" for h in self.logged()[count:])

    def claude(self, api: FakeApi, phase: str, prompt: str, *args: str) -> None:
        start, first, seen = time.perf_counter(), len(api.requests), len(self.logged())
        resume = ["--resume", self.session] if self.session else []
        proc = subprocess.run([str(self.exe), "-p", prompt, *resume, *args, "--output-format",
                               "json"], cwd=self.project, env=self.env, capture_output=True,
                              text=True, timeout=180, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        self.session = json.loads(proc.stdout)["session_id"]
        self.times[phase] = time.perf_counter() - start
        self.requests[phase] = api.requests[first:]
        self.hooks[phase] = self.logged()[seen:]

    def run(self) -> None:
        project = self.project
        with FakeApi() as api:
            self.env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{api.port}"
            api.parallel("READ4", *[("Read", {"file_path": str(project / f"{n}.txt")})
                                    for n in "abcd"])
            api.parallel("WRITE2", *[("Write", {"file_path": str(project / f"new-{n}.txt"),
                                                "content": f"new {n}\n"}) for n in "ab"])
            api.calls["FAILREAD"] = ("Read", {"file_path": str(project / "missing.txt")})
            api.delegate("BACKGROUND", "general-purpose", prompt="SLOWTASK count to three",
                         background=True)
            api.fork("FORKIT", prompt="FORKTASK look around")
            self.claude(api, "read4", "please READ4")
            self.claude(api, "write2", "please WRITE2", "--permission-mode", "acceptEdits")
            self.claude(api, "fail", "please FAILREAD")
            # the subagent's first answer waits for the parent's Stop hook of this turn
            count = len(self.logged())
            api.hold("SLOWTASK", until=lambda: self.stopped_since(count))
            self.claude(api, "background", "please BACKGROUND")
            self.claude(api, "fork", "please FORKIT")
            self.claude(api, "compact", "/compact")

    def of(self, phase: str, event: str, **match: Any) -> list[dict[str, Any]]:
        """The payloads of `event` in `phase` whose fields have the values in `match`."""
        return [h["payload"] for h in self.hooks[phase] if h["event"] == event
                and all(h["payload"].get(k) == v for k, v in match.items())]


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Events:
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    world = Events(tmp_path_factory.mktemp("claude-events"), exe)
    world.run()
    if os.environ.get("JMEM_E2E_DUMP"):
        Path(os.environ["JMEM_E2E_DUMP"]).with_suffix(".events.json").write_text(
            json.dumps({"requests": world.requests, "hooks": world.hooks}, indent=1))
    if os.environ.get("JMEM_E2E_WRITE_PAYLOADS"):
        write_payloads(world)
    print(f"\nclaude code {described()} events: " + ", ".join(
        f"{k} {v:.1f} s" for k, v in world.times.items()))
    return world


def names(hooks: list[dict[str, Any]]) -> list[str]:
    """`Event` or `Event:tool` of each hook run, in the order they started."""
    return [h["event"] + (f":{h['payload']['tool_name']}" if "tool_name" in h["payload"]
                          else "") for h in sorted(hooks, key=lambda h: h["start"])]


def main_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if "cc_is_subagent=true" not in json.dumps(r.get("system"))]


def tool_blocks(request: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for m in request["messages"] if isinstance(m["content"], list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == kind]


def test_four_parallel_reads_are_one_batch_with_a_result_each(events: Events) -> None:
    hooks = events.hooks["read4"]
    order = names(hooks)  # the calls run side by side: their Pre and Post hooks may mix
    assert order[:2] == ["SessionStart", "UserPromptSubmit"], order
    assert sorted(order[2:10]) == [*["PostToolUse:Read"] * 4, *["PreToolUse:Read"] * 4]
    assert order[10:] == ["PostToolBatch", "Stop", "SessionEnd"], order
    ids = [p["tool_use_id"] for p in events.of("read4", "PreToolUse")]
    assert len(set(ids)) == 4
    assert {p["tool_use_id"] for p in events.of("read4", "PostToolUse")} == set(ids)
    for tool_use in ids:  # each call: its PreToolUse hook ended before its PostToolUse began
        pre, post = [h for h in hooks if h["payload"].get("tool_use_id") == tool_use]
        assert pre["event"] == "PreToolUse" and post["start"] >= pre["end"]
    [batch] = events.of("read4", "PostToolBatch")
    assert sorted(c["tool_use_id"] for c in batch["tool_calls"]) == sorted(ids)
    assert {c["tool_response"] for c in batch["tool_calls"]} == \
        {f"1\tfile {n}\n2\t" for n in "abcd"}
    after = [r for r in main_requests(events.requests["read4"])
             if {b["tool_use_id"] for b in tool_blocks(r, "tool_result")} >= set(ids)]
    assert after, "no request carried the four tool results"
    uses = tool_blocks(after[0], "tool_use")
    results = tool_blocks(after[0], "tool_result")
    assert sorted(b["id"] for b in uses) == sorted(ids) and len(results) == 4
    assert not any(b.get("is_error") for b in results)


def test_post_tool_use_hooks_of_a_batch_of_reads_run_at_the_same_time(events: Events) -> None:
    posts = [h for h in events.hooks["read4"] if h["event"] == "PostToolUse"]
    assert len(posts) == 4 and len({h["pid"] for h in posts}) == 4
    assert max(h["start"] for h in posts) < min(h["end"] for h in posts), \
        "the four PostToolUse hooks were not all running at one moment"
    [batch] = [h for h in events.hooks["read4"] if h["event"] == "PostToolBatch"]
    assert batch["start"] >= max(h["end"] for h in posts)  # after every PostToolUse


def test_a_batch_of_writes_runs_one_call_and_its_hook_after_the_other(events: Events) -> None:
    hooks = events.hooks["write2"]
    assert names(hooks) == ["SessionStart", "UserPromptSubmit", "PreToolUse:Write",
                            "PostToolUse:Write", "PreToolUse:Write", "PostToolUse:Write",
                            "PostToolBatch", "Stop", "SessionEnd"]
    first, second = [h for h in hooks if h["event"] == "PostToolUse"]
    assert second["start"] >= first["end"]
    assert (events.project / "new-a.txt").read_text() == "new a\n"
    [batch] = events.of("write2", "PostToolBatch")
    assert [c["tool_name"] for c in batch["tool_calls"]] == ["Write", "Write"]


def test_tool_hook_context_comes_in_a_system_turn_labelled_per_tool(events: Events) -> None:
    ids = {p["tool_use_id"] for p in events.of("read4", "PreToolUse")}
    after = next(r for r in main_requests(events.requests["read4"])
                 if ids <= {b["tool_use_id"] for b in tool_blocks(r, "tool_result")})
    reads = hook_contexts(after, "PostToolUse", "Read")
    assert [(c.label, c.text) for c in reads] == [("PostToolUse:Read",
                                                   "CAPTURED PostToolUse Read")] * 4
    assert hook_context(after, "PostToolBatch") == "CAPTURED PostToolBatch"
    assert hook_context(after, "UserPromptSubmit") == "CAPTURED UserPromptSubmit"
    roles = {c.place.split(" ", 1)[1] for c in hook_contexts(after, "PostToolUse")}
    assert roles == {"(system)"}, roles
    assert not any("hook additional context" in t for p, t in places(after)
                   if not p.endswith("(system)"))


def test_a_failed_call_fires_post_tool_use_failure_with_its_context(events: Events) -> None:
    assert names(events.hooks["fail"]) == [
        "SessionStart", "UserPromptSubmit", "PreToolUse:Read", "PostToolUseFailure:Read",
        "PostToolBatch", "Stop", "SessionEnd"]
    [failure] = events.of("fail", "PostToolUseFailure")
    assert "does not exist" in failure["error"] and failure["is_interrupt"] is False
    last = main_requests(events.requests["fail"])[-1]
    [result] = [b for b in tool_blocks(last, "tool_result")
                if b["tool_use_id"] == failure["tool_use_id"]]
    assert result["is_error"] is True
    found = hook_contexts(last, "PostToolUseFailure", "Read")
    assert [c.label for c in found] == ["PostToolUseFailure:Read"]
    assert found[0].text == "CAPTURED PostToolUseFailure Read"


def test_stop_fires_while_a_background_subagent_still_runs(events: Events) -> None:
    hooks = names(events.hooks["background"])
    assert hooks[:3] == ["SessionStart", "UserPromptSubmit", "PreToolUse:Agent"], hooks
    # the subagent starts while the call returns: these two start in either order
    assert sorted(hooks[3:5]) == ["PostToolUse:Agent", "SubagentStart"], hooks
    assert hooks[5:] == ["PostToolBatch", "Stop", "SubagentStop", "UserPromptSubmit", "Stop",
                         "SessionEnd"], hooks
    [start] = events.of("background", "SubagentStart")
    [launched] = events.of("background", "PostToolUse", tool_name="Agent")
    assert launched["tool_input"]["run_in_background"] is True
    assert launched["tool_response"]["status"] == "async_launched"
    assert launched["tool_response"]["agentId"] == start["agent_id"]
    first, last = events.of("background", "Stop")
    assert first["background_tasks"] == [{
        "id": start["agent_id"], "type": "subagent", "status": "running",
        "description": "check memory", "agent_type": "general-purpose"}]
    assert last["background_tasks"] == [] and last["session_crons"] == []
    [notified] = events.of("background", "UserPromptSubmit")[1:]
    assert notified["prompt"].startswith("<task-notification>")
    assert f"<task-id>{start['agent_id']}</task-id>" in notified["prompt"]


def test_a_fork_subagent_starts_with_the_parents_conversation(events: Events) -> None:
    [start] = events.of("fork", "SubagentStart")
    assert start["agent_type"] == "fork"
    assert set(start) == {"session_id", "transcript_path", "cwd", "prompt_id", "agent_id",
                          "agent_type", "hook_event_name"}
    [forked] = [r for r in events.requests["fork"]
                if "cc_is_subagent=true" in json.dumps(r.get("system"))]
    whole = json.dumps(forked)
    assert "please FORKIT" in whole and "FORKTASK look around" in whole
    assert "please READ4" in whole  # the whole conversation, not only this turn
    assert hook_context(forked, "SubagentStart") == "CAPTURED SubagentStart fork"
    [stop] = events.of("fork", "SubagentStop", agent_id=start["agent_id"])
    assert stop["agent_type"] == "fork"
    assert len(hook_contexts(forked, "PostToolUse", "Read")) == 4  # the parent's contexts


def test_compaction_fires_pre_compact_a_compact_start_and_post_compact(events: Events) -> None:
    hooks = names(events.hooks["compact"])
    assert [h for h in hooks if h != "SubagentStop"] == [
        "SessionStart", "PreCompact", "SessionStart", "PostCompact", "SessionEnd"], hooks
    assert [s["agent_type"] for s in events.of("compact", "SubagentStop")] == ["", ""]
    [pre] = events.of("compact", "PreCompact")
    assert pre["trigger"] == "manual"
    assert [s["source"] for s in events.of("compact", "SessionStart")] == ["resume", "compact"]
    [post] = events.of("compact", "PostCompact")
    assert post["trigger"] == "manual" and isinstance(post["compact_summary"], str)


def test_user_prompt_submit_says_who_sent_the_prompt_only_with_a_known_source(
        events: Events) -> None:
    prompts = [p for phase in events.hooks for p in events.of(phase, "UserPromptSubmit")]
    assert len(prompts) >= 6
    for payload in prompts:
        assert payload.get("source", "user") in SOURCES, payload.get("source")
        assert {"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode",
                "hook_event_name", "prompt"} <= set(payload)
    if VERSION == PINNED:
        assert not any("source" in p for p in prompts)  # 2.1.332 does not set it


# --- the kept payloads: real shapes for unit tests ---

# file in payloads/ -> (phase, event, fields the payload must have, index among matches)
CAPTURES: dict[str, tuple[str, str, dict[str, Any], int]] = {
    "user_prompt_submit.json": ("read4", "UserPromptSubmit", {}, 0),
    "user_prompt_submit_task_notification.json": ("background", "UserPromptSubmit", {}, 1),
    "session_start_resume.json": ("write2", "SessionStart", {}, 0),
    "session_start_compact.json": ("compact", "SessionStart", {"source": "compact"}, 0),
    "post_tool_use_read.json": ("read4", "PostToolUse", {}, 0),
    "post_tool_use_write.json": ("write2", "PostToolUse", {}, 0),
    "post_tool_use_agent_background.json": ("background", "PostToolUse", {}, 0),
    "post_tool_batch.json": ("read4", "PostToolBatch", {}, 0),
    "post_tool_use_failure.json": ("fail", "PostToolUseFailure", {}, 0),
    "stop.json": ("read4", "Stop", {}, 0),
    "stop_background_tasks.json": ("background", "Stop", {}, 0),
    "subagent_start.json": ("background", "SubagentStart", {}, 0),
    "subagent_stop_background.json": ("background", "SubagentStop", {}, 0),
    "subagent_start_fork.json": ("fork", "SubagentStart", {"agent_type": "fork"}, 0),
    "pre_compact.json": ("compact", "PreCompact", {}, 0),
    "post_compact.json": ("compact", "PostCompact", {}, 0),
}


def captured(world: Events, name: str) -> dict[str, Any]:
    phase, event, match, index = CAPTURES[name]
    return world.of(phase, event, **match)[index]


def scrub(data: Any, world: Events) -> Any:
    """The payloads with the run's paths and ids replaced by fixed ones."""
    text = json.dumps(data, indent=1, ensure_ascii=False)
    root = str(world.root)
    text = text.replace(root, "/tmp/e2e").replace(root.replace("/", "-"), "-tmp-e2e")
    text = re.sub(r"/tmp/claude-\d+/", "/tmp/claude-1000/", text)
    ids: dict[str, str] = {}
    for found in re.findall(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
                            text):
        ids.setdefault(found, f"00000000-0000-4000-8000-{len(ids) + 1:012d}")
    for found in re.findall(r"\ba[0-9a-f]{16}\b", text):
        ids.setdefault(found, f"a{len(ids) + 1:016d}")
    for old, new in ids.items():
        text = text.replace(old, new)
    return json.loads(text)


def write_payloads(world: Events) -> None:
    PAYLOADS.mkdir(exist_ok=True)
    everything = scrub({name: captured(world, name) for name in CAPTURES}, world)
    for name, payload in everything.items():
        (PAYLOADS / name).write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")


def shape(data: Any) -> Any:
    """Keys and kinds of values, recursively: what a parser depends on."""
    if isinstance(data, dict):
        return {k: shape(v) for k, v in sorted(data.items())}
    if isinstance(data, list):
        return [shape(data[0])] if data else []
    if isinstance(data, bool) or data is None:
        return repr(data) if data is None else "bool"
    return "number" if isinstance(data, int | float) else type(data).__name__


def test_the_kept_payloads_have_the_shape_the_cli_sends(events: Events) -> None:
    kept = sorted(p.name for p in claude_payloads())
    assert kept == sorted(CAPTURES), "payloads/ and CAPTURES disagree"
    changed = [name for name in CAPTURES
               if shape(json.loads((PAYLOADS / name).read_text())) !=
               shape(captured(events, name))]
    assert not changed, (f"Claude Code {described()} sends another shape for {changed}: "
                         "see docs/claude-code-e2e.md (JMEM_E2E_WRITE_PAYLOADS=1)")


def claude_payloads() -> list[Path]:
    """Claude Code's captures (the other clients' samples are named after the client)."""
    return sorted(p for p in PAYLOADS.glob("*.json")
                  if not p.name.startswith(("codex-", "gemini-", "cursor-", "copilot-")))


def test_the_kept_payloads_hold_no_path_of_the_machine_that_made_them() -> None:
    for path in claude_payloads():
        text = path.read_text()
        assert "pytest-of-" not in text and str(Path.home()) not in text, path.name
        for found in re.findall(r"/tmp/[^\s\"<>]*", text):
            assert found.startswith(("/tmp/e2e/", "/tmp/claude-1000/")), (path.name, found)
        assert json.loads(text)["hook_event_name"] in EVENTS


def test_a_settings_file_naming_an_event_the_client_lacks_keeps_the_other_hooks(
        tmp_path: Path) -> None:
    """`jmem init` names PostToolBatch and PostToolUseFailure, which older clients lack:
    a client ignores the events it does not know and runs the others. Checked here with
    a made-up event on the pinned client; 2.1.110 (whose binary holds no
    "PostToolBatch") behaved the same way, run by hand (docs/claude-code.md)."""
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    world = Events(tmp_path, exe)
    settings_path = world.project / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    settings["hooks"]["EventFromAFutureRelease"] = settings["hooks"]["Stop"]
    settings_path.write_text(json.dumps(settings, indent=1))
    with FakeApi() as api:
        world.env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{api.port}"
        world.claude(api, "plain", "hello")
    ran = names(world.hooks["plain"])
    assert ran[:2] == ["SessionStart", "UserPromptSubmit"] and "Stop" in ran, ran
    first = main_requests(world.requests["plain"])[0]
    assert "CAPTURED" in hook_context(first, "SessionStart")
