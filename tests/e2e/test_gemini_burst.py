"""A correction written during a burst of parallel tool calls, under the real Gemini CLI
(pinned, see geminicli.py) in a linked worktree, against the fake Gemini API.

The fake model answers the prompt with four shell calls in one turn: one runs a
teammate's script that corrects a fact the session holds (another process, agent
`main` too, so a lesson of the session's own agent name that the session did not
write), one commits. Gemini CLI has no PostToolBatch: each call's AfterTool hook
checks, so the correction reaches the next request once, and AfterAgent brings the
reminder, which the teammate's lesson does not answer.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from fakegemini import FakeGemini
from geminicli import command
from helpers import add_worktree, git
from test_gemini_memory import Run, text

CORRECTION = "The cache server moved to port 6390"
TOLD = "record what you LEARNED in this session"


class Burst(Run):
    def scenario(self) -> None:
        self.jmem("init", "--agent", "main", "--gemini", "--no-git-hooks", "--no-claude")
        self.jmem("write", "--agent", "main", "--topic", "ops", "--title",
                  "The cache server listens on port 6380", "--key", "mn-port", "--body", "b")
        git(self.project, "add", "-A")
        git(self.project, "commit", "-qm", "journal-mem")
        self.jmem("distill")
        main = self.project
        worktree = add_worktree(main, self.root / "wt", "agent-work")
        teammate = self.root / "teammate.sh"
        teammate.write_text("#!/bin/sh\nsleep 0.3\n" + shlex.join([
            str(self.root / "bin" / "jmem"), "write", "--agent", "main", "--topic", "ops",
            "--title", CORRECTION, "--supersedes", "mn-port", "--body", "Moved."])
            + " >/dev/null\n")
        teammate.chmod(0o755)
        with FakeGemini() as api:
            api.parallel("RUN-THE-BURST", "git status --short", str(teammate), "ls",
                         "sleep 0.6 && git commit --allow-empty -qm w")
            self.project = worktree  # the session runs in the worktree
            try:
                self.gemini("burst", api, "--yolo", "-p", "please RUN-THE-BURST now")
            finally:
                self.project = main


@pytest.fixture(scope="module")
def burst(tmp_path_factory: pytest.TempPathFactory) -> Burst:
    cli, why = command()
    if cli is None:
        print(f"gemini e2e skipped: {why}")
        pytest.skip(why)
    result = Burst(tmp_path_factory.mktemp("geminiburst"), cli)
    result.scenario()
    return result


def test_the_correction_reaches_the_request_after_the_burst_once(burst: Burst) -> None:
    requests = burst.requests["burst"]
    assert CORRECTION not in text(requests[0])
    after = text(requests[1])
    assert after.count(CORRECTION) == 1, after[-2000:]
    assert "do not rely on: mn-port" in after


def test_the_reminder_comes_once_whatever_the_same_agent_wrote_elsewhere(burst: Burst) -> None:
    requests = burst.requests["burst"]
    assert len(requests) == 3, len(requests)  # prompt, after the calls, after AfterAgent
    assert text(requests[-1]).count(TOLD) == 1
    assert CORRECTION not in json.dumps(requests[-1]["contents"][-1], ensure_ascii=False)
    lessons = list(Path(burst.project, ".claude/agent-memory/main/journal").glob("*.md"))
    assert any(CORRECTION in p.read_text() for p in lessons)
