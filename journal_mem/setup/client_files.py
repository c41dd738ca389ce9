"""Codex CLI's, Gemini CLI's and Qwen Code's project files: the hook entries `jmem init`
merges in, and the trust record Codex wants before it runs them.

All three read hooks in Claude Code's nested shape (`{"hooks": {EVENT: [{"matcher"?,
"hooks": [{"type": "command", "command", "timeout"}]}]}}`): Codex from
`.codex/hooks.json`, Gemini from the `hooks` key of `.gemini/settings.json` (its
timeouts in milliseconds, a `name` shown when it warns about project hooks), Qwen Code
from the `hooks` key of `.qwen/settings.json` (Claude Code's event names, timeouts in
milliseconds). Each entry of ours is recognised by its command (`jmem wake|remind
--hook CLIENT`, in any spelling), so a second `init` adds nothing and a foreign hook
is never touched.

Codex runs a project's hooks only when the user trusts the project and each hook: a
`[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash` in the user's own
`config.toml`, the sha256 of the hook's canonical JSON. A team's repository cannot
grant that for its users, so jmem never writes the user's config: `jmem codex-trust`
prints the records for this checkout, to be reviewed and appended by the user
(docs/clients.md).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass

from journal_mem.errors import ConfigError
from journal_mem.fsutil import replace_atomic
from journal_mem.hashes import sha256
from journal_mem.wake.claude_files import hook_command_line, load_settings


@dataclass(frozen=True)
class ClientHooks:
    """Where one client keeps its project hooks and which of ours it runs."""

    client: str  # the value of --hook
    file: str  # relative to the checkout
    events: dict[str, tuple[str, int]]  # event -> (command, timeout in the client's unit)
    names: bool = False  # the client shows a `name` per hook


CODEX = ClientHooks("codex", os.path.join(".codex", "hooks.json"), {
    "SessionStart": ("jmem wake --hook codex", 15),
    "UserPromptSubmit": ("jmem wake --hook codex", 5),
    "PostToolUse": ("jmem wake --hook codex", 5),
    "Stop": ("jmem remind --hook codex", 10),
})
GEMINI = ClientHooks("gemini", os.path.join(".gemini", "settings.json"), {
    "SessionStart": ("jmem wake --hook gemini", 15_000),
    "BeforeAgent": ("jmem wake --hook gemini", 5_000),
    "AfterTool": ("jmem wake --hook gemini", 5_000),
    "AfterAgent": ("jmem remind --hook gemini", 10_000),
}, names=True)
# Qwen Code fires PostToolBatch too, but adds its answer to every result of the batch:
# PostToolUse alone gives a change once
QWEN = ClientHooks("qwen", os.path.join(".qwen", "settings.json"), {
    "SessionStart": ("jmem wake --hook qwen", 15_000),
    "UserPromptSubmit": ("jmem wake --hook qwen", 5_000),
    "PostToolUse": ("jmem wake --hook qwen", 5_000),
    "Stop": ("jmem remind --hook qwen", 10_000),
}, names=True)
CLIENT_HOOKS = {"codex": CODEX, "gemini": GEMINI, "qwen": QWEN}
_OURS_RE = re.compile(
    r"(?:jmem|journal[-_]mem)\S*\s+(wake|remind)\s+--hook[ =](codex|gemini|qwen)\b")


def wanted_hook(spec: ClientHooks, event: str) -> dict[str, object]:
    command, timeout = spec.events[event]
    hook: dict[str, object] = {"type": "command", "command": command, "timeout": timeout}
    if spec.names:
        hook["name"] = f"journal-mem {command.split()[1]}"
    return hook


def is_ours(hook: object, spec: ClientHooks) -> bool:
    match = _OURS_RE.search(hook_command_line(hook))
    return match is not None and match.group(2) == spec.client


def merge_hooks(root: str, spec: ClientHooks) -> list[str]:
    """Add journal-mem's hook entries to the client's file in `root`, keeping every other
    setting and hook; writes nothing when they are all there. Returns what it did."""
    path = os.path.join(root, spec.file)
    try:
        data = load_settings(path)
    except ConfigError as exc:
        raise ConfigError(exc.message, hint=_HINT) from exc
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _bad(path, '"hooks" is not an object')
    added = []
    for event in spec.events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise _bad(path, f'"hooks.{event}" is not a list')
        if not _has_ours(groups, spec):
            groups.append({"hooks": [wanted_hook(spec, event)]})
            added.append(event)
    if not added:
        return []
    os.makedirs(os.path.dirname(path), exist_ok=True)
    replace_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", durable=True)
    return [f"added {', '.join(added)} hooks to {spec.file}"]


def missing_hooks(root: str, spec: ClientHooks) -> list[str]:
    """The events whose journal-mem hook the client's file lacks (all, when unreadable)."""
    try:
        hooks = load_settings(os.path.join(root, spec.file)).get("hooks")
    except ConfigError:
        return list(spec.events)
    hooks = hooks if isinstance(hooks, dict) else {}
    return [event for event in spec.events if not _has_ours(hooks.get(event), spec)]


