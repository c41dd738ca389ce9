"""End to end with the real Claude Code CLI (claudecode.py): journal-mem's hooks under
parallel tool calls, a background subagent and a fork subagent.

One session in a repository set up with `jmem init` (agent `main`), resumed for each
phase (about a minute):
  start       a first prompt: the pack
  read4       a correction is written after the prompt's hooks ran, then the model makes
              four `Read` calls in one message (their PostToolUse hooks run at once)
  read16      the same with another correction and sixteen `Read` calls
  background  an `Edit`-like `Write` and a background `Agent` call in one message; the
              subagent's first answer waits until the parent's first Stop hook ran
  fork        an `Agent` call with `subagent_type: "fork"`

Besides journal-mem's hooks, `capture_hook.py` logs every Stop, SubagentStart and
SubagentStop, and the `jmem` on PATH logs when each hook process started and ended
(the timings printed with the test output).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from claudecode import binary, described
from fakeapi import FakeApi
from helpers import REPO_ROOT, base_env, git, jmem, make_repo
from seen import hook_contexts

# the two corrections written mid-turn: about different facts, so neither marks the other
FIRST = "The cache port moved to 6390"
SECOND = "Builds now run with make -j8"

HERE = Path(__file__).resolve().parent
MEM = Path(".claude/agent-memory")
REMINDER = "record what you LEARNED in this session"
CAPTURED = ("Stop", "SubagentStart", "SubagentStop")


class Session:
    """The repository, the fake API, and per phase the requests sent and hooks run."""

    def __init__(self, root: Path, exe: Path) -> None:
        self.root, self.exe = root, exe
        self.main = make_repo(root / "main")
        self.log = root / "hooks.jsonl"
        self.times_file = root / "jmem-times.txt"
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.hooks: dict[str, list[dict[str, Any]]] = {}
        self.procs: dict[str, list[tuple[float, float, str]]] = {}
        self.injected: dict[str, list[dict[str, Any]]] = {}
        self.took: dict[str, float] = {}
        self.session = ""
        bin_dir = root / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "jmem"  # this checkout's code, each process's start and end logged
        shim.write_text(
            "#!/bin/sh\ns=$(date +%s%N)\n"
            f"PYTHONPATH={shlex.quote(str(REPO_ROOT))} {shlex.quote(sys.executable)} "
            "-m journal_mem \"$@\"\nrc=$?\n"
            f"echo \"$s $(date +%s%N) $*\" >> {shlex.quote(str(self.times_file))}\n"
            "exit $rc\n")
        shim.chmod(0o755)
        (root / "home").mkdir()
        self.env = base_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                            HOME=str(root / "home"), ANTHROPIC_API_KEY="sk-test-fake",
                            DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                            DISABLE_AUTOUPDATER="1")

    def setup(self) -> None:
        main = self.main
        proc = jmem(main, "init", "--agent", "main", "--agent", "ops", "--no-git-hooks",
                    env=self.env)
        assert proc.returncode == 0, proc.stderr
        (main / MEM / "main" / "MEMORY.md").write_text(
            "# main\n- Main fact 🐍 [mn-one]\n- Other fact [mn-two]\n")
        for i in range(16):
            (main / f"f{i}.txt").write_text(f"file {i}\n")
        settings_path = main / ".claude" / "settings.json"
        settings = json.loads(settings_path.read_text())
        for event in CAPTURED:  # next to journal-mem's own hooks
            settings["hooks"].setdefault(event, []).append({"hooks": [{
                "type": "command", "command": " ".join(shlex.quote(str(a)) for a in (
                    sys.executable, HERE / "capture_hook.py", self.log))}]})
        settings_path.write_text(json.dumps(settings, indent=1))
        git(main, "add", "-A")
        git(main, "commit", "-qm", "journal-mem")
        proc = jmem(main, "write", "--agent", "ops", "--applies-to", "all", "--topic", "ops",
                    "--title", "Team wide lesson", "--body", "For every agent.", env=self.env)
        assert proc.returncode == 0, proc.stderr

    def write(self, title: str, *extra: str) -> None:
        """A correction for `main` written by another agent (the session's own lesson would
        stop its reminder)."""
        proc = jmem(self.main, "write", "--agent", "ops", "--applies-to", "main", "--topic",
                    "ops", "--title", title, *extra, "--body", "Why it holds.", env=self.env)
        assert proc.returncode == 0, proc.stderr

    def logged(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().split("\n")[:-1]]

    def ran(self) -> list[tuple[float, float, str]]:
        """(start, end, arguments) of every jmem hook process so far."""
        if not self.times_file.exists():
            return []
        out = []
        for line in self.times_file.read_text().splitlines():
            start, end, args = line.split(" ", 2)
            out.append((int(start) / 1e9, int(end) / 1e9, args))
        return out

    def claude(self, api: FakeApi, phase: str, prompt: str, *args: str) -> None:
        begin, first = time.perf_counter(), len(api.requests)
        seen, procs, told = len(self.logged()), len(self.ran()), len(self.injections())
        resume = ["--resume", self.session] if self.session else []
        proc = subprocess.run([str(self.exe), "-p", prompt, *resume, *args, "--output-format",
                               "json"], cwd=self.main, env=self.env, capture_output=True,
                              text=True, timeout=240, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        self.session = json.loads(proc.stdout)["session_id"]
        self.took[phase] = time.perf_counter() - begin
        self.requests[phase] = api.requests[first:]
        self.hooks[phase] = self.logged()[seen:]
        self.procs[phase] = self.ran()[procs:]
        self.injected[phase] = self.injections()[told:]

    def injections(self) -> list[dict[str, Any]]:
        """journal-mem's session log: what each hook injected (`status --sessions`)."""
        log = self.main / ".git" / "journal-mem" / "logs" / "sessions.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] \
            if log.exists() else []

    def stopped_since(self, count: int) -> bool:
        return any(h["event"] == "Stop" for h in self.logged()[count:])

    def run(self) -> None:
        self.setup()
        main = self.main
        with FakeApi() as api:
            self.env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{api.port}"
            api.parallel("READ4", *[("Read", {"file_path": str(main / f"f{i}.txt")})
                                    for i in range(4)])
            api.parallel("READ16", *[("Read", {"file_path": str(main / f"f{i}.txt")})
                                     for i in range(16)])
            api.before("READ4", lambda: self.write(FIRST, "--supersedes", "mn-one"))
            api.before("READ16", lambda: self.write(SECOND, "--supersedes",
                                                    "mn-two"))
            api.parallel("BGWORK", ("Write", {"file_path": str(main / "notes.txt"),
                                              "content": "notes\n"}),
                         ("Agent", {"description": "check memory", "subagent_type":
                                    "general-purpose", "prompt": "SLOWTASK count to three",
                                    "run_in_background": True}))
            api.fork("FORKIT", prompt="FORKTASK look around")
            self.claude(api, "start", "hello")
            self.claude(api, "read4", "please READ4")
            self.claude(api, "read16", "please READ16")
            count = len(self.logged())
            api.hold("SLOWTASK", until=lambda: self.stopped_since(count))
            self.claude(api, "background", "please BGWORK", "--permission-mode", "acceptEdits")
            self.claude(api, "fork", "please FORKIT")

    def of(self, phase: str, event: str) -> list[dict[str, Any]]:
        return [h["payload"] for h in self.hooks[phase] if h["event"] == event]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    world = Session(tmp_path_factory.mktemp("claude-parallel"), exe)
    world.run()
    if os.environ.get("JMEM_E2E_DUMP"):
        Path(os.environ["JMEM_E2E_DUMP"]).with_suffix(".parallel.json").write_text(
            json.dumps({"requests": world.requests, "hooks": world.hooks}, indent=1))
    print(f"\nclaude code {described()} parallel: " + ", ".join(
        f"{k} {v:.1f} s" for k, v in world.took.items()))
    for phase in ("read4", "read16"):
        print(f"  {phase}: {timings(world, phase)}")
    return world


