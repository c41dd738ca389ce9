"""The agent hook commands' fast path: `jmem wake|remind --hook claude|codex|gemini|qwen`.

`main.py` dispatches here before click or pydantic is imported. Only the
standard library and journal-mem's stdlib modules are used: git runs through
`gitcore.spawn_git`, settings come from `settings.py` and the TOML file is
parsed only when it sets a value these hooks read. The other clients'
payloads and answers are translated in `clients.py`.

One command serves every event: SessionStart/SubagentStart wake a session
(by `source`: startup, clear and fork get the pack; resume only what changed
since the session's last injection; compact the pack again, with the
session's clock kept; a fork subagent nothing, `fork.py`),
UserPromptSubmit, PostToolUse, PostToolUseFailure and PostToolBatch bring a
running session what changed since, once however many run at the same moment
(the live check, `live.py`), and a file tool's write of native memory is
filed in the main journal (`capture/hook.py`); Stop/SubagentStop may remind
it once to record a lesson. A session without memory gets nothing. A hook
never fails a session: a problem is one line on stderr and in the session
log (and, when memory could not be loaded, a `systemMessage` to the user,
never text in the model's context); the exit code is always 0: `main.main`
runs these hooks in the error boundary's hook mode, with `warn` below.

What is injected is remembered in the session's state (what it holds, the
files to watch) and appended to the session log (`status --sessions`); the
pack builder is imported only when a pack is built.
"""

from __future__ import annotations

import os
import sys

from journal_mem import settings
from journal_mem.capture import hook as capture
from journal_mem.gitops import gitcore
from journal_mem.options import Option, parse
from journal_mem.wake import claude as protocol
from journal_mem.wake import clients, sessions
from journal_mem.wake import live as live_check

TYPE_CHECKING = False  # `typing` costs ~2.5 ms: not on the hook fast path
if TYPE_CHECKING:
    from journal_mem.journal.validate import Policy
    from journal_mem.layout import Layout
    from journal_mem.repo import Context

# seconds a start hook waits for the session's lock (another hook of the session holding
# it): most of its 15 s timeout (`setup.claude_files.TIMEOUTS`), so that under load a
# start never records its state over the holder's (`session_start`)
WAIT = 8.0
LIVE_EVENTS = ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "PostToolBatch")
PLUGIN_PREFIX = "journal-mem:"  # how Claude Code names the agents of journal-mem's plugin


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


_PLUGIN = Option("--plugin", dest="plugin", flag=True, hidden=True,
                 help="Run from the Claude Code plugin: step aside for project hooks.")
WAKE_OPTIONS = (
    Option("--agent", dest="agent", metavar="NAME",
           help="Whose memory [env JMEM_AGENT, else default_agent]."),
    Option("--hook", dest="hook", kind="choice", choices=clients.CLIENTS,
           help="Run as that client's session-start, prompt and tool hook: its hook JSON in, "
                "its context JSON out."),
    Option("--max-chars", dest="max_chars", kind="int", low=200, default=10_000,
           show_default=True, help="Budget of the pack, in characters."),
    Option("--query", dest="query", metavar="TEXT",
           help="Add the live facts this agent holds that best answer TEXT."),
    Option("--min-confidence", dest="min_confidence", kind="float", low=0.0, high=1.0,
           default=0.7, show_default=True, help="Query facts below this confidence are left "
           "out."),
    Option("--json", dest="as_json", flag=True, help="Print the pack and its parts as JSON."),
    _PLUGIN,
)
REMIND_OPTIONS = (
    Option("--agent", dest="agent", metavar="NAME",
           help="Whose lesson [the subagent's name, else JMEM_AGENT, else default_agent]."),
    Option("--hook", dest="hook", kind="choice", choices=clients.CLIENTS, required=True,
           help="Run as that client's end-of-turn hook (Claude Code Stop/SubagentStop, Codex "
                "Stop, Gemini AfterAgent): its hook JSON in, its answer out."),
    _PLUGIN,
)
_HOOK_FAST = {"agent", "hook", "max_chars", "plugin"}  # the rest: the full command


def dispatch(args: list[str]) -> int | None:
    """Run `wake|remind --hook CLIENT [--agent A] [--max-chars N] [--plugin]` (CLIENT:
    claude, codex, gemini or qwen; `clients.py`), read by the commands' own declarations; None
    for anything else (the click CLI then handles it, errors included)."""
    declared = WAKE_OPTIONS if args[0] == "wake" else REMIND_OPTIONS
    opts = parse(args[1:], declared, accept=_HOOK_FAST)
    if opts is None or opts["hook"] is None:
        return None
    try:
        data = sys.stdin.buffer.read()
    except (OSError, ValueError):
        data = b""
    data = clients.begin(opts["hook"], data)  # another client's payload, in Claude's terms
    if data is None:
        return 0
    if args[0] == "wake":
        return wake_hook(data, opts["agent"], min(opts["max_chars"], protocol.PACK_LIMIT),
                         plugin=opts["plugin"])
    return remind_hook(data, opts["agent"], plugin=opts["plugin"])


