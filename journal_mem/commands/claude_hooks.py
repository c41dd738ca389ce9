"""The Claude Code hook commands' fast path: `jmem wake|remind --hook claude`.

`main.py` dispatches here before click or pydantic is imported. Only the
standard library and journal-mem's stdlib modules are used: git runs through
`gitfacts.spawn_git`, settings come from `settings.py` and the TOML file is
parsed only when it sets a value these hooks read.

One command serves every event: SessionStart/SubagentStart wake a session
(by `source`: startup, clear and fork get the pack; resume only what changed
since the session's last injection; compact the pack again, with the
session's clock kept), UserPromptSubmit/PostToolUse bring a running session
what changed since (the live check, `live.py`), Stop/SubagentStop may remind
it once to record a lesson. A session without memory gets nothing. A hook
never fails a session: a problem is one line on stderr and in the session
log (and, when memory could not be loaded, a `systemMessage` to the user,
never text in the model's context); the exit code is always 0: `main.main`
runs these hooks in the error boundary's hook mode, with `warn` below. What
is injected and recorded per session is built in `hook_packs.py`.
"""

from __future__ import annotations

import os
import sys

from journal_mem.claude import protocol
from journal_mem.config import settings

TYPE_CHECKING = False  # `typing` costs ~2.5 ms: not on the hook fast path
if TYPE_CHECKING:
    from journal_mem.store.layout import Layout

LIVE_EVENTS = ("UserPromptSubmit", "PostToolUse")
PLUGIN_PREFIX = "journal-mem:"  # how Claude Code names the agents of journal-mem's plugin


class HookSettings:
    """The few settings the hooks need, from the one settings view."""

    __slots__ = ("agents", "default_agent", "memory_root", "policy", "remind", "wake")

    def __init__(self, root: str) -> None:
        from journal_mem.model.validate import Policy

        view = settings.Settings(root)
        self.memory_root = view.memory_root
        self.default_agent = str(view.get("default_agent"))
        self.agents = view.names("agents")
        self.wake = view.switch("hooks.wake")
        self.remind = view.switch("hooks.remind")
        # the policy distill judges entries by: the pack shows what it will fold
        self.policy = Policy(entry_bytes=view.whole("budget.entry_bytes"),
                             scan_secrets=view.switch("guard.scan_secrets"),
                             default_topic=str(view.get("distill.default_topic")))


class _Running:
    """The hook being run, for `warn` (one hook per process)."""

    command = "wake"


_RUNNING = _Running()


def begin(command: str) -> None:
    """Note which hook this process runs (`wake` or `remind`), before anything can fail."""
    _RUNNING.command = command


def warn(message: str) -> None:
    """The error boundary's report of a failed hook (`main.main` runs the hooks in its hook
    mode): one warning, exit 0, the session goes on."""
    if _RUNNING.command == "wake":
        _problem(f"memory not loaded: {message}", user=True)
    else:
        print(f"journal-mem warning: reminder skipped: {message}", file=sys.stderr)


def dispatch(args: list[str]) -> int | None:
    """Run `wake|remind --hook claude [--agent A] [--max-chars N] [--plugin]`; None for
    anything else (the click CLI then handles it, errors included)."""
    plugin = "--plugin" in args
    opts = _options([a for a in args[1:] if a != "--plugin"])
    if opts is None or opts.get("--hook") != "claude":
        return None
    try:
        data = sys.stdin.buffer.read()
    except (OSError, ValueError):
        data = b""
    if args[0] == "wake":
        try:
            max_chars = int(opts.get("--max-chars") or protocol.PACK_LIMIT)
        except ValueError:
            return None
        return wake_hook(data, opts.get("--agent"), min(max_chars, protocol.PACK_LIMIT),
                         plugin=plugin)
    return remind_hook(data, opts.get("--agent"), plugin=plugin)


def project_runs_us(payload: dict[str, object], event: str) -> bool:
    """True when the project's own `.claude/settings.json` runs jmem for `event` (and can:
    `jmem` is on PATH): the plugin's hook then steps aside, so the pack comes once."""
    from journal_mem.claude import settings as claude_settings

    project = os.environ.get("CLAUDE_PROJECT_DIR") or _cwd(payload)
    if event in claude_settings.missing_hooks(project):
        return False
    # those hooks run `jmem` from PATH: without it they fail, and the plugin must not step aside
    return any(os.access(os.path.join(folder, "jmem"), os.X_OK)
               for folder in os.environ.get("PATH", "").split(os.pathsep) if folder)


