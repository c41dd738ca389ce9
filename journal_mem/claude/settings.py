"""Claude Code's project files: the `.claude/settings.json` hook entries and agent files.

`jmem init` merges journal-mem's four hook entries into `.claude/settings.json`
(keeping every setting and hook already there) and, on request, writes
`.claude/agents/NAME.md` from the agent template in `journal_mem/resources/`
(docs/DESIGN.md, "Claude Code hooks"). `jmem status` asks which entries are
missing. Not on a hot path.
"""

from __future__ import annotations

import json
import os

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
    "Stop": REMIND_COMMAND,
    "SubagentStop": REMIND_COMMAND,
}


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
    _write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
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




def write_agent(root: str, name: str) -> str | None:
    """Create `.claude/agents/NAME.md` (memory: project); None when it already exists."""
    from journal_mem.names import is_name
    from journal_mem.resources import fill

    if not is_name(name):
        from journal_mem.errors import ConfigError

        raise ConfigError(f"--claude-agent: {name!r} is not a valid agent name "
                          "(^[a-z0-9][a-z0-9-]{0,63}$)")
    path = os.path.join(root, AGENTS, f"{name}.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return None
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(fill("claude-agent.md", name=name))
    return path


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


def _write_atomic(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
