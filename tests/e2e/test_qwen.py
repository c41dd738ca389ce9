"""journal-mem under the real Qwen Code CLI (pinned, see qwencode.py) in a linked
worktree, against a fake Anthropic API on 127.0.0.1: what reached the model is
asserted in the requests.

Qwen Code runs the hooks of `.qwen/settings.json` (`jmem init --qwen`) under Claude
Code's event names, reads `hookSpecificOutput.additionalContext` at SessionStart,
UserPromptSubmit and PostToolUse, and `{"decision": "block", "reason"}` at Stop. It
reads `AGENTS.md`, and `jmem mcp` registered in the user's `~/.qwen/settings.json`.

Two sessions of agent `main`, each one `qwen --yolo PROMPT` in the worktree:

1. the fake model calls journal-mem's MCP `recall` tool (Qwen Code defers MCP tools:
   named in its start-up reminder, called through its `tool_call`) and, in the same
   message, runs
   `jmem write` (the session's own lesson) and commits: the pack came at start, the
   recall answers from memory, and no Stop turn follows;
2. the fake model answers with four parallel shell calls — one runs a teammate's
   script that corrects a fact the session holds (another process, agent `main`
   too), one commits: the correction reaches the very next request, once, and at
   Stop the reminder comes (a lesson of the same agent name from elsewhere does not
   answer this session's reminder).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakeapi import FakeApi
from helpers import add_worktree, base_env, git, jmem, make_repo
from hookshim import shim, timings
from qwencode import VERSION, command, environment, user_settings

MEM = Path(".claude/agent-memory")
FACTS = ["Builds run on the blue runners [mn-blue]",
         "The cache server listens on port 6380 [mn-port]"]
CORRECTION = "The cache server moved to port 6390"
LESSON = "Release tags are signed with the team key"
TOLD = "record what you LEARNED in this session"
PACK = "# journal-mem: memory of agent main"


class Run:
    def __init__(self, root: Path, cli: list[str]) -> None:
        self.root, self.cli = root, cli
        self.project = make_repo(root / "proj")
        self.home = root / "home"
        (self.home / ".qwen").mkdir(parents=True)
        self.log = root / "hook-times.txt"
        shim(root / "bin", self.log)
        self.jmem = str(root / "bin" / "jmem")
        self.env = base_env(PATH=f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
        for key in [k for k in self.env if k.startswith(("ANTHROPIC_", "QWEN_", "OPENAI_"))]:
            self.env.pop(key)
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.times: dict[str, float] = {}
        self.worktree = root / "wt"

    def setup(self) -> None:
        proc = jmem(self.project, "init", "--agent", "main", "--qwen", "--no-claude",
                    "--no-git-hooks", env=self.env)
        assert proc.returncode == 0, proc.stderr
        assert "added SessionStart, UserPromptSubmit, PostToolUse, Stop hooks to " \
            ".qwen/settings.json" in proc.stdout
        for fact in FACTS:
            title, key = fact.removesuffix("]").split(" [")
            proc = jmem(self.project, "write", "--agent", "main", "--topic", "ops", "--title",
                        title, "--key", key, "--body", "Seen in the build logs.", env=self.env)
            assert proc.returncode == 0, proc.stderr
        git(self.project, "add", "-A")
        git(self.project, "commit", "-qm", "journal-mem")
        proc = jmem(self.project, "distill", env=self.env)
        assert proc.returncode == 0, proc.stderr
        add_worktree(self.project, self.worktree, "agent-work")
        (self.home / ".qwen" / "settings.json").write_text(user_settings({
            "journal-mem": {"command": sys.executable, "args": ["-m", "journal_mem", "mcp"],
                            "cwd": str(self.worktree),
                            "env": {"PYTHONPATH": self.env["PYTHONPATH"]}}}))

    def qwen(self, phase: str, api: FakeApi, prompt: str) -> None:
        before = len(api.requests)
        env = dict(self.env, **environment(f"http://127.0.0.1:{api.port}", self.home))
        start = time.monotonic()
        proc = subprocess.run([*self.cli, prompt], cwd=self.worktree, env=env,
                              capture_output=True, text=True, timeout=240,
                              stdin=subprocess.DEVNULL, check=False)
        self.times[phase] = time.monotonic() - start
        assert proc.returncode == 0, f"qwen {phase}: {proc.stdout}\n{proc.stderr}"
        self.requests[phase] = api.requests[before:]
        (self.root / f"requests-{phase}.json").write_text(json.dumps(self.requests[phase]))

    def scenario(self) -> None:
        teammate = self.root / "teammate.sh"
        teammate.write_text("#!/bin/sh\nsleep 0.3\n" + shlex.join([
            self.jmem, "write", "--agent", "main", "--topic", "ops", "--title", CORRECTION,
            "--supersedes", "mn-port", "--body", "Moved with the new host."]) + " >/dev/null\n")
        teammate.chmod(0o755)
        record = " && ".join([
            shlex.join([self.jmem, "write", "--agent", "main", "--topic", "ops", "--title",
                        LESSON, "--body", "Seen in the release job."]),
            "git commit --allow-empty -qm release"])
        with FakeApi() as api:
            # Qwen Code defers MCP tools: named at start, called through `tool_call`
            api.parallel("ASK-MEMORY",
                         ("tool_call", {"name": "mcp__journal-mem__recall", "arguments": {
                             "question": "which port does the cache use"}}),
                         ("run_shell_command", {"description": "record", "command": record}))
            api.parallel("RUN-THE-BURST", *[
                ("run_shell_command", {"description": what, "command": line})
                for what, line in (("status", "git status --short"),
                                   ("teammate", str(teammate)), ("list", "ls"),
                                   ("commit", "sleep 0.6 && git commit --allow-empty -qm w"))])
            self.setup()
            self.qwen("own", api, "ASK-MEMORY please")
            self.qwen("burst", api, "please RUN-THE-BURST now")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    cli, why = command()
    if cli is None:
        print(f"qwen code e2e skipped: {why}")
        pytest.skip(why)
    result = Run(tmp_path_factory.mktemp("qwen"), cli)
    result.scenario()
    return result


def text(body: dict[str, Any]) -> str:
    return json.dumps([body.get("system"), body.get("messages")], ensure_ascii=False)


def test_each_session_gets_its_pack_the_agents_md_block_and_the_mcp_tools(run: Run) -> None:
    for phase in ("own", "burst"):
        first = run.requests[phase][0]
        assert text(first).count(PACK) == 1
        assert "6380" in text(first)
        assert "journal-mem begin" in text(first) and "jmem write --agent AGENT" in text(first)
        assert "tool_call" in {t["name"] for t in first["tools"]}  # Qwen defers MCP tools:
        for tool in ("recall", "wake", "write_lesson"):  # named in its start-up reminder
            assert f'\\"mcp__journal-mem__{tool}\\"' in text(first), tool


def test_the_mcp_recall_on_the_first_turn_answers_from_memory(run: Run) -> None:
    results = [b for r in run.requests["own"] for m in r["messages"] if m["role"] == "user"
               and isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert any("6380" in json.dumps(b) for b in results), results


def test_the_sessions_own_lesson_answers_its_reminder_and_is_not_news(run: Run) -> None:
    requests = run.requests["own"]
    assert len(requests) == 2, len(requests)  # the prompt, after the tools: no Stop turn
    assert not any(TOLD in text(r) for r in requests)
    told = [part for part in text(requests[1]).split("memory changed since")[1:]]
    assert not any(LESSON in part.split("Command:")[0] for part in told)  # not news to it
    lessons = list((run.project / MEM / "main" / "journal").glob("*.md"))
    assert any(LESSON in p.read_text() for p in lessons)


def test_a_correction_in_a_burst_reaches_the_next_request_once(run: Run) -> None:
    requests = run.requests["burst"]
    assert CORRECTION not in text(requests[0])
    after = text(requests[1])
    assert after.count(CORRECTION) == 1, after[-3000:]
    assert "do not rely on: mn-port" in after


def test_the_reminder_comes_at_stop_once(run: Run) -> None:
    requests = run.requests["burst"]
    assert len(requests) == 3, len(requests)  # prompt, after the four calls, after Stop
    last = json.dumps(requests[-1]["messages"][-1], ensure_ascii=False)
    assert last.count(TOLD) == 1 and "jmem write --agent main" in last
    assert CORRECTION not in last  # given once, after the tools
    times = timings(run.log)
    print(f"qwen code {VERSION}: own {run.times['own']:.1f}s, burst {run.times['burst']:.1f}s;"
          f" hook ms: {times}")
    assert set(times) >= {"wake --hook qwen", "remind --hook qwen"}