def _has_ours(groups: object, spec: ClientHooks) -> bool:
    """True when one of an event's matcher groups holds journal-mem's hook."""
    for group in groups if isinstance(groups, list) else []:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if any(is_ours(h, spec) for h in (inner if isinstance(inner, list) else [])):
            return True
    return False


# --- Codex's trust records -----------------------------------------------------------

# events whose matcher Codex leaves out of the hash, and those whose timeout it clamps
_NO_MATCHER = {"user_prompt_submit", "stop", "interrupt"}
_SHORT_TIMEOUT = {"session_end", "interrupt"}


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", event).lower()


def hook_hash(event: str, group: dict[str, object], handler: dict[str, object]) -> str:
    """The `trusted_hash` Codex records for one command hook: sha256 of the canonical
    (sorted keys, compact) JSON of {event_name, matcher?, hooks: [the normalised hook]}."""
    label = _snake(event)
    timeout = handler.get("timeout")
    seconds = int(timeout) if isinstance(timeout, int | float) and timeout else 600
    seconds = min(max(seconds, 1), 3) if label in _SHORT_TIMEOUT else max(seconds, 1)
    normal: dict[str, object] = {"type": "command", "command": handler.get("command"),
                                 "timeout": seconds, "async": bool(handler.get("async", False))}
    if handler.get("statusMessage"):
        normal["statusMessage"] = handler["statusMessage"]
    identity: dict[str, object] = {"event_name": label, "hooks": [normal]}
    matcher = None if label in _NO_MATCHER else group.get("matcher")
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + sha256(canonical.encode()).hexdigest()


def vouched(event: str, handler: dict[str, object]) -> bool:
    """The handler is exactly what `jmem init --codex` writes for `event`: its command,
    nothing before or after it (`curl … | sh; jmem wake --hook codex` is the user's to
    review, not ours to vouch for)."""
    want = CODEX.events.get(event)
    return want is not None and handler.get("command") == want[0] and "args" not in handler


def unvouched(root: str) -> list[str]:
    """Hooks of `root`'s `.codex/hooks.json` that run journal-mem's command but are not
    exactly what `init` writes (`curl … | sh; jmem wake --hook codex`): one line each."""
    path = os.path.join(root, CODEX.file)
    hooks = load_settings(path).get("hooks")
    out = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for handler in inner if isinstance(inner, list) else []:
                if isinstance(handler, dict) and is_ours(handler, CODEX) \
                        and not vouched(event, handler):
                    out.append(f"{path}: {event} runs `{hook_command_line(handler)}`")
    return out


def trust_records(root: str) -> dict[str, str]:
    """`<hooks.json path>:<event>:<group>:<handler>` -> hash, for journal-mem's hooks in
    `root`'s `.codex/hooks.json`, each exactly as `init` writes it (any other hook, one
    that merely contains our command included, is the user's to review)."""
    path = os.path.join(root, CODEX.file)
    hooks = load_settings(path).get("hooks")
    out: dict[str, str] = {}
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(group, dict) and isinstance(handler, dict) and \
                        handler.get("type") == "command" and vouched(event, handler):
                    out[f"{path}:{_snake(event)}:{g}:{h}"] = hook_hash(event, group, handler)
    return out


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, once non-ASCII stays as it is:
    JSON would write an emoji as a surrogate pair, which TOML refuses)."""
    return json.dumps(text, ensure_ascii=False)


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def trust_toml(root: str) -> tuple[str, list[str]]:
    """The `config.toml` lines that trust `root` and journal-mem's Codex hooks in it, less
    what `$CODEX_HOME/config.toml` already holds; and the records it holds with another
    value (they must be edited by hand: a TOML table cannot be given twice)."""
    try:
        with open(os.path.join(codex_home(), "config.toml"), "rb") as fh:
            have = tomllib.load(fh)
    except FileNotFoundError:
        have = {}
    except (OSError, tomllib.TOMLDecodeError):
        have = {}
    lines: list[str] = []
    clash: list[str] = []
    projects = have.get("projects") if isinstance(have.get("projects"), dict) else {}
    project = projects.get(root) if isinstance(projects, dict) else None
    if not isinstance(project, dict):
        lines += [f"[projects.{_toml_string(root)}]", 'trust_level = "trusted"']
    elif project.get("trust_level") != "trusted":
        clash.append(f'[projects.{_toml_string(root)}] trust_level = "trusted"')
    hooks = have.get("hooks") if isinstance(have.get("hooks"), dict) else {}
    state = hooks.get("state") if isinstance(hooks, dict) else None
    state = state if isinstance(state, dict) else {}
    for key, digest in trust_records(root).items():
        known = state.get(key)
        if not isinstance(known, dict):
            lines += [f"[hooks.state.{_toml_string(key)}]",
                      f"trusted_hash = {_toml_string(digest)}"]
        elif known.get("trusted_hash") != digest:
            clash.append(f"[hooks.state.{_toml_string(key)}] trusted_hash = "
                         f"{_toml_string(digest)}")
    return ("\n".join(lines) + "\n" if lines else ""), clash


_HINT = "fix the file (or leave out --codex/--gemini) and run `jmem init` again"


def _bad(path: str, why: str) -> Exception:
    return ConfigError(f"{path}: {why}; journal-mem did not change it", hint=_HINT)
