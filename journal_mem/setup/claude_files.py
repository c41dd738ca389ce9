"""Claude Code's project files written by `jmem init`: the `.claude/settings.json` hook
entries and the agent files.

`jmem init` merges journal-mem's hook entries (SessionStart, SubagentStart and
SubagentStop limited by a matcher to the agents with memory and the fork
subagent, UserPromptSubmit, PostToolUse, PostToolUseFailure, PostToolBatch,
Stop; each with a short timeout) into `.claude/settings.json`, keeping every
setting and hook already there and recognising its own in shell or exec form
(`wake/claude_files.py`), and, on request, writes `.claude/agents/NAME.md` from
the agent template in `journal_mem/resources/`
(docs/DESIGN.md, "Claude Code hooks").
"""

from __future__ import annotations

import json
import os
import re

from journal_mem.errors import ConfigError
from journal_mem.fsutil import create_new, replace_atomic
from journal_mem.names import NAME_PATTERN, is_name
from journal_mem.resources import fill
from journal_mem.wake.claude_files import (
    AGENT_EVENTS,
    AGENTS,
    FORK,
    HOOKS,
    OURS,
    SETTINGS,
    bad,
    group_is_ours,
    hook_command_line,
    load_settings,
)

# The hooks run `jmem` from PATH. journal-mem is not on the package index, so the
# way to get it there names a checkout, never the bare package name.
PATH_HINT = ("install it with `pipx install DIR` or `uv tool install DIR`, DIR being a "
             "journal-mem checkout (the name is not on the package index)")
TIMEOUTS = {"SessionStart": 15, "SubagentStart": 15, "UserPromptSubmit": 5,
            "PostToolUse": 5, "PostToolUseFailure": 5, "PostToolBatch": 5, "Stop": 10,
            "SubagentStop": 10}
STATUS_MESSAGES = {"SessionStart": "journal-mem: loading memory",
                   "SubagentStart": "journal-mem: loading memory"}
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
        raise bad(path, '"hooks" is not an object')
    added, updated = [], []
    for event in HOOKS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise bad(path, f'"hooks.{event}" is not a list')
        want = wanted_group(event, agents)
        ours = [g for g in entries if group_is_ours(g, event)]
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


def _refresh(group: dict[str, object], want: dict[str, object]) -> bool:
    """Bring our group's matcher, timeout and status message to `want`; True if changed."""
    before = json.dumps(group, sort_keys=True)
    if "matcher" in want:
        group["matcher"] = want["matcher"]
    wanted = want["hooks"]
    wanted_hook = wanted[0] if isinstance(wanted, list) else {}
    inner = group.get("hooks")
    for hook in inner if isinstance(inner, list) else []:
        if isinstance(hook, dict) and re.search(OURS, hook_command_line(hook)):
            for key in ("timeout", "statusMessage"):
                if key in wanted_hook and key not in hook:
                    hook[key] = wanted_hook[key]
    return json.dumps(group, sort_keys=True) != before


def write_agent(root: str, name: str) -> str | None:
    """Create `.claude/agents/NAME.md` (memory: project); None when it already exists."""
    if not is_name(name):
        raise ConfigError(f"--claude-agent: {name!r} is not a valid agent name "
                          f"({NAME_PATTERN})")
    path = os.path.join(root, AGENTS, f"{name}.md")
    return path if create_new(path, fill("claude-agent.md", name=name)) else None