def project_runs_us(payload: dict[str, object], event: str) -> bool:
    """True when the project's own `.claude/settings.json` runs jmem for `event` (and can:
    `jmem` is on PATH): the plugin's hook then steps aside, so the pack comes once."""
    from journal_mem.wake import claude_files as claude_settings

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
    if event == "PostToolUse" and payload.get("tool_name") in capture.TOOLS:
        captured = capture.capture(payload)  # native memory a file tool wrote: filed now
        if captured:
            said, filed = captured
            common = gitcore.quick_common_dir(_cwd(payload)) if filed else None
            if common:  # the session's own lesson: its reminder is answered (`remind.py`)
                sessions.note_lesson(os.path.join(common, "journal-mem"),
                                     protocol.text_field(payload, "session_id"),
                                     protocol.text_field(payload, "agent_id"))
            print(protocol.context_output(event, said))
            return 0
    if event in LIVE_EVENTS:
        claim = live_check.changed(payload, event)
        if claim is None:
            return 0
        with claim:  # the session's lock: no other hook delivers the same change
            return _live(payload, event, claim.path, claim.state, max_chars)
    ctx, name = _target(payload, agent)
    if not ctx.settings.switch("hooks.wake"):
        return _off("wake-up is off (hooks.wake = false): memory not loaded")
    if agent is None and protocol.is_fork(payload):
        return _fork_start(ctx.layout, payload, event)
    known = has_memory(ctx, name)

    text = session_start(ctx.layout, ctx.policy, payload, name, event, max_chars, known)
    if text:
        _say(event, text)
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
    if event == "SubagentStop" and not protocol.text_field(payload, "agent_type"):
        return 0  # the client's own helpers (a compaction's), not an agent
    ctx, name = _target(payload, agent)
    if not ctx.settings.switch("hooks.remind"):
        return _off("reminder is off (hooks.remind = false)")
    if agent is None and protocol.is_fork(payload):
        from journal_mem.wake import fork

        name = fork.agent_of(ctx.layout.state_dir, payload) or name
    if not has_memory(ctx, name):
        return 0
    from journal_mem.wake.remind import decide

    why = decide(ctx.layout, name, payload)
    if clients.ends_turn_unseen():  # Codex, Gemini, Copilot: nothing after it this turn
        news = _pending_news(ctx, payload, event, name)
        why = "\n\n".join(t for t in (news, why) if t) or None
    if why:
        _say(event, why)
    return 0


def _pending_news(ctx: Context, payload: dict[str, object], event: str,
                  name: str) -> str | None:
    """What changed in the session's memory since it was last given it (a correction
    written after the turn's last tool call), claimed so that it is given once; None
    when nothing changed."""
    claim = live_check.changed(payload, "UserPromptSubmit")  # waits for a tool hook's lock
    if claim is None:
        return None
    with claim:
        return _delta(ctx.layout, ctx.policy, payload, event, claim.path, claim.state, name,
                      protocol.PACK_LIMIT)


def _fork_start(layout: Layout, payload: dict[str, object], event: str) -> int:
    """A fork subagent holds its parent's whole conversation, packs included: no pack, the
    parent's state as its own (`fork.py`)."""
    from journal_mem.wake import fork

    agent = fork.subagent_start(layout.state_dir, payload)
    if agent:
        record(layout, payload, agent, event, None, False)
    return 0


def _live(payload: dict[str, object], event: str, path: str, state: dict[str, object],
          max_chars: int) -> int:
    """A running session's memory changed: bring it what it lacks."""
    agent = state.get("agent")
    ctx, name = _target(payload, agent if isinstance(agent, str) else None)
    return live(ctx.layout, ctx.policy, payload, event, path, state, name, max_chars)


def has_memory(ctx: Context, agent: str) -> bool:
    """True when `agent` has memory (a folder under the memory root, or named in `agents`)."""
    from journal_mem.names import is_name

    return is_name(agent) and agent in ctx.agents


def _cwd(payload: dict[str, object]) -> str:
    cwd = protocol.text_field(payload, "cwd")
    return cwd if cwd and os.path.isdir(cwd) else os.getcwd()


def _target(payload: dict[str, object], agent: str | None) -> tuple[Context, str]:
    """The repository's context and the agent a hook works for."""
    from journal_mem.repo import light_context

    ctx = light_context(_cwd(payload))
    return ctx, _agent(payload, agent, ctx)


def _agent(payload: dict[str, object], agent: str | None, ctx: Context) -> str:
    """--agent, else the (sub)agent's name, else JMEM_AGENT, else default_agent.

    An agent of journal-mem's own plugin is `journal-mem:NAME`: its memory is NAME's.
    """
    name = agent or protocol.text_field(payload, "agent_type")
    name = name.removeprefix(PLUGIN_PREFIX)
    return settings.agent_name(name, ctx.default_agent)


def _say(event: str, text: str) -> None:
    """Give `text` to the model in the calling client's format (`clients.py`)."""
    line = clients.answer(event, text)
    if line:
        print(line)


