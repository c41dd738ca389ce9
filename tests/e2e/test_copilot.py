"""journal-mem under the real GitHub Copilot CLI (pinned, see copilotcli.py) in a linked
worktree, against a fake Anthropic API on 127.0.0.1: what reached the model is
asserted in the requests.

Copilot runs the hooks of `.claude/settings.json` (written by `jmem init`) with
Claude Code's event names, ignores what its start, prompt and tool hooks print, and
reads `{"decision": "block", "reason"}` at Stop, whose reason it sends as the next
prompt. Its memory comes from `AGENTS.md` and `jmem mcp` (registered in
`~/.copilot/mcp-config.json`).

Two sessions of agent `main`, each one `copilot -p` in the worktree:

1. the fake model calls journal-mem's MCP `recall` tool and, in the same message, runs
   `jmem write` (the session's own lesson) and commits: the recall answers from
   memory, and no Stop turn follows;
2. the fake model answers with four parallel shell calls — one of them runs a
   teammate's script that corrects a fact the session holds (another process, agent
   `main` too), one commits: at Stop the turn continues once, with the correction's
   words and the reminder (a lesson of the same agent name from elsewhere does not
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
from copilotcli import MODEL, VERSION, binary, environment
from fakeapi import FakeApi
from helpers import add_worktree, base_env, git, jmem, make_repo
from hookshim import shim, timings

MEM = Path(".claude/agent-memory")
FACTS = ["Builds run on the blue runners [mn-blue]",
         "The cache server listens on port 6380 [mn-port]"]
CORRECTION = "The cache server moved to port 6390"
LESSON = "Release tags are signed with the team key"
TOLD = "record what you LEARNED in this session"


class Run:
    def __init__(self, root: Path, exe: Path) -> None:
        self.root, self.exe = root, exe
        self.project = make_repo(root / "proj")
        self.home = root / "home"
        (self.home / ".copilot").mkdir(parents=True)
        self.log = root / "hook-times.txt"
        shim(root / "bin", self.log)
        self.jmem = str(root / "bin" / "jmem")
        self.env = base_env(PATH=f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
        for key in [k for k in self.env if k.startswith(("COPILOT_", "GITHUB_", "GH_"))]:
            self.env.pop(key)
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.times: dict[str, float] = {}
        self.worktree = root / "wt"

    def setup(self) -> None:
        proc = jmem(self.project, "init", "--agent", "main", "--no-git-hooks", env=self.env)
        assert proc.returncode == 0, proc.stderr
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
        (self.home / ".copilot" / "mcp-config.json").write_text(json.dumps({"mcpServers": {
            "journal-mem": {"type": "local", "command": sys.executable,
                            "args": ["-m", "journal_mem", "mcp"], "tools": ["*"],
                            "cwd": str(self.worktree),
                            "env": {"PYTHONPATH": self.env["PYTHONPATH"]}}}}))

    def copilot(self, phase: str, api: FakeApi, prompt: str) -> None:
        before = len(api.requests)
        env = dict(self.env, **environment(f"http://127.0.0.1:{api.port}", self.home))
        start = time.monotonic()
        proc = subprocess.run([str(self.exe), "-p", prompt, "--allow-all-tools", "--model",
                               MODEL], cwd=self.worktree, env=env, capture_output=True,
                              text=True, timeout=240, stdin=subprocess.DEVNULL, check=False)
        self.times[phase] = time.monotonic() - start
        assert proc.returncode == 0, f"copilot {phase}: {proc.stdout}\n{proc.stderr}"
        self.requests[phase] = api.requests[before:]
        (self.root / f"requests-{phase}.json").write_text(json.dumps(self.requests[phase]))

    def scenario(self) -> None:
        teammate = self.root / "teammate.sh"
        teammate.write_text("#!/bin/sh\nsleep 0.3\n" + shlex.join([
            self.jmem, "write", "--agent", "main", "--topic", "ops", "--title", CORRECTION,
            "--supersedes", "mn-port", "--body", "Moved with the new host."]) + " >/dev/null\n")
        teammate.chmod(0o755)
        with FakeApi() as api:
            record = " && ".join([
                shlex.join([self.jmem, "write", "--agent", "main", "--topic", "ops", "--title",
                            LESSON, "--body", "Seen in the release job."]),
                "git commit --allow-empty -qm release"])
            api.parallel("ASK-MEMORY",
                         ("journal-mem-recall", {"question": "which port does the cache use"}),
                         ("bash", {"description": "record", "command": record}))
            api.parallel("RUN-THE-BURST",
                         ("bash", {"description": "status", "command": "git status --short"}),
                         ("bash", {"description": "teammate", "command": str(teammate)}),
                         ("bash", {"description": "list", "command": "ls"}),
                         ("bash", {"description": "commit",
                                   "command": "sleep 0.6 && git commit --allow-empty -qm w"}))
            self.setup()
            self.copilot("own", api, "ASK-MEMORY please")
            self.copilot("burst", api, "please RUN-THE-BURST now")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    exe, why = binary()
    if exe is None:
        print(f"copilot e2e skipped: {why}")
        pytest.skip(why)
    result = Run(tmp_path_factory.mktemp("copilot"), exe)
    result.scenario()
    return result


def text(body: dict[str, Any]) -> str:
    return json.dumps([body.get("system"), body.get("messages")], ensure_ascii=False)


def test_copilot_reads_the_agents_md_block_and_offers_the_mcp_tools_at_once(run: Run) -> None:
    for phase in ("own", "burst"):
        first = run.requests[phase][0]
        assert "journal-mem begin" in text(first) and "jmem write --agent AGENT" in text(first)
        tools = {t["name"] for t in first["tools"]}
        assert {"journal-mem-recall", "journal-mem-write_lesson", "journal-mem-wake"} <= tools


def test_the_mcp_recall_on_the_first_turn_answers_from_memory(run: Run) -> None:
    requests = run.requests["own"]
    results = [b for r in requests for m in r["messages"] if m["role"] == "user"
               and isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert any("6380" in json.dumps(b) for b in results), results


def test_the_sessions_own_lesson_answers_its_reminder(run: Run) -> None:
    requests = run.requests["own"]
    assert not any(TOLD in text(r) for r in requests)
    assert len(requests) == 2, len(requests)  # the prompt, after the tools: no Stop turn
    lessons = list((run.project / MEM / "main" / "journal").glob("*.md"))
    assert any(LESSON in p.read_text() for p in lessons)


def test_a_correction_in_a_burst_and_the_reminder_come_at_stop_once(run: Run) -> None:
    requests = run.requests["burst"]
    assert len(requests) == 3, len(requests)  # prompt, after the four calls, after Stop
    assert CORRECTION not in text(requests[1])  # its tool hooks print to nobody
    last = requests[-1]["messages"][-1]
    said = json.dumps(last, ensure_ascii=False)
    assert last["role"] == "user" and CORRECTION in said and "mn-port" in said
    assert said.count(TOLD) == 1
    assert "jmem write --agent main" in said
    assert LESSON not in said  # written before this session started: held from its start
    times = timings(run.log)
    print(f"copilot {VERSION}: own {run.times['own']:.1f}s, burst {run.times['burst']:.1f}s;"
          f" hook ms: {times}")
    assert set(times) >= {"wake --hook claude", "remind --hook claude"}
