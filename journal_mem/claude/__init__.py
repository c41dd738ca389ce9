"""Claude Code: hook JSON in and out, the `.claude/settings.json` merge, agent files.

Hook shapes (Claude Code hooks reference): a hook reads one JSON object on
stdin (`session_id`, `cwd`, `hook_event_name`; SessionStart adds `source` and,
under `claude --agent NAME`, `agent_type`; SubagentStart/SubagentStop add
`agent_id` and `agent_type`; Stop/SubagentStop add `stop_hook_active`).
Context goes back as `hookSpecificOutput.additionalContext`, which Claude Code
caps at 10,000 characters counted in UTF-16 code units (an emoji counts 2):
over the cap the model gets a file path and a preview instead, so every
answer is cut below it with a margin. Standard library only: the hook fast
path imports this module.
"""

from __future__ import annotations

import json
import os
import re

SETTINGS = os.path.join(".claude", "settings.json")
AGENTS = os.path.join(".claude", "agents")
CONTEXT_LIMIT = 10_000  # UTF-16 code units of additionalContext Claude Code accepts
PACK_LIMIT = 9_500  # what jmem sends at most: a margin below the cap
WAKE_COMMAND = "jmem wake --hook claude"
REMIND_COMMAND = "jmem remind --hook claude"
HOOKS = {
    "SessionStart": WAKE_COMMAND,
    "SubagentStart": WAKE_COMMAND,
    "UserPromptSubmit": WAKE_COMMAND,
    "PostToolUse": WAKE_COMMAND,
    "Stop": REMIND_COMMAND,
    "SubagentStop": REMIND_COMMAND,
}
# Events whose matcher is the agent name: only agents with memory run the hook.
AGENT_EVENTS = ("SubagentStart", "SubagentStop")
TIMEOUTS = {"SessionStart": 15, "SubagentStart": 15, "UserPromptSubmit": 5,
            "PostToolUse": 5, "Stop": 10, "SubagentStop": 10}
STATUS_MESSAGES = {"SessionStart": "journal-mem: loading memory",
                   "SubagentStart": "journal-mem: loading memory"}
# Our hook in any spelling: `jmem …`, `/venv/bin/jmem …`, `python -m journal_mem …`,
# a plugin's `…/jmem-hook …`, in shell form or exec form (command + args).
_OURS_RE = re.compile(r"(?:jmem|journal[-_]mem)\S*\s+(wake|remind)\s+--hook[ =]claude\b")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as Claude Code counts its output cap."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cut_to_units(text: str, limit: int) -> str:
    """`text` cut at a line end so that it has at most `limit` UTF-16 units."""
    if utf16_len(text) <= limit:
        return text
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        size = utf16_len(line) + 1
        if used + size > limit:
            break
        kept.append(line)
        used += size
    return "\n".join(kept) + "\n" if kept else ""


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
    """The answer adding `text` to the model's context (cut below the cap).

    The same shape serves SessionStart, SubagentStart, UserPromptSubmit,
    PostToolUse and Stop/SubagentStop (where it continues the turn as plain
    context, not as the "blocking error" `decision: block` is shown as).
    """
    return json.dumps({"hookSpecificOutput": {"hookEventName": event or "SessionStart",
                                              "additionalContext": cut_to_units(text,
                                                                                PACK_LIMIT)}},
                      ensure_ascii=False)


# --- what Claude Code loads by itself ----------------------------------------

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
            value = _load_settings(path).get("autoMemoryEnabled")
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


# --- installation (jmem init) ----------------------------------------------


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
    data = _load_settings(path)
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
    _write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    done = [f"added {', '.join(added)} hooks to {SETTINGS}"] if added else []
    return done + ([f"updated {', '.join(updated)} hooks in {SETTINGS}"] if updated else [])


def agent_matcher(agents: list[str] | None) -> str | None:
    """The SubagentStart/SubagentStop matcher naming exactly `agents` (None: every agent)."""
    if agents is None:
        return None
    return "^(" + "|".join(re.escape(a) for a in sorted(set(agents))) + ")$" if agents \
        else "^$"


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


def installed_commands(entries: object) -> set[str]:
    """The command lines (shell or exec form) of one event's hook entries."""
    found: set[str] = set()
    for entry in entries if isinstance(entries, list) else []:
        inner = entry.get("hooks") if isinstance(entry, dict) else None
        for hook in inner if isinstance(inner, list) else []:
            line = hook_command_line(hook)
            if line:
                found.add(line)
    return found


def missing_hooks(root: str) -> list[str]:
    """Events whose journal-mem hook `.claude/settings.json` lacks (for `status`)."""
    try:
        data = _load_settings(os.path.join(root, SETTINGS))
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
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return None
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(AGENT_TEMPLATE.format(name=name))
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
