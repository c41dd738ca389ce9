"""Claude Code's project files as the hooks read them: which `.claude/settings.json`
hook entries are journal-mem's (in shell or exec form, `command` + `args`), which are
missing, whether the plugin is enabled. `setup/claude_files.py` writes them (`jmem
init`). Standard library only (the wake-up hook reads settings through `native`).
"""

from __future__ import annotations

import os
import re

from journal_mem import jsonc
from journal_mem.errors import ConfigError

SETTINGS = os.path.join(".claude", "settings.json")
AGENTS = os.path.join(".claude", "agents")
WAKE_COMMAND = "jmem wake --hook claude"
REMIND_COMMAND = "jmem remind --hook claude"
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
# Our hook in any spelling: `jmem …`, `/venv/bin/jmem …`, `python -m journal_mem …`,
# a plugin's `…/jmem-hook …`, in shell form or exec form (command + args).
# (a pattern, compiled on first use: most hook events never ask)
OURS = r"(?:jmem|journal[-_]mem)\S*\s+(wake|remind)\s+--hook[ =]claude\b"


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
    match = re.search(OURS, hook_command_line(hook))
    return match is not None and f"jmem {match.group(1)} --hook claude" == HOOKS[event]


def group_is_ours(group: object, event: str) -> bool:
    inner = group.get("hooks") if isinstance(group, dict) else None
    return any(is_our_hook(h, event) for h in (inner if isinstance(inner, list) else []))


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
        if not any(group_is_ours(g, event) for g in (groups if isinstance(groups, list)
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


def load_settings(path: str) -> dict[str, object]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return {}
    try:
        data = jsonc.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad(path, f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise bad(path, "not a JSON object")
    return data


def bad(path: str, why: str) -> Exception:
    return ConfigError(f"{path}: {why}; journal-mem did not change it",
                       hint="fix the file (or pass --no-claude) and run `jmem init` again")
