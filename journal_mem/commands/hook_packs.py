"""What a Claude Code hook injects into a session, and what it records about it.

A session start gets the pack by its `source`; a running session whose
memory changed gets only what it lacks (the live check, `live.py`). Each
injection is remembered in the session's state (what it holds, the files to
watch) and appended to the session log (`status --sessions`). Standard
library only at module level: `claude_hooks.py` imports this on the hook fast
path, and the pack builder only when a pack is built.
"""

from __future__ import annotations

import os

from journal_mem.claude import protocol
from journal_mem.store import sessions

TYPE_CHECKING = False  # `typing` costs ~2.5 ms: not on the hook fast path
if TYPE_CHECKING:
    from journal_mem.model.validate import Policy
    from journal_mem.store.layout import Layout


def session_start(layout: Layout, policy: Policy, payload: dict[str, object], agent: str,
                  event: str, max_chars: int, known: bool) -> str:
    """Build what this session start needs, record it, and return its text ("" = nothing).

    startup/clear (and subagents): the pack, less what Claude Code loaded
    natively. resume: only what changed since the session's last injection
    (the earlier packs are still in its transcript). compact: the pack again
    (the summary dropped it), the session's clock kept. A resume under a new
    id (a fork) starts from what the session it copies holds (named on the
    `claude --resume ID` command line), else the first prompt reads the packs
    its copied transcript holds (`live`), else it gets the whole pack.
    """
    from journal_mem.commands import held as held_mod
    from journal_mem.commands import wake

    source = protocol.text_field(payload, "source")
    path = sessions.state_path(layout.state_dir, protocol.text_field(payload, "session_id"),
                               protocol.text_field(payload, "agent_id"))
    old = sessions.load_state(path) if source in ("resume", "compact", "fork") else None
    if source in ("resume", "fork") and old is None and known:
        parent = held_mod.resumed_session()  # a fork: what the session it copies holds
        old = sessions.load_state(sessions.state_path(
            layout.state_dir, parent, protocol.text_field(payload, "agent_id"))) if parent \
            else None
    if source in ("resume", "fork") and old is None and known:
        sessions.save_state(path, {"agent": agent, "team_only": False, "fork": True,
                                   "started": sessions.now().isoformat(timespec="milliseconds")})
        return ""
    native = held_mod.native_copy(layout, agent, event,
                                  protocol.text_field(payload, "agent_type")) if known else None
    held = held_mod.Held.of_text(native) if native is not None else None
    delta = source in ("resume", "fork") and old is not None
    if delta and old is not None:
        held = held_mod.Held(set(_strings(old.get("held"))), set(_strings(old.get("keys"))))
    pack = wake.build(layout, agent, policy, max_chars=max_chars, held=held, delta=delta,
                      team_only=not known)
    state = dict(old or {})
    digests = (held.digests if held else set()) | set(pack.offered)
    state.update(agent=agent, team_only=not known, held=sorted(digests), keys=pack.held_keys,
                 watch=sessions.mtimes(watch_paths(layout, agent)))
    state.setdefault("started", sessions.now().isoformat(timespec="milliseconds"))
    sessions.save_state(path, state)
    text = pack.text if pack.news or (known and not delta) else ""
    record(layout, payload, agent, event, pack if text else None, native is not None)
    return text


def live(layout: Layout, policy: Policy, payload: dict[str, object], event: str, path: str,
         state: dict[str, object], name: str, max_chars: int) -> int:
    """Something a running session holds changed: inject only what it lacks, record it."""
    from journal_mem.commands import wake
    from journal_mem.commands.held import Held, in_transcript

    held: Held | None = Held(set(_strings(state.get("held"))), set(_strings(state.get("keys"))))
    if state.pop("fork", None):  # its first prompt: the copied transcript is there now
        held = in_transcript(protocol.text_field(payload, "transcript_path"), name)
    pack = wake.build(layout, name, policy, max_chars=max_chars, held=held,
                      delta=held is not None, team_only=state.get("team_only") is True)
    digests = held.digests if held else set()
    state.update(held=sorted(digests | set(pack.offered)), keys=pack.held_keys,
                 watch=sessions.mtimes(watch_paths(layout, name)))
    sessions.save_state(path, state)
    if pack.news:
        record(layout, payload, name, event, pack, False)
        print(protocol.context_output(event, pack.text))
    return 0


def watch_paths(layout: Layout, agent: str) -> list[str]:
    """What a distill or a new lesson changes: the agent's MEMORY.md, the distill state,
    and every journal and outbox folder (corrections are team-wide)."""
    agents = layout.agents_on_disk()
    return [layout.main_memory, layout.memory_md(agent), layout.distill_state,
            os.path.join(layout.state_dir, "outbox"),
            *(layout.journal_dir(a) for a in agents), *(layout.outbox_dir(a) for a in agents)]


def record(layout: Layout, payload: dict[str, object], agent: str, event: str,
           pack: object, native: bool) -> None:
    """Append what was injected (None: nothing) to the session log (`status --sessions`)."""
    sessions.append(layout.state_dir, {
        "time": sessions.now().isoformat(timespec="milliseconds"),
        "event": event,
        "source": protocol.text_field(payload, "source"),
        "session_id": protocol.text_field(payload, "session_id"),
        "agent_id": protocol.text_field(payload, "agent_id"),
        "agent": agent,
        "worktree": layout.repo.worktree_root,
        "native_memory_md": native,
        "keys": getattr(pack, "keys", []),
        "chars": protocol.utf16_len(getattr(pack, "text", "")),
        "cut": getattr(pack, "cut", {}),
    })


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
