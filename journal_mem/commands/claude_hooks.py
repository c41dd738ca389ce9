"""The Claude Code hook commands' fast path: `jmem wake|remind --hook claude`.

`main.py` dispatches here before click or pydantic is imported. Only the
standard library and journal-mem's stdlib modules are used: git runs through
`gitfacts.spawn_git`, settings come from `settings.py` and the TOML file is
parsed only when it sets a value these hooks read. A hook never fails a
session: any error is one warning line (in the context and on stderr), exit 0.
"""

from __future__ import annotations

import os
import sys

from journal_mem.claude import protocol
from journal_mem.config import settings
from journal_mem.gitops import gitfacts
from journal_mem.model.validate import Policy
from journal_mem.store.layout import Layout


class HookSettings:
    """The few settings the hooks need, merged (flags > env > file > defaults)."""

    __slots__ = ("agents", "default_agent", "memory_root", "policy", "remind", "wake")

    def __init__(self, root: str) -> None:
        got = settings.fast_settings(root, "memory_root", "default_agent", "agents",
                                     "hooks.wake", "hooks.remind", "budget.entry_bytes",
                                     "guard.scan_secrets", "distill.default_topic")
        self.memory_root = str(got["memory_root"]).strip().strip("/")
        self.default_agent = str(got["default_agent"])
        agents = got["agents"]
        self.agents = [str(a) for a in agents] if isinstance(agents, list) else []
        self.wake = settings.as_bool(got["hooks.wake"], "hooks.wake")
        self.remind = settings.as_bool(got["hooks.remind"], "hooks.remind")
        # the policy distill judges entries by: the pack shows what it will fold
        self.policy = Policy(entry_bytes=int(got["budget.entry_bytes"]),
                             scan_secrets=settings.as_bool(got["guard.scan_secrets"],
                                                           "guard.scan_secrets"),
                             default_topic=str(got["distill.default_topic"]))


def dispatch(args: list[str]) -> int | None:
    """Run `wake|remind --hook claude [--agent A] [--max-chars N]`; None for anything else
    (the click CLI then handles it, errors included)."""
    opts = _options(args[1:])
    if opts is None or opts.get("--hook") != "claude":
        return None
    try:
        data = sys.stdin.buffer.read()
    except (OSError, ValueError):
        data = b""
    if args[0] == "wake":
        try:
            max_chars = int(opts.get("--max-chars") or protocol.CONTEXT_LIMIT)
        except ValueError:
            return None
        return wake_hook(data, opts.get("--agent"), min(max_chars, protocol.CONTEXT_LIMIT))
    return remind_hook(data, opts.get("--agent"))


def wake_hook(data: bytes, agent: str | None = None,
              max_chars: int = protocol.CONTEXT_LIMIT) -> int:
    """SessionStart/SubagentStart: print the pack as `hookSpecificOutput`; always exit 0."""
    event = "SessionStart"
    try:
        if settings.env_flag("JMEM_DISABLE"):
            return _off("wake-up is off (JMEM_DISABLE=1): memory not loaded")
        payload = protocol.read_input(data)
        event = protocol.text_field(payload, "hook_event_name") or event
        layout, conf, name = _target(payload, agent)
        if not conf.wake:
            return _off("wake-up is off (hooks.wake = false): memory not loaded")
        problem = _unknown_agent(layout, name, conf)
        if problem:
            return _warn(event, problem)
        text = _wake(layout, conf.policy, payload, name, event, max_chars)
        print(protocol.context_output(event, text))
    except Exception as exc:  # docs/DESIGN.md, "Hooks never fail a session"
        return _warn(event, f"memory not loaded: {_describe(exc)}")
    return 0