def text(request: dict[str, Any]) -> str:
    return json.dumps(request, ensure_ascii=False)


def is_subagent(request: dict[str, Any]) -> bool:
    return "cc_is_subagent=true" in json.dumps(request.get("system", ""))


def main_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if not is_subagent(r)]


def tool_results(request: dict[str, Any]) -> int:
    return sum(1 for m in request["messages"] if isinstance(m["content"], list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")


def timings(world: Session, phase: str) -> str:
    """The tool hooks of a phase's batch: how many, their span, each one's whole time."""
    wakes = sorted((s, e) for s, e, args in world.procs[phase] if args.startswith("wake"))
    tool = wakes[2:]  # after SessionStart and UserPromptSubmit: PostToolUse x N, the batch
    each = [1000 * (e - s) for s, e in tool]
    span = 1000 * (max(e for _, e in tool) - min(s for s, _ in tool))
    return (f"{len(tool)} tool hook processes, median {statistics.median(each):.0f} ms, "
            f"max {max(each):.0f} ms each, {span:.0f} ms from the first start to the last end")


@pytest.mark.parametrize(("phase", "correction", "calls"),
                         [("read4", FIRST, 4), ("read16", SECOND, 16)])
def test_a_correction_written_mid_turn_reaches_the_batch_once(
        session: Session, phase: str, correction: str, calls: int) -> None:
    first, *after = main_requests(session.requests[phase])
    assert correction not in text(first)  # written after the prompt's hooks ran
    batch = [r for r in after if tool_results(r) >= calls]
    assert batch, "no request carried the tool results"
    key = "mn-one" if phase == "read4" else "mn-two"
    for request in batch:
        whole = text(request)
        assert whole.count(correction) == 1, whole.count(correction)
        assert whole.count(f"do not rely on: {key}") == 1
    # once in the session log too: one live injection in this phase
    live = [r for r in session.injected[phase] if r["event"] != "SessionStart"]
    assert len(live) == 1, live


def test_the_first_batch_is_delivered_by_a_tool_hook_and_later_ones_by_the_batch(
        session: Session) -> None:
    live = [r["event"] for phase in ("read4", "read16") for r in session.injected[phase]
            if r["event"] != "SessionStart"]
    # Which hook delivers the first batch is a race (a tool hook holding the lock, or the
    # batch hook after the tool hooks' throttle); once the session has run a batch hook,
    # only batch hooks deliver, once per batch.
    assert len(live) == 2 and live[-1] == "PostToolBatch", live
    [batch16] = [r for r in main_requests(session.requests["read16"]) if tool_results(r) >= 16
                 ][:1]
    assert SECOND in "\n".join(c.text for c in hook_contexts(batch16, "PostToolBatch"))


def test_no_reminder_while_the_background_subagent_runs_and_one_at_the_end(
        session: Session) -> None:
    first, *later = session.of("background", "Stop")
    assert first["background_tasks"] and first["background_tasks"][0]["status"] == "running"
    # the real end, then the reminded turn's own end (`stop_hook_active`)
    assert [(p["background_tasks"], p["stop_hook_active"]) for p in later] == \
        [([], False), ([], True)]
    main = main_requests(session.requests["background"])
    told = [r for r in main if REMINDER in text(r)]
    assert told, "the session was never reminded"
    for request in main:
        if REMINDER in text(request):  # only after the task notification woke the session
            assert "<task-notification>" in text(request)
    assert text(main[-1]).count(REMINDER) == 1
    assert "before you finish" in "\n".join(c.text for c in hook_contexts(main[-1], "Stop"))


def test_a_fork_gets_no_second_pack_and_no_second_reminder(session: Session) -> None:
    [start] = [p for p in session.of("fork", "SubagentStart") if p["agent_type"] == "fork"]
    forked = [r for r in session.requests["fork"] if is_subagent(r)]
    assert forked, "the fork never ran"
    for request in forked:
        whole = text(request)
        assert "FORKTASK look around" in whole
        assert whole.count("- Other fact [mn-two]") == 1, "the pack came twice"
        assert whole.count("Team wide lesson") == 1  # what even an agent without memory gets
        assert whole.count(FIRST) == 1 and whole.count(REMINDER) == 1
        assert not hook_contexts(request, "SubagentStart", expect=False)
    [stop] = [p for p in session.of("fork", "SubagentStop")
              if p.get("agent_id") == start["agent_id"]]
    assert stop["agent_type"] == "fork"
    [record] = [r for r in session.injected["fork"] if r["event"] == "SubagentStart"]
    assert record["agent"] == "main" and record["keys"] == []  # took the parent's state
    for request in main_requests(session.requests["fork"]):
        assert text(request).count(REMINDER) <= 1
