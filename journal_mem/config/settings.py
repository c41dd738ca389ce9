"""Raw settings: the defaults, and the merge of file, environment and flags.

Standard library only, so that the hook fast paths can read a setting without
importing pydantic; `config.py` validates the same merged mapping into the
`Config` model for every other command. Precedence: flags > `JMEM_*` >
`.claude/journal-mem.toml` > defaults. An empty value (`JMEM_AGENT=`, `x = ""`)
means unset, wherever it comes from.
"""

from __future__ import annotations

import os

# `typing` costs ~2.5 ms to import and the annotations are never evaluated
# (`from __future__ import annotations`): keep it off the hook fast paths.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_FILE = ".claude/journal-mem.toml"

# The single source of the defaults (docs/DESIGN.md, "Configuration"). `config.Config` takes its
# field defaults from here.
DEFAULTS: dict[str, Any] = {
    "memory_root": ".claude/agent-memory",
    "default_agent": "main",
    "agents": [],
    "budget": {
        "memory_lines": 200,
        "memory_bytes": 25000,
        "line_chars": 150,
        "topic_lines": 200,
        "entry_bytes": 8192,
    },
    "distill": {
        "threshold": 10,
        "max_age_hours": 24,
        "commit": True,
        "branch": "",
        "stale_refs": "drop",
        "episodic_ttl_days": 90,
        "default_topic": "general",
    },
    "guard": {"append_only": True, "scan_secrets": True},
    "hooks": {
        "guard": True, "distill_on_commit": True, "wake": True, "remind": True,
        # the agent-loop points (journal_mem.api): a master switch, then one per point,
        # off by default so a team can roll them out one at a time
        "enabled": True, "pre_work": False, "pre_spawn": False, "post_run": False,
        "fail_diag": False, "post_retro": False,
    },
    "loop": {"min_confidence": 0.7, "pack_tokens": 2000, "repeat_failures": 3},
}

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def env_name(section: str, key: str) -> str:
    """`JMEM_<KEY>` at top level, `JMEM_<SECTION>_<KEY>` inside a section."""
    return "JMEM_" + (f"{section}_{key}" if section else key).upper()


def env_value(name: str) -> str | None:
    """An environment value, with the empty string read as unset."""
    value = os.environ.get(name, "")
    return value if value.strip() else None


def env_flag(name: str) -> bool:
    """True when the variable is set to 1/true/yes/on (any case)."""
    value = env_value(name)
    return value is not None and value.strip().lower() in TRUE_WORDS


def _is_unset(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def read_file(root: str) -> dict[str, Any]:
    """The parsed config file at `root` ({} when there is none)."""
    path = os.path.join(root, CONFIG_FILE)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return {}
    import tomllib

    from journal_mem.errors import ConfigError

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{CONFIG_FILE}: not valid TOML: {exc}") from exc


def gather(
    root: str, flags: dict[str, Any] | None = None, file_data: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Merge file, environment and flags (defaults are left to the caller).

    Returns the merged mapping and, for every dotted key set, where it came
    from (for error messages). `flags` uses dotted keys (`"budget.memory_lines"`).
    Unknown keys in the file are kept so that validation can name them.
    """
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    data = read_file(root) if file_data is None else file_data
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(DEFAULTS.get(key), dict):
            for sub, subval in value.items():
                if not _is_unset(subval):
                    merged.setdefault(key, {})[sub] = subval
                    sources[f"{key}.{sub}"] = CONFIG_FILE
        elif not _is_unset(value):
            merged[key] = value
            sources[key] = CONFIG_FILE
    for key, default in DEFAULTS.items():
        subkeys = default.items() if isinstance(default, dict) else [("", default)]
        for sub, subdefault in subkeys:
            name = env_name(key, sub) if sub else env_name("", key)
            value = env_value(name)
            if value is None:
                continue
            parsed: Any = value
            if isinstance(subdefault, list):
                parsed = [v.strip() for v in value.split(",") if v.strip()]
            if sub:
                merged.setdefault(key, {})[sub] = parsed
                sources[f"{key}.{sub}"] = name
            else:
                merged[key] = parsed
                sources[key] = name
    for dotted, value in (flags or {}).items():
        if _is_unset(value):
            continue
        section, _, sub = dotted.rpartition(".")
        if section:
            merged.setdefault(section, {})[sub] = value
        else:
            merged[sub] = value
        sources[dotted] = "command line"
    return merged, sources


def get(merged: dict[str, Any], dotted: str) -> Any:
    """A setting from a merged mapping, falling back to its default."""
    section, _, key = dotted.rpartition(".")
    if section:
        value = merged.get(section, {}).get(key)
        return DEFAULTS[section][key] if value is None else value
    value = merged.get(key)
    return DEFAULTS[key] if value is None else value


def fast_memory_root(root: str) -> str:
    """The memory root for the hook fast path, with no TOML parse unless needed."""
    return str(fast_settings(root, "memory_root")["memory_root"]).strip().strip("/")


# --- hook fast paths (guard, wake, remind, recall) ----------------------------


def file_sets(data: bytes, key: str) -> bool:
    """True when a line of config text assigns `key` (commented-out defaults do not count).

    Section-blind and conservative: a hit only means "parse the file properly".
    """
    name = key.encode()
    for line in data.splitlines():
        line = line.lstrip()
        if line.startswith(name) and line[len(name):].lstrip().startswith(b"="):
            return True
    return False


def fast_settings(root: str, *dotted: str) -> dict[str, Any]:
    """Some settings for a hook fast path (flags aside: env > file > defaults).

    The TOML file is read once and parsed only when a line really assigns one
    of the keys: `init` writes every default commented out, and `tomllib`
    costs ~7 ms to import.
    """
    keys = [d.rpartition(".") for d in dotted]
    try:
        with open(os.path.join(root, CONFIG_FILE), "rb") as fh:
            data = fh.read()
    except (FileNotFoundError, NotADirectoryError):
        data = b""
    if any(file_sets(data, key) for _, _, key in keys):
        merged = gather(root)[0]
    elif any(env_value(env_name(section, key)) is not None for section, _, key in keys):
        merged = gather(root, file_data={})[0]
    else:
        merged = {}
    return {d: get(merged, d) for d in dotted}


def as_bool(value: object, name: str) -> bool:
    """A switch's truth: a TOML boolean, or 1/true/yes/on and 0/false/no/off (any case).

    Anything else is an error, not "off": a typo must not silently disable a hook.
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_WORDS or text in FALSE_WORDS:
        return text in TRUE_WORDS
    from journal_mem.errors import ConfigError

    raise ConfigError(f"{name}: {value!r} is not true or false")