def _wake(layout: Layout, policy: Policy, payload: dict[str, object], agent: str,
          event: str, max_chars: int) -> str:
    from journal_mem.commands import wake
    from journal_mem.store import sessions

    started = sessions.now()
    # MEMORY.md goes in unless Claude Code loads this very file itself
    with_memory = not wake.loaded_natively(layout, agent, event) or \
        wake.memory_differs(layout, agent)
    pack = wake.build(layout, agent, policy, max_chars=max_chars, with_memory=with_memory)
    sessions.append(layout.state_dir, {
        "time": started.isoformat(timespec="milliseconds"),
        "event": event,
        "session_id": protocol.text_field(payload, "session_id"),
        "agent_id": protocol.text_field(payload, "agent_id"),
        "agent": agent,
        "worktree": layout.repo.worktree_root,
        "main_memory_md": with_memory,
        "keys": pack.keys,
        "chars": len(pack.text),
        "cut": pack.cut,
    })
    return pack.text


def remind_hook(data: bytes, agent: str | None = None) -> int:
    """Stop/SubagentStop: block once when the session recorded no lesson; always exit 0."""
    try:
        if settings.env_flag("JMEM_DISABLE"):
            return _off("reminder is off (JMEM_DISABLE=1)")
        payload = protocol.read_input(data)
        if payload.get("stop_hook_active") is True:
            return 0
        layout, conf, name = _target(payload, agent)
        if not conf.remind:
            return _off("reminder is off (hooks.remind = false)")
        problem = _unknown_agent(layout, name, conf)
        if problem:
            print(f"journal-mem warning: {problem}", file=sys.stderr)
            return 0
        from journal_mem.commands.remind import decide

        why = decide(layout, conf.policy, name, protocol.text_field(payload, "session_id"),
                     protocol.text_field(payload, "agent_id"), False)
        if why:
            print(protocol.block_output(why))
    except Exception as exc:  # never stop a session from ending
        print(f"journal-mem warning: reminder skipped: {_describe(exc)}", file=sys.stderr)
    return 0


def _options(rest: list[str]) -> dict[str, str] | None:
    opts: dict[str, str] = {}
    it = iter(rest)
    for arg in it:
        name, eq, value = arg.partition("=")
        if name not in ("--hook", "--agent", "--max-chars"):
            return None
        opts[name] = value if eq else next(it, "")
    return opts


def _cwd(payload: dict[str, object]) -> str:
    cwd = protocol.text_field(payload, "cwd")
    return cwd if cwd and os.path.isdir(cwd) else os.getcwd()


def _target(payload: dict[str, object],
            agent: str | None) -> tuple[Layout, HookSettings, str]:
    """The memory layout, settings and agent a hook works for."""
    repo = gitfacts.locate(_cwd(payload))
    conf = HookSettings(repo.main_root)
    return Layout(repo, conf.memory_root), conf, _agent(payload, agent, conf)


def _agent(payload: dict[str, object], agent: str | None, conf: HookSettings) -> str:
    """--agent, else the subagent's name, else JMEM_AGENT, else default_agent."""
    return (agent or protocol.text_field(payload, "agent_type")
            or settings.env_value("JMEM_AGENT") or conf.default_agent)


def _unknown_agent(layout: Layout, agent: str, conf: HookSettings) -> str:
    from journal_mem.names import is_name

    known = sorted(set(layout.agents_on_disk()) | set(conf.agents))
    if is_name(agent) and agent in known:
        return ""
    return (f"no memory for agent {agent!r} (known: {', '.join(known) or 'none'}); "
            f"run `jmem init --agent NAME` to give it one")


def _off(message: str) -> int:
    print(f"journal-mem: {message}", file=sys.stderr)
    return 0


def _warn(event: str, message: str) -> int:
    line = f"journal-mem warning: {message}"
    print(protocol.context_output(event, line))
    print(line, file=sys.stderr)
    return 0


def _describe(exc: BaseException) -> str:
    from journal_mem.errors import JournalMemError

    if isinstance(exc, JournalMemError):
        return exc.message.splitlines()[0] if exc.message else type(exc).__name__
    return f"{type(exc).__name__}: {exc}".splitlines()[0]
