"""The tool hooks match a pattern only when the text holds a word it needs (`re` is then
imported): that test changes no answer."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from journal_mem.wake import clients, sessions

WORDS = ["jmem", "journal-mem", "journal_mem", "write", "-C", "/repo", "git", "commit", "-m",
         "x", "2026-12-06-a-lesson.md", "2026-1-6-x.md", ".md", "Exit Code:", "Exit Code: 0",
         "Exit Code: 1", "Exit Code: -2", "\n", " ", "&&", "rewrite", "commits", "écrire"]
TEXTS = st.lists(st.sampled_from(WORDS), max_size=8).map(lambda ws: " ".join(ws).replace(
    " \n ", "\n")) | st.text(max_size=30)


@given(TEXTS)
@example("jmem write --agent api")
@example("cd /repo && journal-mem -C /repo write")
@example("jmem rewrite")
def test_a_lesson_command_is_told_as_its_pattern_tells_it(text: str) -> None:
    whole = re.search(sessions._LESSON_CMD, text) is not None
    assert sessions.records_lesson("Bash", {"command": text}) is whole
    assert sessions.records_lesson("shell", {"command": text.split(" ")}) is (
        re.search(sessions._LESSON_CMD, " ".join(text.split(" "))) is not None)


@given(TEXTS)
@example("wrote .claude/agent-memory/api/journal/2026-12-06-a-lesson-3f2a.md")
def test_entry_names_are_what_the_pattern_finds(text: str) -> None:
    assert sessions.entry_names(text) == sorted(set(re.findall(sessions._ENTRY_FILE, text)))


@given(TEXTS)
@example("git commit -m x")
@example("git -C /repo commit")
@example("git commits")
def test_a_commit_is_told_as_its_pattern_tells_it(text: str) -> None:
    assert clients._commits(text) is (re.search(clients.COMMIT, text) is not None)


@given(TEXTS, st.sampled_from([0, None, 1]))
def test_a_failed_tool_is_told_as_its_exit_line_tells_it(text: str, code: int | None) -> None:
    shown = re.search(r"^Exit Code: (-?\d+)", text, re.MULTILINE)
    payload: dict[str, object] = {"tool_response": {"llmContent": text, "exit_code": code}}
    failed = code not in (0, None) or (shown is not None and shown.group(1) != "0")
    assert clients._failed(payload) is failed
