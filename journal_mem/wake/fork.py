"""A fork subagent inherits what its parent was told.

Claude Code's fork subagent (`subagent_type: "fork"`) starts with its parent's
whole conversation: every pack, live correction and reminder injected so far
is already in its first request. Its SubagentStart (`agent_type: "fork"`,
nothing else marks it) therefore gets no pack; instead the fork takes the
parent session's state as its own, so that its live checks bring it only what
the parent did not hold either, and its reminder is the parent's: a fork runs
as part of its parent's turn (in the background, by default), so parent and
fork are reminded once between them, by whichever of them ends with work and
no lesson first. A fork of a session that never woke with memory has no state
and gets nothing. (A session forked with `--fork-session` is a SessionStart:
`hooks.session_start`.) Standard library only (the wake-up hook).
"""

from __future__ import annotations

from journal_mem.wake import claude as protocol
from journal_mem.wake import sessions

# what the fork takes from its parent's state: what the conversation holds, and the
# parent's clock (a lesson the parent wrote since it started counts for the fork)
INHERITED = ("agent", "team_only", "held", "keys", "watch", "started", "worked", "wrote", "own")
PARENT = ""  # the agent id of the session a fork starts from: the main session
REMINDER_OF = "reminder_of"  # state key: the agent id whose reminder this session shares
WAIT = 3.0  # seconds to wait for the parent's lock (one of its live hooks holds it)


def subagent_start(state_dir: str, payload: dict[str, object]) -> str | None:
    """Give a fork subagent its parent's state; the parent's agent, or None when the
    parent never woke with memory (then the fork gets nothing either)."""
    session = protocol.text_field(payload, "session_id")
    agent_id = protocol.text_field(payload, "agent_id")
    if not agent_id:
        return None
    parent_path = sessions.state_path(state_dir, session, PARENT)
    with sessions.SessionLock(parent_path, WAIT):  # not half-way through a live update
        parent = sessions.load_state(parent_path)
    agent = parent.get("agent") if parent else None
    if parent is None or not isinstance(agent, str):
        return None
    state: dict[str, object] = {k: parent[k] for k in INHERITED if k in parent}
    state[REMINDER_OF] = PARENT
    path = sessions.state_path(state_dir, session, agent_id)
    with sessions.SessionLock(path, WAIT):
        sessions.save_state(path, state)
    return agent


def agent_of(state_dir: str, payload: dict[str, object]) -> str | None:
    """The agent a fork subagent works for (its parent's), from its state; None without."""
    state = sessions.load_state(sessions.state_path(
        state_dir, protocol.text_field(payload, "session_id"),
        protocol.text_field(payload, "agent_id")))
    agent = state.get("agent") if state else None
    return agent if isinstance(agent, str) else None
