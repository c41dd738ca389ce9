"""Live corrections: a running session learns at its next prompt or tool call what
changed in its memory since it was last given it (a correction written by another
agent in another worktree, a distill, a new lesson for it).

UserPromptSubmit and PostToolUse run `jmem wake --hook claude`, which comes
here. The usual answer is "nothing changed": the session's state file (found
without running git) lists the folders and files that could change what it
holds with their modification times, and a stat of each says so (a handful
of system calls). PostToolUse checks at most once per `TOOL_INTERVAL`
seconds (the state file's own mtime is the clock). Only when something
changed is the pack built again, and only the lines the session does not
hold yet are injected, with the keys it holds that are no longer true.
"""

from __future__ import annotations

import os
import time

from journal_mem.gitops.gitcore import quick_common_dir
from journal_mem.wake import sessions

TOOL_INTERVAL = 3.0  # seconds between two PostToolUse checks of one session


def changed(payload: dict[str, object],
            event: str) -> tuple[str, dict[str, object]] | None:
    """The session's state file and state when something it holds may have changed;
    None when nothing did (or it never woke with memory): then the hook is done."""
    cwd = payload.get("cwd")
    common = quick_common_dir(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if common is None:
        return None
    session, agent_id = payload.get("session_id"), payload.get("agent_id")
    path = sessions.state_path(os.path.join(common, "journal-mem"),
                               session if isinstance(session, str) else "",
                               agent_id if isinstance(agent_id, str) else "")
    if event == "PostToolUse" and _checked_lately(path):
        return None
    state = sessions.load_state(path)
    if state is None:
        return None
    if sessions.unchanged(state):
        _touch(path)
        return None
    return path, state


def _checked_lately(path: str) -> bool:
    try:
        return time.time() - os.stat(path).st_mtime < TOOL_INTERVAL
    except OSError:
        return False


def _touch(path: str) -> None:
    try:
        os.utime(path)
    except OSError:
        pass