def _off(message: str) -> int:
    print(f"journal-mem: {message}", file=sys.stderr)
    return 0


def _problem(message: str, user: bool = False) -> int:
    """A problem goes to stderr and, for the user (never the model), a `systemMessage`
    where the client reads one."""
    line = f"journal-mem warning: {message}"
    shown = clients.user_message(line) if user else None
    if shown:
        print(shown)
    print(line, file=sys.stderr)
    return 0


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
    source = protocol.text_field(payload, "source")
    session, agent_id = (protocol.text_field(payload, "session_id"),
                         protocol.text_field(payload, "agent_id"))
    path = sessions.state_path(layout.state_dir, session, agent_id)
    with sessions.SessionLock(path, WAIT) as held:
        if not held:  # its holder would record its state over ours: the pack, unrecorded
            print("journal-mem: the session's state is locked by another hook; this start "
                  "is not recorded (a later hook may repeat what it gives)", file=sys.stderr)
        return _session_start(layout, policy, payload, agent, event, max_chars, known, source,
                              path, held)


def _session_start(layout: Layout, policy: Policy, payload: dict[str, object], agent: str,
                   event: str, max_chars: int, known: bool, source: str, path: str,
                   locked: bool) -> str:
    """`session_start` under the session's lock (`locked`; without it the state at `path`
    is read, never written)."""
    save = sessions.save_state if locked else _unsaved
    from journal_mem.wake import held as held_mod
    from journal_mem.wake import pack as wake

    session, agent_id = (protocol.text_field(payload, "session_id"),
                         protocol.text_field(payload, "agent_id"))
    old = sessions.load_state(path) if source in ("resume", "compact", "fork") else None
    if source in ("resume", "fork") and old is None and known:
        parent = held_mod.resumed_session()  # a fork: what the session it copies holds
        old = sessions.load_state(sessions.state_path(layout.state_dir, parent, agent_id)) \
            if parent else None
        if old is not None and parent and sessions.reminded(layout.state_dir, parent, agent_id):
            # the copied transcript holds the parent's reminder: the fork was told too
            sessions.first_reminder(layout.state_dir, session, agent_id)
    if source in ("resume", "fork") and old is None and known:
        save(path, {"agent": agent, "team_only": False, "fork": True,
                    "started": sessions.stamp()})
        return ""
    native = held_mod.native_copy(layout, agent, event,
                                  protocol.text_field(payload, "agent_type")) if known else None
    held = held_mod.Held.of_text(native) if native is not None else None
    delta = source in ("resume", "fork") and old is not None
    if delta and old is not None:
        held = held_mod.Held(set(_strings(old.get("held"))), set(_strings(old.get("keys"))))
    watch = sessions.mtimes(watch_paths(layout, agent))  # before the pack is read
    pack = wake.build(layout, agent, policy, max_chars=max_chars, held=held, delta=delta,
                      team_only=not known)
    state = dict(old or {})
    digests = (held.digests if held else set()) | set(pack.offered)
    state.update(agent=agent, team_only=not known, held=sorted(digests), keys=pack.held_keys,
                 watch=watch)
    state.setdefault("started", sessions.stamp())
    save(path, state)
    text = pack.text if pack.news or (known and not delta) else ""
    given = pack if text and clients.reads(event) else None  # Copilot prints it to nobody
    record(layout, payload, agent, event, given, native is not None)
    return text


def _unsaved(path: str, state: dict[str, object]) -> None:
    """A start without the session's lock records nothing: its holder saves after it."""


def live(layout: Layout, policy: Policy, payload: dict[str, object], event: str, path: str,
         state: dict[str, object], name: str, max_chars: int) -> int:
    """Something a running session holds changed: inject only what it lacks, record it."""
    text = _delta(layout, policy, payload, event, path, state, name, max_chars)
    if text:
        _say(event, text)
    return 0


def _delta(layout: Layout, policy: Policy, payload: dict[str, object], event: str, path: str,
           state: dict[str, object], name: str, max_chars: int) -> str | None:
    """The lines the session lacks of its memory now (None: it holds them all); the
    state records them as given."""
    from journal_mem.wake import pack as wake
    from journal_mem.wake.held import Held, in_transcript

    held: Held | None = Held(set(_strings(state.get("held"))), set(_strings(state.get("keys"))))
    if state.pop("fork", None):  # its first prompt: the copied transcript is there now
        held = in_transcript(protocol.text_field(payload, "transcript_path"), name)
    # the times before the pack is read: a change made while it is built shows as newer
    watch = sessions.mtimes(watch_paths(layout, name))
    pack = wake.build(layout, name, policy, max_chars=max_chars, held=held,
                      delta=held is not None, team_only=state.get("team_only") is True,
                      own=frozenset(_strings(state.get("own"))))
    digests = held.digests if held else set()
    state.update(held=sorted(digests | set(pack.offered)), keys=pack.held_keys, watch=watch)
    sessions.save_state(path, state)
    if not pack.news:
        return None
    record(layout, payload, name, event, pack, False)
    return pack.text


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
        "time": sessions.stamp(),
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
