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

"Since it started" is the session's clock in its state file (kept across
resume and compaction). A lesson counts when it is in the agent's journal or
outbox with `created` at or after that time. File names carry the date, so
only the files of the last days are opened. Standard library only.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re

from journal_mem.journal.listing import Found
from journal_mem.journal.reader import read_lessons
from journal_mem.journal.validate import Policy
from journal_mem.layout import JOURNAL, Layout
from journal_mem.names import ENTRY_NAME_RE
from journal_mem.wake import claude as protocol
from journal_mem.wake import sessions

LONG_SESSION = dt.timedelta(minutes=20)
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
_COMMIT_RE = re.compile(r"\bgit\b.*\bcommit\b")
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


def wrote_since(layout: Layout, policy: Policy, agent: str, start: dt.datetime) -> bool:
    """True when `agent` has a valid lesson (journal or outbox) created at or after `start`."""
    folders = [(os.path.join(layout.agent_dir(agent), JOURNAL), False),
               (layout.outbox_dir(agent), True)]
    first_day = (start - dt.timedelta(days=1)).date().isoformat()  # any time zone
    found: list[Found] = []
    for folder, outbox in folders:
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            match = ENTRY_NAME_RE.fullmatch(name)
            if match and match.group(1) >= first_day:
                where = f"outbox/{agent}" if outbox else f"{agent}/{JOURNAL}"
                found.append((agent, os.path.join(folder, name), f"{where}/{name}", outbox))
    lessons = read_lessons(layout, found, policy, cache="recent")
    return any(x.created is not None and x.created >= start and not x.problems
               for x in lessons)


def decide(layout: Layout, policy: Policy, agent: str,
           payload: dict[str, object]) -> str | None:
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
    with sessions.SessionLock(path, 3.0):
        state = sessions.load_state(path)
        start = sessions.parse_time(state.get("started")) if state else None
        if state is None or start is None or wrote_since(layout, policy, agent, start):
            return None
        _scan(state, payload)
        sessions.save_state(path, state)  # how far the transcript was read
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


def _scan(state: dict[str, object], payload: dict[str, object]) -> None:
    """Read the transcript from where the last look ended: did the session edit or commit
    (`worked`), and does it hold a reminder already (`told`: a fork's copied transcript)."""
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
    state.update(transcript=transcript, scanned=offset + cut,
                 worked=state.get("worked") is True or any(
                     _changes_files(line) for line in lines if b'"tool_use"' in line),
                 # a tool's output holding the words (journal-mem's own source, read) is not
                 # the reminder given
                 told=state.get("told") is True or any(
                     TOLD in line and b'"tool_result"' not in line for line in lines))


def _changes_files(line: bytes) -> bool:
    """True when a transcript line holds a tool call that edits files or commits.

    The line is parsed: the transcript also records the tool definitions,
    where every tool name appears whether it was called or not.
    """
    try:
        record = json.loads(line)
    except ValueError:
        return False
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        command = block.get("input", {}).get("command") if isinstance(block.get("input"),
                                                                        dict) else None
        if block.get("name") in EDIT_TOOLS or (
                block.get("name") == "Bash" and isinstance(command, str)
                and _COMMIT_RE.search(command)):
            return True
    return False


def _text(payload: dict[str, object], name: str) -> str:
    value = payload.get(name)
    return value if isinstance(value, str) else ""
