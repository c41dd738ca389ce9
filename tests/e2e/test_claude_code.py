"""End to end with the real Claude Code CLI (pinned, see claudecode.py) against a fake
Messages API on 127.0.0.1: what reached the model is asserted in the saved requests.

One scenario, run once for the module (about half a minute): a repository with
agents `main` and `reviewer` (the reviewer's file is `code-review.md`, its
frontmatter `name: reviewer`, `memory: "project"`), a linked worktree checked
out before the main checkout's memory moved on, a pending lesson. In the
worktree one session delegates to the reviewer; resumed with streamed input,
gets between two prompts a correction written in the main checkout; resumed,
edits a file; then is resumed, compacted, and resumed again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from claudecode import binary, described
from fakeapi import FakeApi
from helpers import REPO_ROOT, add_worktree, base_env, git, jmem, make_repo
from seen import hook_context, injected, where

from journal_mem.wake.remind import TOLD

MEM = Path(".claude/agent-memory")
FILLER = 140  # main's MEMORY.md is longer than the cap allows: the pack is cut
STALE_REVIEWER = ("# reviewer\n- Same fact 🦀 [rv-same]\n- Changed fact OLD text [rv-changed]\n"
                  "- Dropped fact [rv-dropped]\n")
FRESH_REVIEWER = ("# reviewer\n- Same fact 🦀 [rv-same]\n- Changed fact NEW text [rv-changed]\n"
                  "- Fresh reviewer fact [rv-fresh]\n")


def main_memory(fresh: bool) -> str:
    lines = ["# main", "- Main fact 🐍 [mn-one]"]
    lines += ["- Main fresh fact [mn-fresh]"] if fresh else []
    lines += [f"- Filler fact {i} 🚀🚀 about builds, deploys and the test matrix [mn-fill-{i}]"
              for i in range(FILLER)]
    return "\n".join(lines) + "\n"


class Scenario:
    """The repository, the fake API and every request the CLI sent, by phase."""

    def __init__(self, root: Path, exe: Path) -> None:
        self.root, self.exe = root, exe
        self.main = make_repo(root / "main")
        self.phases: dict[str, list[dict[str, Any]]] = {}
        self.times: dict[str, float] = {}
        bin_dir = root / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "jmem"  # the hooks run `jmem` from PATH: this checkout's code
        shim.write_text(f"#!/bin/sh\nPYTHONPATH={REPO_ROOT} exec {sys.executable} "
                        "-m journal_mem \"$@\"\n")
        shim.chmod(0o755)
        (root / "home").mkdir()
        self.env = base_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                            HOME=str(root / "home"), ANTHROPIC_API_KEY="sk-test-fake",
                            DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                            DISABLE_AUTOUPDATER="1")
        self.env.pop("CLAUDE_CODE_DISABLE_AUTO_MEMORY", None)

    def write(self, cwd: Path, agent: str, title: str, *extra: str) -> None:
        proc = jmem(cwd, "write", "--agent", agent, "--topic", "ops", "--title", title, *extra,
                    "--body", "Why it holds.", env=self.env)
        assert proc.returncode == 0, proc.stderr

    def setup(self) -> None:
        main = self.main
        proc = jmem(main, "init", "--agent", "main", "--agent", "reviewer", "--claude-agent",
                    "reviewer", "--no-git-hooks", env=self.env)
        assert proc.returncode == 0, proc.stderr
        agents = main / ".claude" / "agents"
        text = (agents / "reviewer.md").read_text().replace("memory: project",
                                                            'memory: "project"')
        (agents / "reviewer.md").unlink()
        (agents / "code-review.md").write_text(text)
        (main / MEM / "reviewer" / "MEMORY.md").write_text(STALE_REVIEWER)
        (main / MEM / "main" / "MEMORY.md").write_text(main_memory(fresh=False))
        git(main, "add", "-A")
        git(main, "commit", "-qm", "journal-mem")
        self.wt = add_worktree(main, self.root / "wt")
        (main / MEM / "reviewer" / "MEMORY.md").write_text(FRESH_REVIEWER)
        (main / MEM / "main" / "MEMORY.md").write_text(main_memory(fresh=True))
        self.write(main, "main", "Pending main lesson")

    def claude(self, api: FakeApi, phase: str, *args: str,
               stdin: list[str] | None = None) -> list[dict[str, Any]]:
        """Run the CLI in the worktree; the requests it sent; each user turn of `stdin` is
        sent after the previous one's result (and after `self.between[i]` ran)."""
        start, first = time.perf_counter(), len(api.requests)
        self.env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{api.port}"
        if stdin is None:
            proc = subprocess.run([str(self.exe), "-p", *args, "--output-format", "json"],
                                  cwd=self.wt, env=self.env, capture_output=True, text=True,
                                  timeout=180, check=False)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            self.session = json.loads(proc.stdout)["session_id"]
        else:
            self.stream(args, stdin)
        self.times[phase] = time.perf_counter() - start
        self.phases[phase] = api.requests[first:]
        return self.phases[phase]

    def stream(self, args: tuple[str, ...], turns: list[str]) -> None:
        proc = subprocess.Popen([str(self.exe), "-p", *args, "--input-format", "stream-json",
                                 "--output-format", "stream-json", "--verbose"],
                                cwd=self.wt, env=self.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        for i, text in enumerate(turns):
            if i in self.between:
                self.between[i]()
            proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user",
                                                                     "content": text}}) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                event = json.loads(line)
                self.session = event.get("session_id") or getattr(self, "session", "")
                if event.get("type") == "result":
                    break
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0

    def run(self) -> None:
        self.setup()
        self.between = {1: lambda: self.write(self.main, "reviewer", "Main fact corrected",
                                              "--applies-to", "main", "--supersedes", "mn-one")}
        with FakeApi() as api:
            api.delegate("DELEGATE", "reviewer")
            api.calls["WRITEFILE"] = ("Write", {"file_path": str(self.wt / "notes.txt"),
                                                "content": "notes\n"})
            self.claude(api, "start", "please DELEGATE")
            self.claude(api, "stream", "--resume", self.session,
                        stdin=["prompt QX1", "prompt QX2"])
            self.claude(api, "work", "now WRITEFILE", "--resume", self.session,
                        "--permission-mode", "acceptEdits")
            self.claude(api, "resume", "again", "--resume", self.session)
            parent = self.session
            self.claude(api, "fork", "forked off", "--resume", parent, "--fork-session")
            self.session = parent
            self.claude(api, "compact", "/compact", "--resume", self.session)
            self.claude(api, "after", "after the compaction", "--resume", self.session)


