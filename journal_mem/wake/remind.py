"""`jmem remind --hook claude`: at Stop/SubagentStop, ask once for the session's lesson.

Stop fires at the end of every turn, so the reminder comes only when the
session did work worth a lesson — it edited files (Write, Edit, MultiEdit,
NotebookEdit) or committed (a Bash `git commit`), read from its transcript,
or it has run for `LONG_SESSION` — and recorded no lesson since it started;
never more than once per session. It goes back as context
(`hookSpecificOutput.additionalContext`), which continues the turn as plain
text; `decision: block` would reach the model labelled a blocking error.

Stop fires too when a turn ends while delegated work (a background subagent,
a workflow) still runs; `background_tasks` lists it, and the session is
paused, not done: it is reminded at its real end, the Stop after the task
notification wakes it, with nothing in flight. A session that already holds
the reminder is not reminded again: a fork's copied transcript holds its
parent's (the transcript is read for it), a fork subagent shares its parent's
(`fork.py`), a session forked with `--fork-session` takes its parent's mark.

Only the session's own lessons count, whatever the agent name they are
written for: a tool call of this session (or of its subagents) that records
one and did not fail — `jmem write` in a shell, journal-mem's MCP tool
`write_lesson`, a file tool's write of a memory file (the capture files it).
Claude Code's calls are read from the transcript, each with its result; the
other clients' tool hooks and the capture mark the session's state
(`sessions.note_lesson`). A teammate's lesson, or a parallel session's of the
same agent, answers nobody else's reminder. Standard library only.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re

from journal_mem.layout import Layout
from journal_mem.wake import claude as protocol
from journal_mem.wake import sessions
from journal_mem.wake.clients import COMMIT

LONG_SESSION = dt.timedelta(minutes=20)
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
TOLD = b"record what you LEARNED in this session"  # in every reminder: a transcript holding it


def reason(agent: str) -> str:
    """What the agent is told: exactly how to record its lesson."""
    return (
        f"journal-mem: before you finish, record what you LEARNED in this session (not what "
        f"you did) as one lesson:\n\n"
        f"jmem write --agent {agent} --topic TOPIC --title \"One-line lesson\" <<'EOF'\n"
        f"Why it is true and how to apply it next time.\nEOF\n\n"
        f"TOPIC is a short slug such as testing or build. If you corrected a fact you had "
        f"been given, add --supersedes KEY (the key in brackets). If you learned nothing "
        f"worth keeping, just finish: you will not be asked again."
    )


def decide(layout: Layout, agent: str, payload: dict[str, object]) -> str | None:
    """The reminder text, or None to let the session stop quietly.

    None when Claude Code is already continuing because of a Stop hook, when
    the main session's turn ends with delegated work still running (its real
    end comes later), when the session never woke with memory, did no work
    worth a lesson, wrote one, or was reminded before.
    """
    if payload.get("stop_hook_active") is True:
        return None
    if _text(payload, "hook_event_name") != "SubagentStop" and protocol.background_work(payload):
        return None  # a SubagentStop lists the subagent itself as running: it is its end
    session_id, agent_id = _text(payload, "session_id"), _text(payload, "agent_id")
    path = sessions.state_path(layout.state_dir, session_id, agent_id)
    with sessions.SessionLock(path, 3.0) as held:
        state = sessions.load_state(path)
        start = sessions.parse_time(state.get("started")) if state else None
        if state is None or start is None:
            return None
        _scan(state, payload, layout.memory_root)
        if held:  # how far the transcript was read; else the holder's state stands
            sessions.save_state(path, state)
    if state.get("wrote") is True:  # this session's own lesson (or its subagents')
        if agent_id:
            sessions.note_lesson(layout.state_dir, session_id, agent_id)  # the parent too
        return None
    if state.get("told") is True or not _did_work(state, start):
        return None
    owner = state.get("reminder_of")  # a fork subagent is reminded as its parent
    if not sessions.first_reminder(layout.state_dir, session_id,
                                   owner if isinstance(owner, str) else agent_id):
        return None
    return reason(agent)


def _did_work(state: dict[str, object], start: dt.datetime) -> bool:
    """Edited or committed (as `_scan` read it from the transcript), or running for a while."""
    return state.get("worked") is True or sessions.now() - start >= LONG_SESSION


def _scan(state: dict[str, object], payload: dict[str, object], memory_root: str) -> None:
    """Read the transcript from where the last look ended: did the session edit or commit
    (`worked`), record a lesson (`wrote`: a lesson-recording call answered without an
    error; `lesson_calls` keeps the ones not answered yet), and does it hold a reminder
    already (`told`: a fork's copied transcript)."""
    transcript = _text(payload, "agent_transcript_path") or _text(payload, "transcript_path")
    offset = state.get("scanned")
    offset = offset if isinstance(offset, int) and state.get("transcript") == transcript else 0
    try:
        with open(transcript, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except OSError:
        return
    cut = data.rfind(b"\n") + 1  # a half-written last line is read next time
    lines = data[:cut].split(b"\n")
    calls = [c for line in lines if b'"tool_use"' in line for c in _calls(line)]
    pending = state.get("lesson_calls")
    asked = set(pending) if isinstance(pending, list) else set()
    asked |= {tool_id for tool_id, name, tool_input in calls
              if _records(name, tool_input, memory_root)}
    done = {tool_id for line in lines if b'"tool_result"' in line
            for tool_id in _succeeded(line) if tool_id in asked}
    state.update(transcript=transcript, scanned=offset + cut,
                 lesson_calls=sorted(asked - done),
                 wrote=state.get("wrote") is True or bool(done),
                 worked=state.get("worked") is True or any(
                     _changes_files(name, tool_input) for _, name, tool_input in calls),
                 # a tool's output holding the words (journal-mem's own source, read) is not
                 # the reminder given
                 told=state.get("told") is True or any(
                     TOLD in line and b'"tool_result"' not in line for line in lines))


def _blocks(line: bytes, kind: str) -> list[dict[str, object]]:
    """The content blocks of one kind (`tool_use`, `tool_result`) of a transcript line.

    The line is parsed: the transcript also records the tool definitions,
    where every tool name appears whether it was called or not.
    """
    try:
        record = json.loads(line)
    except ValueError:
        return []
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] \
        if isinstance(content, list) else []


def _calls(line: bytes) -> list[tuple[str, str, object]]:
    """(id, tool name, input) of each tool call in a transcript line."""
    return [(str(b.get("id") or ""), str(b.get("name") or ""), b.get("input"))
            for b in _blocks(line, "tool_use")]


def _succeeded(line: bytes) -> list[str]:
    """The ids of the tool calls a transcript line answers without an error."""
    return [str(b.get("tool_use_id")) for b in _blocks(line, "tool_result")
            if b.get("is_error") is not True]


def _records(name: str, tool_input: object, memory_root: str) -> bool:
    """A call that records a lesson: `jmem write`, the MCP tool, or a file tool's write
    of a memory file (the capture files it)."""
    if sessions.records_lesson(name, tool_input):
        return True
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    return name in EDIT_TOOLS and isinstance(path, str) and \
        f"/{memory_root}/" in path.replace(os.sep, "/") and path.endswith(".md")


def _changes_files(name: str, tool_input: object) -> bool:
    """True for a tool call that edits files or commits."""
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return name in EDIT_TOOLS or (name == "Bash" and isinstance(command, str)
                                  and re.search(COMMIT, command) is not None)


def _text(payload: dict[str, object], name: str) -> str:
    value = payload.get(name)
    return value if isinstance(value, str) else ""