def wake_hook(data: bytes, agent: str | None = None,
              max_chars: int = protocol.PACK_LIMIT, *, plugin: bool = False) -> int:
    """SessionStart/SubagentStart (and the live events): print what the session lacks."""
    begin("wake")
    if settings.env_flag("JMEM_DISABLE"):
        return _off("wake-up is off (JMEM_DISABLE=1): memory not loaded")
    payload = protocol.read_input(data)
    event = protocol.text_field(payload, "hook_event_name") or "SessionStart"
    if plugin and project_runs_us(payload, event):
        return 0
    if event in LIVE_EVENTS:
        from journal_mem.commands import live

        found = live.changed(payload, event)
        return _live(payload, event, *found, max_chars) if found else 0
    layout, conf, name = _target(payload, agent)
    if not conf.wake:
        return _off("wake-up is off (hooks.wake = false): memory not loaded")
    known = has_memory(layout, name, conf)
    from journal_mem.commands import hook_packs

    text = hook_packs.session_start(layout, conf.policy, payload, name, event, max_chars, known)
    if text:
        print(protocol.context_output(event, text))
    elif not known:  # a built-in or plugin agent, a main session without memory
        print(f"journal-mem: no memory for agent {name!r}: nothing loaded", file=sys.stderr)
    return 0


def remind_hook(data: bytes, agent: str | None = None, *, plugin: bool = False) -> int:
    """Stop/SubagentStop: remind once, as context, when the session did work and wrote
    no lesson; exit 0 (a failure raises: the error boundary turns it into `warn`)."""
    begin("remind")
    if settings.env_flag("JMEM_DISABLE"):
        return _off("reminder is off (JMEM_DISABLE=1)")
    payload = protocol.read_input(data)
    if payload.get("stop_hook_active") is True:
        return 0
    event = protocol.text_field(payload, "hook_event_name") or "Stop"
    if plugin and project_runs_us(payload, event):
        return 0
    layout, conf, name = _target(payload, agent)
    if not conf.remind:
        return _off("reminder is off (hooks.remind = false)")
    if not has_memory(layout, name, conf):
        return 0
    from journal_mem.commands.remind import decide

    why = decide(layout, conf.policy, name, payload)
    if why:
        print(protocol.context_output(event, why))
    return 0


def _live(payload: dict[str, object], event: str, path: str, state: dict[str, object],
          max_chars: int) -> int:
    """A running session's memory changed: bring it what it lacks."""
    from journal_mem.commands import hook_packs

    agent = state.get("agent")
    layout, conf, name = _target(payload, agent if isinstance(agent, str) else None)
    return hook_packs.live(layout, conf.policy, payload, event, path, state, name, max_chars)


def has_memory(layout: Layout, agent: str, conf: HookSettings) -> bool:
    """True when `agent` has memory (a folder under the memory root, or named in `agents`)."""
    from journal_mem.names import is_name

    return is_name(agent) and (agent in conf.agents or agent in layout.agents_on_disk())


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
    from journal_mem.gitops import gitfacts
    from journal_mem.store.layout import Layout

    repo = gitfacts.locate(_cwd(payload))
    conf = HookSettings(repo.main_root)
    return Layout(repo, conf.memory_root), conf, _agent(payload, agent, conf)


def _agent(payload: dict[str, object], agent: str | None, conf: HookSettings) -> str:
    """--agent, else the (sub)agent's name, else JMEM_AGENT, else default_agent.

    An agent of journal-mem's own plugin is `journal-mem:NAME`: its memory is NAME's.
    """
    name = agent or protocol.text_field(payload, "agent_type")
    name = name.removeprefix(PLUGIN_PREFIX)
    return settings.agent_name(name, conf.default_agent)


def _off(message: str) -> int:
    print(f"journal-mem: {message}", file=sys.stderr)
    return 0


def _problem(message: str, user: bool = False) -> int:
    """A problem goes to stderr and, for the user (never the model), a `systemMessage`."""
    import json

    line = f"journal-mem warning: {message}"
    if user:
        print(json.dumps({"systemMessage": line}, ensure_ascii=False))
    print(line, file=sys.stderr)
    return 0