def text(request: dict[str, Any]) -> str:
    return json.dumps(request, ensure_ascii=False)


def is_subagent(request: dict[str, Any]) -> bool:
    return "cc_is_subagent=true" in json.dumps(request.get("system", ""))


def main_requests(requests: list[dict[str, Any]], holding: str) -> list[dict[str, Any]]:
    return [r for r in requests if not is_subagent(r) and holding in text(r)]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    world = Scenario(tmp_path_factory.mktemp("claude-e2e"), exe)
    world.run()
    if os.environ.get("JMEM_E2E_DUMP"):
        Path(os.environ["JMEM_E2E_DUMP"]).write_text(json.dumps(world.phases, indent=1))
    print(f"\nclaude code {described()}: " + ", ".join(f"{k} {v:.1f} s"
                                                  for k, v in world.times.items()))
    return world


def test_main_session_gets_each_fact_once_and_the_pack_under_the_cap(
        scenario: Scenario) -> None:
    [first] = main_requests(scenario.phases["start"], "please DELEGATE")[:1]
    whole = text(first)
    for line in ("- Main fact 🐍 [mn-one]", "- Main fresh fact [mn-fresh]",
                 "Pending main lesson"):
        assert whole.count(line) == 1, line
    assert "journal-mem warning" not in whole and "no memory for agent" not in whole
    pack = hook_context(first, "SessionStart")
    assert pack.startswith("# journal-mem: memory of agent main")
    assert len(pack.encode("utf-16-le")) // 2 <= 10_000
    assert "[jmem: cut " in pack  # cut by jmem, not replaced by Claude Code's preview
    kept = [i for i in range(FILLER) if f"[mn-fill-{i}]" in whole]
    assert len(kept) > 50 and all(whole.count(f"[mn-fill-{i}]") == 1 for i in kept)


def test_subagent_in_a_stale_worktree_gets_each_fact_once(scenario: Scenario) -> None:
    subs = [r for r in scenario.phases["start"] if is_subagent(r)]
    assert subs, "the reviewer subagent never ran"
    whole = text(subs[0])
    assert whole.count("- Same fact 🦀 [rv-same]") == 1  # the native copy only
    assert whole.count("- Changed fact NEW text [rv-changed]") == 1
    assert whole.count("- Fresh reviewer fact [rv-fresh]") == 1
    assert whole.count("do not rely on: rv-dropped") == 1
    assert "[mn-one]" not in whole and "journal-mem warning" not in whole
    assert "- Fresh reviewer fact [rv-fresh]" in hook_context(subs[0], "SubagentStart")


def test_a_correction_written_mid_session_reaches_the_next_request_once(
        scenario: Scenario) -> None:
    later = main_requests(scenario.phases["stream"], "prompt QX2")
    assert later
    assert "Main fact corrected" not in text(main_requests(scenario.phases["stream"],
                                                           "prompt QX1")[0])
    for request in later:
        whole = text(request)
        assert whole.count("do not rely on: mn-one") == 1
        assert whole.count("Main fact corrected") == 1, where(request, "Main fact corrected")
        assert "Main fact corrected" in hook_context(request, "UserPromptSubmit")


