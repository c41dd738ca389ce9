"""Claude Code: hook JSON in and out, the `.claude/settings.json` merge, agent files.

Hook shapes (Claude Code hooks reference): a hook reads one JSON object on
stdin (`session_id`, `cwd`, `hook_event_name`; SubagentStart/SubagentStop add
`agent_id` and `agent_type`; Stop/SubagentStop add `stop_hook_active`).
SessionStart/SubagentStart inject context with `hookSpecificOutput`; a Stop
hook keeps the agent going with `{"decision": "block", "reason": …}`.
Standard library only: the hook fast path imports this module.
"""

from __future__ import annotations

import json
import os

from journal_mem.fsutil import create_new, replace_atomic

SETTINGS = os.path.join(".claude", "settings.json")
AGENTS = os.path.join(".claude", "agents")
CONTEXT_LIMIT = 10_000  # characters of additionalContext Claude Code accepts
WAKE_COMMAND = "jmem wake --hook claude"
REMIND_COMMAND = "jmem remind --hook claude"
HOOKS = {
    "SessionStart": WAKE_COMMAND,
    "SubagentStart": WAKE_COMMAND,
    "Stop": REMIND_COMMAND,
    "SubagentStop": REMIND_COMMAND,
}


class HookInputError(ValueError):
    """The hook's stdin is not the JSON object Claude Code sends."""


def read_input(data: bytes) -> dict[str, object]:
    """The hook input object; raises HookInputError on anything else."""
    try:
        value = json.loads(data.decode("utf-8")) if data.strip() else None
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookInputError(f"hook input is not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise HookInputError("hook input is not a JSON object")
    return value


def text_field(payload: dict[str, object], name: str) -> str:
    """A string field of the hook input ("" when absent or not a string)."""
    value = payload.get(name)
    return value if isinstance(value, str) else ""


def context_output(event: str, text: str) -> str:
    """The SessionStart/SubagentStart answer injecting `text` (cut to the limit)."""
    if len(text) > CONTEXT_LIMIT:
        text = text[: CONTEXT_LIMIT - 1].rsplit("\n", 1)[0] + "\n"
    return json.dumps({"hookSpecificOutput": {"hookEventName": event or "SessionStart",
                                              "additionalContext": text}},
                      ensure_ascii=False)


def block_output(reason: str) -> str:
    """The Stop/SubagentStop answer that keeps the agent going with `reason`."""
    return json.dumps({"decision": "block", "reason": reason}, ensure_ascii=False)


# --- installation (jmem init) ----------------------------------------------


def merge_settings(root: str) -> list[str]:
    """Add journal-mem's hook entries to `<root>/.claude/settings.json`.

    Keeps every existing setting and hook in place, adds only the events
    that do not run the command yet, and writes nothing when nothing is
    missing (a second run leaves the file byte-identical). Returns what it
    did; raises ConfigError when the file is not a JSON object.
    """
    path = os.path.join(root, SETTINGS)
    data = _load_settings(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _bad(path, '"hooks" is not an object')
    added = []
    for event, command in HOOKS.items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise _bad(path, f'"hooks.{event}" is not a list')
        if command not in installed_commands(entries):
            entries.append({"hooks": [{"type": "command", "command": command}]})
            added.append(event)
    if not added:
        return []
    replace_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", durable=True)
    return [f"added {', '.join(added)} hooks to {SETTINGS}"]


def installed_commands(entries: object) -> set[str]:
    """The commands of one event's hook entries."""
    found: set[str] = set()
    for entry in entries if isinstance(entries, list) else []:
        inner = entry.get("hooks") if isinstance(entry, dict) else None
        for hook in inner if isinstance(inner, list) else []:
            if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                found.add(hook["command"].strip())
    return found


def missing_hooks(root: str) -> list[str]:
    """Events whose journal-mem hook `.claude/settings.json` lacks (for `status`)."""
    try:
        data = _load_settings(os.path.join(root, SETTINGS))
    except Exception:
        return list(HOOKS)
    hooks = data.get("hooks")
    hooks = hooks if isinstance(hooks, dict) else {}
    return [e for e, cmd in HOOKS.items() if cmd not in installed_commands(hooks.get(e))]


AGENT_TEMPLATE = """\
---
name: {name}
description: {name} agent. Remembers what it learns in this repository through journal-mem.
memory: project
---

You are the {name} agent. Your memory is loaded when you start: MEMORY.md, plus
what journal-mem adds (lessons not yet distilled, corrections).

When you finish a task, record what you LEARNED (not what you did) as one lesson:

    jmem write --agent {name} --topic TOPIC --title "One-line lesson" <<'EOF'
    Why it is true and how to apply it.
    EOF

To correct a fact, write the right one with `--supersedes KEY` (the key is in
brackets at the end of each MEMORY.md line). Never edit files under
.claude/agent-memory/ by hand: they are generated from the journal.
"""


def write_agent(root: str, name: str) -> str | None:
    """Create `.claude/agents/NAME.md` (memory: project); None when it already exists."""
    from journal_mem.names import is_name

    if not is_name(name):
        from journal_mem.errors import ConfigError

        raise ConfigError(f"--claude-agent: {name!r} is not a valid agent name "
                          "(^[a-z0-9][a-z0-9-]{0,63}$)")
    path = os.path.join(root, AGENTS, f"{name}.md")
    return path if create_new(path, AGENT_TEMPLATE.format(name=name)) else None


def _load_settings(path: str) -> dict[str, object]:
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
