"""Claude Code's project files: the `.claude/settings.json` hook entries and agent files.

`jmem init` merges journal-mem's hook entries (SessionStart, SubagentStart and
SubagentStop limited by a matcher to the agents with memory and the fork
subagent, UserPromptSubmit, PostToolUse, PostToolUseFailure, PostToolBatch,
Stop; each with a short timeout) into `.claude/settings.json`,
keeping every setting and hook already there and recognising its own in shell
or exec form (`command` + `args`), and, on request, writes
`.claude/agents/NAME.md` from the agent template in `journal_mem/resources/`
(docs/DESIGN.md, "Claude Code hooks"). `jmem status` asks which entries are
missing. Standard library only (the wake-up hook reads settings through `native`).
"""

from __future__ import annotations

import json
import os
import re

from journal_mem.fsutil import create_new, replace_atomic
from journal_mem.names import NAME_PATTERN

SETTINGS = os.path.join(".claude", "settings.json")
AGENTS = os.path.join(".claude", "agents")
WAKE_COMMAND = "jmem wake --hook claude"
REMIND_COMMAND = "jmem remind --hook claude"
# The hooks run `jmem` from PATH. journal-mem is not on the package index, so the
# way to get it there names a checkout, never the bare package name.
PATH_HINT = ("install it with `pipx install DIR` or `uv tool install DIR`, DIR being a "
             "journal-mem checkout (the name is not on the package index)")
HOOKS = {
    "SessionStart": WAKE_COMMAND,
    "SubagentStart": WAKE_COMMAND,
    "UserPromptSubmit": WAKE_COMMAND,
    "PostToolUse": WAKE_COMMAND,
    "PostToolUseFailure": WAKE_COMMAND,
    "PostToolBatch": WAKE_COMMAND,
    "Stop": REMIND_COMMAND,
    "SubagentStop": REMIND_COMMAND,
}
# Events whose matcher is the agent name: only agents with memory run the hook, and the
# fork subagent, which carries its parent's conversation (and memory) on (`fork.py`).
AGENT_EVENTS = ("SubagentStart", "SubagentStop")
FORK = "fork"  # the `agent_type` of Claude Code's fork subagent
TIMEOUTS = {"SessionStart": 15, "SubagentStart": 15, "UserPromptSubmit": 5,
            "PostToolUse": 5, "PostToolUseFailure": 5, "PostToolBatch": 5, "Stop": 10,
            "SubagentStop": 10}
STATUS_MESSAGES = {"SessionStart": "journal-mem: loading memory",
                   "SubagentStart": "journal-mem: loading memory"}
# Our hook in any spelling: `jmem …`, `/venv/bin/jmem …`, `python -m journal_mem …`,
# a plugin's `…/jmem-hook …`, in shell form or exec form (command + args).
_OURS_RE = re.compile(r"(?:jmem|journal[-_]mem)\S*\s+(wake|remind)\s+--hook[ =]claude\b")


