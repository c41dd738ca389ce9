"""What Claude Code loads into a session by itself: native subagent memory.

An agent whose definition (`.claude/agents/*.md` of the session's checkout,
else `~/.claude/agents/`, found by its frontmatter `name`, not its file name)
says `memory: project` gets the first 200 lines / 25 KB of
`.claude/agent-memory/<name>/MEMORY.md` of the session's own checkout in its
system prompt — a subagent, or the main session under `claude --agent NAME` —
unless auto memory is off (`CLAUDE_CODE_DISABLE_AUTO_MEMORY`, or the
`autoMemoryEnabled` setting). The wake-up hook adds only what that copy
lacks (docs/DESIGN.md, "Claude Code hooks"). Standard library only.
"""

from __future__ import annotations

import os

from journal_mem.wake.claude_files import AGENTS, SETTINGS, load_settings

NATIVE_LINES, NATIVE_BYTES = 200, 25_000  # the part of MEMORY.md Claude Code loads
NATIVE_ROOT = os.path.join(".claude", "agent-memory")  # where `memory: project` reads
_TRUE = ("1", "true", "yes", "on")


def agent_memory_scope(project: str, name: str) -> str:
    """The `memory:` scope of the agent whose frontmatter `name` is `name` ("" = none).

    Claude Code names an agent by its frontmatter, not its file name, and a
    project definition wins over the user's (`~/.claude/agents`).
    """
    for folder in (os.path.join(project, AGENTS), os.path.join(os.path.expanduser("~"), AGENTS)):
        try:
            files = sorted(f for f in os.listdir(folder) if f.endswith(".md"))
        except OSError:
            continue
        for file in files:
            front = _frontmatter(os.path.join(folder, file))
            if front.get("name") == name:
                return front.get("memory", "")
    return ""


def auto_memory_enabled(project: str) -> bool:
    """False when auto memory is off (`CLAUDE_CODE_DISABLE_AUTO_MEMORY`, or the
    `autoMemoryEnabled` setting: user, then project, then local settings)."""
    if os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "").strip().lower() in _TRUE:
        return False
    enabled = True
    for path in (os.path.join(os.path.expanduser("~"), SETTINGS), os.path.join(project, SETTINGS),
                 os.path.join(project, ".claude", "settings.local.json")):
        try:
            value = load_settings(path).get("autoMemoryEnabled")
        except Exception:  # an unreadable settings file is Claude Code's to report
            continue
        if isinstance(value, bool):
            enabled = value
    return enabled


def native_part(text: str) -> str:
    """The part of a MEMORY.md Claude Code puts in the system prompt (200 lines, 25 KB)."""
    lines = text.split("\n")[:NATIVE_LINES]
    head = "\n".join(lines).encode("utf-8")[:NATIVE_BYTES]
    return head.decode("utf-8", "ignore")


def _frontmatter(path: str) -> dict[str, str]:
    """The flat `key: value` fields of a markdown file's frontmatter, quotes removed."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(16384)
    except OSError:
        return {}
    if not text.startswith("---"):
        return {}
    fields: dict[str, str] = {}
    for line in text.split("\n")[1:]:
        if line.rstrip() == "---":
            break
        key, colon, value = line.partition(":")
        if colon and key and not key[0].isspace():
            value = value.split(" #")[0].strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            fields[key.strip()] = value.strip()
    return fields
