"""The one settings view: defaults, `.claude/journal-mem.toml`, `JMEM_*` and flags.

Precedence: flags > `JMEM_*` > the file > defaults. An empty value
(`JMEM_AGENT=`, `x = ""`, an empty flag) means unset, wherever it comes from.
A switch (a boolean setting, `JMEM_DISABLE`, `JMEM_OUTBOX`) is a TOML boolean
or 1/true/yes/on, 0/false/no/off: anything else is an error on every path,
hooks and the background distill included, never a silent "off".

Standard library only: the hook fast paths read their few settings through
`Settings` without pydantic, and parse the TOML file only when a line of it
really assigns one of them. `schema.load` validates the same merged mapping
into the `Config` model (on a snapshot miss) for every other command.
"""

from __future__ import annotations

import marshal
import os
import sys

from journal_mem.errors import ConfigError
from journal_mem.fsutil import replace_atomic

# `typing` costs ~2.5 ms to import and the annotations are never evaluated
# (`from __future__ import annotations`): keep it off the hook fast paths.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_FILE = ".claude/journal-mem.toml"

# The single source of the defaults (docs/DESIGN.md, "Configuration").
# `schema.Config` takes its field defaults from here.
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
    "consolidate": {"command": "", "timeout": 600},
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
    """A switch in the environment (`JMEM_DISABLE`, `JMEM_OUTBOX`): unset is False.

    1/true/yes/on or 0/false/no/off (any case); anything else raises
    `ConfigError`, so that a typo cannot silently leave a switch off.
    """
    value = env_value(name)
    return False if value is None else as_bool(value, name)


def agent_name(flag: str | None, default_agent: str) -> str:
    """The agent a command works for: `--agent`, else `JMEM_AGENT`, else `default_agent`."""
    return flag or env_value("JMEM_AGENT") or default_agent


def _is_unset(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def read_bytes(root: str) -> bytes:
    """The config file's bytes at `root` (b"" when there is none)."""
    try:
        with open(os.path.join(root, CONFIG_FILE), "rb") as fh:
            return fh.read()
    except (FileNotFoundError, NotADirectoryError):
        return b""


PARSED_CACHE = "config-parsed.marshal"


def parse_file(data: bytes, cache_dir: str | None = None) -> dict[str, Any]:
    """The parsed config file. Importing tomllib (and the `typing` it imports) costs a
    hook ~8 ms, more than its own work: with `cache_dir`, the parse of these very bytes
    is kept there and read back while the file is unchanged (`marshal`: built in, so
    free to import, and it holds every type TOML gives but dates, which are not kept)."""
    if not data:
        return {}
    path = os.path.join(cache_dir, PARSED_CACHE) if cache_dir else ""
    kept = _kept_parse(path, data) if path else None
    if kept is not None:
        return kept
    import tomllib

    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{CONFIG_FILE}: not valid TOML: {exc}") from exc
    if path:
        _keep_parse(path, data, parsed)
    return parsed


def _kept_parse(path: str, data: bytes) -> dict[str, Any] | None:
    """The parse kept at `path` if it is of `data`, by this Python; else None."""
    try:
        with open(path, "rb") as fh:
            version, source, parsed = marshal.loads(fh.read())
    except Exception:  # a disposable cache: missing, damaged or another format
        return None
    if version != sys.version or source != data or not isinstance(parsed, dict):
        return None
    return parsed


def _keep_parse(path: str, data: bytes, parsed: dict[str, Any]) -> None:
    try:
        replace_atomic(path, marshal.dumps((sys.version, data, parsed)))
    except (ValueError, OSError):  # a date in the file, or no room: parsed each time
        pass


def read_file(root: str) -> dict[str, Any]:
    """The parsed config file at `root` ({} when there is none)."""
    return parse_file(read_bytes(root))


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


def file_sets(data: bytes, key: str) -> bool:
    """True when a line of config text may assign `key` (commented-out defaults do not
    count): `key =`, a dotted `section.key =`, a quoted `"key" =`, or inside an inline
    table `section = { key = … }`.

    Section-blind and conservative: a hit only means "parse the file properly".
    """
    name = key.encode()
    for line in data.splitlines():
        code = line.split(b"#", 1)[0]  # a "#" inside a string only makes this say yes more
        start = code.find(name)
        while start >= 0:
            before = code[start - 1:start]
            rest = code[start + len(name):].lstrip(b"\"'").lstrip()
            if not (before.isalnum() or before in (b"_", b"-")) and rest.startswith(b"="):
                return True
            start = code.find(name, start + 1)
    return False


class Settings:
    """The settings of the checkout at `root`, merged (see the module docstring).

    The file is read once. Asking for a setting the file does not assign
    merges only the environment and the flags; the TOML file is parsed on
    the first setting it does assign (`init` writes every default commented out).
    """

    __slots__ = ("_full", "_light", "cache_dir", "file_bytes", "flags", "root")

    def __init__(self, root: str, flags: dict[str, Any] | None = None,
                 cache_dir: str | None = None) -> None:
        self.root = root
        self.flags = dict(flags or {})
        self.cache_dir = cache_dir  # where the file's parse is kept (`parse_file`)
        self.file_bytes = read_bytes(root)
        self._full: tuple[dict[str, Any], dict[str, str]] | None = None
        self._light: tuple[dict[str, Any], dict[str, str]] | None = None

    def merged(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Every setting set anywhere, and where each came from (the file parsed)."""
        if self._full is None:
            self._full = gather(self.root, self.flags,
                                parse_file(self.file_bytes, self.cache_dir))
        return self._full

    def _view(self, dotted: str) -> tuple[dict[str, Any], dict[str, str]]:
        if self._full is None and not file_sets(self.file_bytes, dotted.rpartition(".")[2]):
            if self._light is None:
                self._light = gather(self.root, self.flags, {})
            return self._light
        return self.merged()

    def get(self, dotted: str) -> Any:
        """A setting (`"hooks.guard"`, `"memory_root"`), else its default."""
        return get(self._view(dotted)[0], dotted)

    def source(self, dotted: str) -> str:
        """Where a setting's value came from: a `JMEM_*` name, the file, the command line."""
        return self._view(dotted)[1].get(dotted, "the defaults")

    def switch(self, dotted: str) -> bool:
        """A boolean setting; a value that is neither true nor false raises `ConfigError`."""
        return as_bool(self.get(dotted), f"{dotted} (from {self.source(dotted)})")

    def whole(self, dotted: str) -> int:
        """A whole-number setting; anything else raises `ConfigError`."""
        value = self.get(dotted)
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{dotted} (from {self.source(dotted)}): {value!r} is not a "
                              "whole number") from None

    def names(self, dotted: str) -> list[str]:
        """A list setting (`agents`) as strings ([] when it is not a list)."""
        value = self.get(dotted)
        return [str(v) for v in value] if isinstance(value, list) else []

    @property
    def memory_root(self) -> str:
        """`memory_root`, without surrounding slashes."""
        return str(self.get("memory_root")).strip().strip("/")


def as_bool(value: object, name: str) -> bool:
    """A switch's truth: a TOML boolean, or 1/true/yes/on and 0/false/no/off (any case).

    Anything else is an error, not "off": a typo must not silently disable a hook.
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_WORDS or text in FALSE_WORDS:
        return text in TRUE_WORDS

    raise ConfigError(f"{name}: {value!r} is not true or false")