def merge_settings(root: str, agents: list[str] | None = None) -> list[str]:
    """Add or update journal-mem's hook entries in `<root>/.claude/settings.json`.

    Keeps every foreign setting and hook in place. Our hook is recognised in
    shell and exec form (`command` + `args`), so a second run adds nothing;
    it brings ours up to date (timeout, status message, and the matcher that
    limits SubagentStart/SubagentStop to the `agents` that have memory) and
    writes nothing when nothing changed (the file stays byte-identical).
    Returns what it did; raises ConfigError when the file is not a JSON object.
    """
    path = os.path.join(root, SETTINGS)
    data = load_settings(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _bad(path, '"hooks" is not an object')
    added, updated = [], []
    for event in HOOKS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise _bad(path, f'"hooks.{event}" is not a list')
        want = wanted_group(event, agents)
        ours = [g for g in entries if _group_is_ours(g, event)]
        if not ours:
            entries.append(want)
            added.append(event)
        elif _refresh(ours[0], want):
            updated.append(event)
    if not added and not updated:
        return []
    replace_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", durable=True)
    done = [f"added {', '.join(added)} hooks to {SETTINGS}"] if added else []
    return done + ([f"updated {', '.join(updated)} hooks in {SETTINGS}"] if updated else [])


def agent_matcher(agents: list[str] | None) -> str | None:
    """The SubagentStart/SubagentStop matcher naming exactly `agents` and the fork
    subagent (None: every agent)."""
    if agents is None:
        return None
    return "^(" + "|".join(re.escape(a) for a in sorted({*agents, FORK})) + ")$"


def wanted_group(event: str, agents: list[str] | None) -> dict[str, object]:
    """The matcher group journal-mem installs for `event`."""
    hook: dict[str, object] = {"type": "command", "command": HOOKS[event],
                               "timeout": TIMEOUTS[event]}
    if event in STATUS_MESSAGES:
        hook["statusMessage"] = STATUS_MESSAGES[event]
    group: dict[str, object] = {"hooks": [hook]}
    matcher = agent_matcher(agents) if event in AGENT_EVENTS else None
    return {"matcher": matcher, **group} if matcher is not None else group


def hook_command_line(hook: object) -> str:
    """A hook's command line, shell form or exec form (`command` + `args`) alike."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return ""
    args = hook.get("args")
    parts = [hook["command"], *(str(a) for a in args)] if isinstance(args, list) else \
        [hook["command"]]
    return " ".join(" ".join(parts).split())


def is_our_hook(hook: object, event: str) -> bool:
    """True when `hook` runs journal-mem's command for `event`, in any spelling."""
    match = _OURS_RE.search(hook_command_line(hook))
    return match is not None and f"jmem {match.group(1)} --hook claude" == HOOKS[event]


def _group_is_ours(group: object, event: str) -> bool:
    inner = group.get("hooks") if isinstance(group, dict) else None
    return any(is_our_hook(h, event) for h in (inner if isinstance(inner, list) else []))


def _refresh(group: dict[str, object], want: dict[str, object]) -> bool:
    """Bring our group's matcher, timeout and status message to `want`; True if changed."""
    before = json.dumps(group, sort_keys=True)
    if "matcher" in want:
        group["matcher"] = want["matcher"]
    wanted = want["hooks"]
    wanted_hook = wanted[0] if isinstance(wanted, list) else {}
    inner = group.get("hooks")
    for hook in inner if isinstance(inner, list) else []:
        if isinstance(hook, dict) and _OURS_RE.search(hook_command_line(hook)):
            for key in ("timeout", "statusMessage"):
                if key in wanted_hook and key not in hook:
                    hook[key] = wanted_hook[key]
    return json.dumps(group, sort_keys=True) != before


def missing_hooks(root: str) -> list[str]:
    """Events whose journal-mem hook `.claude/settings.json` lacks (for `status`)."""
    try:
        data = load_settings(os.path.join(root, SETTINGS))
    except Exception:
        return list(HOOKS)
    hooks = data.get("hooks")
    hooks = hooks if isinstance(hooks, dict) else {}
    missing = []
    for event in HOOKS:
        groups = hooks.get(event)
        if not any(_group_is_ours(g, event) for g in (groups if isinstance(groups, list)
                                                      else [])):
            missing.append(event)
    return missing


def plugin_enabled() -> bool:
    """True when journal-mem's Claude Code plugin is enabled in the user's settings."""
    try:
        data = load_settings(os.path.join(os.path.expanduser("~"), SETTINGS))
    except Exception:  # an unreadable user settings file is Claude Code's to report
        return False
    enabled = data.get("enabledPlugins")
    return isinstance(enabled, dict) and any(
        key.split("@")[0] == "journal-mem" and value is True for key, value in enabled.items())


def write_agent(root: str, name: str) -> str | None:
    """Create `.claude/agents/NAME.md` (memory: project); None when it already exists."""
    from journal_mem.names import is_name
    from journal_mem.resources import fill

    if not is_name(name):
        from journal_mem.errors import ConfigError

        raise ConfigError(f"--claude-agent: {name!r} is not a valid agent name "
                          f"({NAME_PATTERN})")
    path = os.path.join(root, AGENTS, f"{name}.md")
    return path if create_new(path, fill("claude-agent.md", name=name)) else None


def load_settings(path: str) -> dict[str, object]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad(path, f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _bad(path, "not a JSON object")
    return data


def _bad(path: str, why: str) -> Exception:
    from journal_mem.errors import ConfigError

    return ConfigError(f"{path}: {why}; journal-mem did not change it",
                       hint="fix the file (or pass --no-claude) and run `jmem init` again")