def test_the_reminder_comes_once_as_context_after_work(scenario: Scenario) -> None:
    for phase in ("start", "stream"):  # turns without edits: no reminder
        assert all("before you finish" not in text(r) for r in scenario.phases[phase])
    last = [r for r in scenario.phases["work"] if not is_subagent(r)][-1]
    assert "before you finish" in hook_context(last, "Stop")
    assert text(last).count("before you finish") == 1
    assert "blocking" not in text(last).lower()


def test_resume_does_not_duplicate(scenario: Scenario) -> None:
    last = scenario.phases["resume"][-1]
    whole, held = text(last), injected(last)
    for line in ("- Main fresh fact [mn-fresh]", "Main fact corrected", "Pending main lesson"):
        assert whole.count(line) == 1 and line in held, where(last, line)


def test_a_fork_does_not_duplicate(scenario: Scenario) -> None:
    last = scenario.phases["fork"][-1]
    whole, held = text(last), injected(last)
    assert "forked off" in whole
    for line in ("- Main fresh fact [mn-fresh]", "Main fact corrected", "Pending main lesson"):
        assert whole.count(line) == 1 and line in held, where(last, line)
    # the copied transcript holds the parent's reminder: the fork is not reminded again
    # (the reminder's own words: the instructions in CLAUDE.md say "record what you
    # LEARNED" too, once in every request)
    for request in scenario.phases["fork"]:
        assert text(request).count(TOLD.decode()) == 1


def test_compaction_restores_the_pack(scenario: Scenario) -> None:
    last = scenario.phases["after"][-1]
    whole = text(last)
    assert "after the compaction" in whole
    assert "prompt QX1" not in whole  # compacted: the earlier turns are summarised away
    pack = hook_context(last, "SessionStart")  # the pack again, from source "compact"
    for line in ("- Main fresh fact [mn-fresh]", "Main fact corrected"):
        assert whole.count(line) == 1 and line in pack, where(last, line)


# --- the plugin: memory without `jmem` on PATH, in a worktree older than `jmem init` ---


@pytest.fixture(scope="module")
def plugin_world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("claude-plugin-e2e")
    home = root / "home"
    local_bin = home / ".local" / "bin"  # where pipx and uv put jmem
    local_bin.mkdir(parents=True)
    shim = local_bin / "jmem"
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={REPO_ROOT} exec {sys.executable} "
                    "-m journal_mem \"$@\"\n")
    shim.chmod(0o755)
    bare_path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                if not (Path(p) / "jmem").exists())
    env = base_env(PATH=bare_path, HOME=str(home), ANTHROPIC_API_KEY="sk-test-fake",
                   DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                   JMEM_DEFAULT_AGENT="main")
    main = make_repo(root / "main")
    old = add_worktree(main, root / "old")  # checked out before `jmem init`
    assert jmem(main, "init", "--agent", "main", "--no-git-hooks", env=env).returncode == 0
    (main / MEM / "main" / "MEMORY.md").write_text("# main\n- Plugin fact 🧩 [pl-one]\n")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "journal-mem")
    from journal_mem.setup.plugin import folder

    runs: dict[str, list[dict[str, Any]]] = {}
    with FakeApi() as api:
        # set before `claude plugin` too: without it each plugin command spends ~18 s
        # resolving api.anthropic.com (2.1.332, no network)
        env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{api.port}"
        for args in (["marketplace", "add", folder()], ["install", "journal-mem@journal-mem"]):
            proc = subprocess.run([str(exe), "plugin", *args], env=env, capture_output=True,
                                  text=True, timeout=120, check=False)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        for name, cwd, path in (("old worktree, no jmem on PATH", old, bare_path),
                                ("main checkout, project hooks too", main,
                                 f"{local_bin}{os.pathsep}{bare_path}")):
            first = len(api.requests)
            proc = subprocess.run([str(exe), "-p", f"hello from {name}"], cwd=cwd,
                                  env={**env, "PATH": path}, capture_output=True, text=True,
                                  timeout=180, check=False)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            runs[name] = api.requests[first:]
    return runs


def test_the_plugin_brings_memory_once_wherever_the_session_starts(
        plugin_world: dict[str, list[dict[str, Any]]]) -> None:
    for name, requests in plugin_world.items():
        first = main_requests(requests, f"hello from {name}")[0]
        assert text(first).count("- Plugin fact 🧩 [pl-one]") == 1, name
        assert "journal-mem warning" not in text(first)
        hook_context(first, "SessionStart")
