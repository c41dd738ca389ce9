"""Live corrections: a running session learns at its next prompt or tool call what
changed in its memory since it was last given it (a correction written by another
agent in another worktree, a distill, a new lesson for it).

UserPromptSubmit, PostToolUse, PostToolUseFailure and PostToolBatch run `jmem
wake --hook claude`, which comes here. The usual answer is "nothing changed":
the session's state file (found without running git) lists the folders and
files that could change what it holds with their modification times, and a
stat of each says so (a handful of system calls). Only when something changed
is the pack built again, and only the lines the session does not hold yet are
injected, with the keys it holds that are no longer true.

Each change reaches a session once, however many of its hooks run at the same
moment (Claude Code runs the PostToolUse hooks of parallel tool calls side by
side): a hook that sees a change takes the session's lock (`SessionLock`) and
looks again at the state it finds there. A tool-call hook that finds the lock
taken leaves the change to the hook holding it. PostToolBatch fires once after
every call of a batch has ended, and its context reaches the model in the same
turn as theirs: once a session has run one, it is where that session's changes
are delivered, and its PostToolUse and PostToolUseFailure hooks only read the
state and stop. Without a PostToolBatch (Codex, Gemini CLI, an older Claude Code)
every tool hook checks, so a correction written during a burst of tool calls
reaches the session at the next call of the burst: the check is a read of the
state and a stat per watched path, a small part of the hook's own start.
"""

from __future__ import annotations

import os

from journal_mem.gitops.gitcore import quick_common_dir
from journal_mem.wake import sessions

TOOL_EVENTS = ("PostToolUse", "PostToolUseFailure")  # one hook per call of a batch
BATCH = "PostToolBatch"
BATCHES = "batches"  # state key: this session's client runs PostToolBatch hooks
WAIT = 3.0  # seconds a prompt or batch hook waits for the lock (its timeout is 5 s)


class Claim:
    """A session whose memory changed, its lock held: `with claim:` then deliver."""

    __slots__ = ("lock", "path", "state")

    def __init__(self, path: str, state: dict[str, object], lock: sessions.SessionLock) -> None:
        self.path, self.state, self.lock = path, state, lock

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.__exit__()


def changed(payload: dict[str, object], event: str) -> Claim | None:
    """The session's state, its lock held, when something it holds changed; None when
    nothing did, another hook of the session is delivering it, or the session never
    woke with memory: then the hook is done."""
    cwd = payload.get("cwd")
    common = quick_common_dir(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if common is None:
        return None
    session, agent_id = payload.get("session_id"), payload.get("agent_id")
    path = sessions.state_path(os.path.join(common, "journal-mem"),
                               session if isinstance(session, str) else "",
                               agent_id if isinstance(agent_id, str) else "")
    tool = event in TOOL_EVENTS
    state = sessions.load_state(path)
    if state is None or (tool and state.get(BATCHES) is True):
        return None
    first_batch = event == BATCH and state.get(BATCHES) is not True
    if sessions.unchanged(state) and not first_batch:
        return None
    lock = sessions.SessionLock(path, 0.0 if tool else WAIT)
    if not lock.__enter__():
        return None  # another hook of this session holds it and delivers what changed
    state = sessions.load_state(path)  # as the hook before us left it
    if state is None:
        lock.__exit__()
        return None
    if event == BATCH and state.get(BATCHES) is not True:
        state[BATCHES] = True
        if sessions.unchanged(state):
            sessions.save_state(path, state)
    if sessions.unchanged(state):
        lock.__exit__()
        return None
    return Claim(path, state, lock)
