"""`jmem remind --hook claude`: at Stop/SubagentStop, ask once for the session's lesson.

"Since the session started" is the time `wake --hook claude` logged for this
session (and subagent). A lesson counts when it is in the agent's journal or
outbox with `created` at or after that time. File names carry the date, so
only the files of the last days are opened. Standard library only.
"""

from __future__ import annotations

import datetime as dt
import os

from journal_mem.model.validate import Policy
from journal_mem.store import sessions
from journal_mem.store.layout import JOURNAL, Layout
from journal_mem.store.listing import ENTRY_NAME_RE, Found
from journal_mem.store.reader import read_lessons


def reason(agent: str) -> str:
    """What the blocked agent is told: exactly how to record its lesson."""
    return (
        f"Before you stop: record what you LEARNED in this session (not what you did) as "
        f"one journal-mem lesson, then stop again:\n\n"
        f"jmem write --agent {agent} --topic TOPIC --title \"One-line lesson\" <<'EOF'\n"
        f"Why it is true and how to apply it next time.\nEOF\n\n"
        f"TOPIC is a short slug such as testing or build. If you corrected a fact you had "
        f"been given, add --supersedes KEY (the key in brackets). If you learned nothing "
        f"worth keeping, simply stop again: you will not be asked twice."
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


def decide(layout: Layout, policy: Policy, agent: str, session_id: str, agent_id: str,
           stop_hook_active: bool) -> str | None:
    """The block reason, or None to let the agent stop.

    Never blocks twice for one session, nor when Claude Code is already
    continuing because of a Stop hook, nor when the session's start is unknown.
    """
    if stop_hook_active:
        return None
    start = sessions.session_start(layout.state_dir, session_id, agent_id)
    if start is None or wrote_since(layout, policy, agent, start):
        return None
    if not sessions.first_reminder(layout.state_dir, session_id, agent_id):
        return None
    return reason(agent)
