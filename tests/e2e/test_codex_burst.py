"""A correction written during Codex's turn, and the session's own lesson, under the real
Codex CLI (pinned, see codexcli.py) against the fake Responses API on 127.0.0.1.

The fake model answers the prompt with one shell call that runs a teammate's script
writing a correction of a fact the session holds (another agent's `--supersedes`),
records the session's own lesson with `jmem write`, and commits — all within a
second of SessionStart, the window a throttled tool hook used to skip. What reached
the model is asserted in the requests: the correction in the very next request,
once, without the session's own lesson; no reminder at Stop (the session recorded
its lesson), where a teammate's lesson alone would not have answered it
(tests/wake/test_clients.py)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from codexcli import binary
from fakeopenai import FakeOpenAI
from test_codex_memory import CORRECTION, Run

LESSON = "The deploy script needs the staging flag"


class Burst(Run):
    def scenario(self) -> None:
        jmem = str(self.root / "bin" / "jmem")  # the hooks' shim: Codex's shell has its PATH
        # a teammate's correction, written during the turn by another process: its output
        # is not the session's (the session's own lesson is never sent back to it)
        teammate = self.root / "teammate.sh"
        teammate.write_text("#!/bin/sh\n" + shlex.join([
            jmem, "write", "--agent", "reviewer", "--topic", "ops", "--title", CORRECTION,
            "--applies-to", "main", "--supersedes", "mn-one", "--body", "It changed."])
            + " >/dev/null\n")
        teammate.chmod(0o755)
        command = " && ".join([
            shlex.quote(str(teammate)),
            shlex.join([jmem, "write", "--agent", "main", "--topic", "ops", "--title",
                        LESSON, "--body", "Found while committing."]),
            "git commit --allow-empty -qm work"])
        with FakeOpenAI() as api:
            api.shell("RUN-THE-BURST", command)
            self.setup(api)
            self.codex("exec", api, "exec", "--json", "please RUN-THE-BURST now")


@pytest.fixture(scope="module")
def burst(tmp_path_factory: pytest.TempPathFactory) -> Burst:
    exe, why = binary()
    if exe is None:
        print(f"codex e2e skipped: {why}")
        pytest.skip(why)
    result = Burst(tmp_path_factory.mktemp("codexburst"), exe)
    result.scenario()
    return result


def text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("input", []), ensure_ascii=False)


def test_the_correction_reaches_the_request_after_the_tool_call_once(burst: Burst) -> None:
    requests = burst.requests["exec"]
    assert "do not rely on: mn-one" not in text(requests[0])
    after = text(requests[1])
    assert after.count("do not rely on: mn-one") == 1, after  # the hook's context, once
    told = [i for i in requests[1]["input"] if "do not rely on: mn-one" in json.dumps(i)]
    assert CORRECTION in json.dumps(told, ensure_ascii=False)


def test_the_sessions_own_lesson_is_not_sent_back_to_it(burst: Burst) -> None:
    told = [i for i in burst.requests["exec"][1]["input"]
            if "since it was last given to you" in json.dumps(i, ensure_ascii=False)]
    assert told and LESSON not in json.dumps(told, ensure_ascii=False)


def test_the_sessions_own_lesson_answers_its_reminder(burst: Burst) -> None:
    requests = burst.requests["exec"]
    assert len(requests) == 2, len(requests)  # the prompt, after the tool: no Stop turn
    assert not any("<hook_prompt " in text(r) for r in requests)  # how a Stop block comes
    lessons = list(Path(burst.project, ".claude/agent-memory/main/journal").glob("*.md"))
    assert any(LESSON in p.read_text() for p in lessons)
