"""The validated configuration (docs/DESIGN.md, "Configuration").

The schema is a set of named tuples whose annotations carry the constraints
and each setting's comment (`Doc`); pydantic validates the merged mapping from
`settings.gather` against them. Named tuples, not dataclasses: a frozen
dataclass costs ~1 ms to create (its methods are compiled from source), seven
of them ~6 ms of every command that reads the config; a named tuple ~0.1 ms.

Importing pydantic costs more than the whole budget of a quick command
(~80 ms), so a validated snapshot is cached in the machine-local state dir,
keyed by the exact inputs (config file bytes, `JMEM_*` environment, flags): on
a hit the tuples are built with the standard library alone; any change of
input validates again through pydantic.
"""

from __future__ import annotations

import os

from journal_mem import jsonc
from journal_mem.errors import ConfigError
from journal_mem.fsutil import replace_atomic
from journal_mem.hashes import sha256
from journal_mem.names import is_name
from journal_mem.settings import CONFIG_FILE, DEFAULTS, Settings
from journal_mem.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:  # resolved by pydantic at validation time (`_resolvable`)
    from types import ModuleType
    from typing import Annotated, Any, Literal

    from annotated_types import Ge, Predicate

_B, _D, _G, _H = DEFAULTS["budget"], DEFAULTS["distill"], DEFAULTS["guard"], DEFAULTS["hooks"]
_L = DEFAULTS["loop"]
_C = DEFAULTS["consolidate"]
CACHE_NAME = "config-snapshot.json"


def valid_name(value: str) -> bool:
    """An agent name: ^[a-z0-9][a-z0-9-]{0,63}$."""
    return is_name(value)


def relative_inside_repo(value: str) -> bool:
    """A relative path inside the work tree, without '..', and not in a `.git` folder
    (any case: a case-insensitive file system maps `.GIT` to the git dir too), where the
    distiller would write into git's own hooks, refs and objects."""
    parts = value.strip("/").split("/")
    return bool(value.strip("/")) and not value.startswith(("/", "~")) and not any(
        p in ("", ".", "..") or p.lower() == ".git" for p in parts
    )


class Doc(str):
    """A setting's comment, as `init` writes it above the setting (annotation metadata
    pydantic ignores)."""


class Budget(NamedTuple):
    """How big memory may grow."""

    memory_lines: Annotated[int, Ge(10), Doc("MEMORY.md line budget")] = _B["memory_lines"]
    memory_bytes: Annotated[int, Ge(1000), Doc("MEMORY.md byte budget")] = _B["memory_bytes"]
    line_chars: Annotated[int, Ge(40), Doc("longest line in MEMORY.md")] = _B["line_chars"]
    topic_lines: Annotated[int, Ge(10), Doc("line budget of a topic file")] = \
        _B["topic_lines"]
    entry_bytes: Annotated[int, Ge(256), Doc("largest journal entry body, in bytes")] = \
        _B["entry_bytes"]


class Distill(NamedTuple):
    """When and how the distiller runs."""

    threshold: Annotated[int, Ge(1), Doc("pending lessons that start a distill")] = \
        _D["threshold"]
    max_age_hours: Annotated[float, Ge(0), Doc("a pending lesson this old starts a distill")] \
        = _D["max_age_hours"]
    commit: Annotated[bool, Doc("commit the distilled files")] = _D["commit"]
    branch: Annotated[str, Doc("the only branch the distiller writes on")] = _D["branch"]
    stale_refs: Annotated[Literal["drop", "flag"],
                          Doc('"drop" facts whose refs are all gone, or only "flag" them')] = \
        _D["stale_refs"]
    episodic_ttl_days: Annotated[int, Ge(1), Doc("episodic facts older than this drop")] = \
        _D["episodic_ttl_days"]
    default_topic: Annotated[str, Predicate(valid_name),
                             Doc("topic of a plain journal entry (no frontmatter) whose file "
                                 "name starts with none of its agent's topics")] = \
        _D["default_topic"]


class Guard(NamedTuple):
    """What the pre-commit guard refuses."""

    append_only: Annotated[bool, Doc("refuse edits of committed journal entries")] = \
        _G["append_only"]
    scan_secrets: Annotated[bool, Doc("refuse lessons that hold secrets")] = _G["scan_secrets"]


class Hooks(NamedTuple):
    """Which hooks and loop points run."""

    guard: Annotated[bool, Doc("git pre-commit/pre-merge-commit guard")] = _H["guard"]
    distill_on_commit: Annotated[bool,
                                 Doc("post-commit starts a background distill when due")] = \
        _H["distill_on_commit"]
    wake: Annotated[bool, Doc("SessionStart/SubagentStart loads memory")] = _H["wake"]
    remind: Annotated[bool, Doc("Stop/SubagentStop asks for a lesson")] = _H["remind"]
    enabled: Annotated[bool, Doc("master switch of the agent-loop points below")] = \
        _H["enabled"]
    pre_work: Annotated[bool, Doc("loop point: facts that bear on the queued work")] = \
        _H["pre_work"]
    pre_spawn: Annotated[bool, Doc("loop point: a worker's memory pack in CLAUDE.md")] = \
        _H["pre_spawn"]
    post_run: Annotated[bool, Doc("loop point: record 0-3 lessons of a passed run")] = \
        _H["post_run"]
    fail_diag: Annotated[bool, Doc("loop point: earlier failures like this one")] = \
        _H["fail_diag"]
    post_retro: Annotated[bool, Doc("loop point: a retrospective becomes lessons")] = \
        _H["post_retro"]


class Loop(NamedTuple):
    """What the orchestrator's loop points give."""

    min_confidence: Annotated[float, Ge(0), Doc("confidence floor of a worker's pack")] = \
        _L["min_confidence"]
    pack_tokens: Annotated[int, Ge(100), Doc("token budget of a worker's pack")] = \
        _L["pack_tokens"]
    repeat_failures: Annotated[
        int, Ge(2), Doc("failures of one signature that make a 'repeated failure' lesson")] = \
        _L["repeat_failures"]


class Consolidate(NamedTuple):
    """The curator."""

    command: Annotated[str, Doc("the curator `consolidate --propose` runs (the plan on "
                                "stdin)")] = _C["command"]
    timeout: Annotated[int, Ge(1),
                       Doc("seconds the curator may run before its process group is ended")] \
        = _C["timeout"]


class Config(NamedTuple):
    """Every setting, validated. Build it with `load`."""

    memory_root: Annotated[str, Predicate(relative_inside_repo),
                           Doc("where agent memory lives, relative to the repository top")] = \
        DEFAULTS["memory_root"]
    default_agent: Annotated[str, Predicate(valid_name),
                             Doc("the agent used when none is named")] = \
        DEFAULTS["default_agent"]
    agents: Annotated[tuple[Annotated[str, Predicate(valid_name)], ...],
                      Doc('agents "applies_to = all" reaches besides agent folders')] = ()
    budget: Budget = Budget()
    distill: Distill = Distill()
    guard: Guard = Guard()
    hooks: Hooks = Hooks()
    loop: Loop = Loop()
    consolidate: Consolidate = Consolidate()

    def as_dict(self) -> dict[str, Any]:
        """Plain values (tuples as lists), as in the config file."""
        data = self._asdict()
        for name in SECTIONS:
            data[name] = data[name]._asdict()
        data["agents"] = list(self.agents)
        return data


SECTIONS: dict[str, type[Any]] = {
    "budget": Budget, "distill": Distill, "guard": Guard, "hooks": Hooks, "loop": Loop,
    "consolidate": Consolidate,
}


def _from_plain(data: dict[str, Any]) -> Config:
    """Rebuild a Config from a validated snapshot, with the standard library only."""
    sections = {name: cls(**data[name]) for name, cls in SECTIONS.items()}
    return Config(memory_root=data["memory_root"], default_agent=data["default_agent"],
                  agents=tuple(data["agents"]), **sections)


_MESSAGES = {
    "valid_name": "must match ^[a-z0-9][a-z0-9-]{0,63}$",
    "relative_inside_repo": "must be a relative path inside the work tree, without '..' "
                           "and outside any .git folder",
}


def _resolvable() -> ModuleType:
    """The annotations are strings: make the names they use resolvable in this module
    (pydantic and `typing.get_type_hints` evaluate them here). Neither `typing` nor
    `annotated_types` is imported before: reading the config snapshot needs neither.
    Returns `typing`."""
    import typing

    import annotated_types

    for name, value in (("Annotated", typing.Annotated), ("Any", typing.Any),
                        ("Literal", typing.Literal), ("Ge", annotated_types.Ge),
                        ("Predicate", annotated_types.Predicate)):
        globals().setdefault(name, value)
    return typing


def docs(cls: type[Any]) -> dict[str, str]:
    """Each setting of a section (or of `Config`) with its comment (`Doc`)."""
    hints = _resolvable().get_type_hints(cls, include_extras=True)
    return {name: next((m for m in getattr(hints[name], "__metadata__", ())
                        if isinstance(m, Doc)), "") for name in cls._fields}


def validate(merged: dict[str, Any], sources: dict[str, str]) -> Config:
    """Validate a merged mapping; every problem becomes one line naming field and source.
    Imports pydantic (~80 ms): only on a snapshot miss."""
    from pydantic import TypeAdapter, ValidationError

    _resolvable()
    for name in SECTIONS:  # a list would fill a named tuple's fields by position
        if name in merged and not isinstance(merged[name], dict):
            where = sources.get(name) or CONFIG_FILE
            raise ConfigError(f"config: {name}: must be a table of settings (from {where})",
                              hint=f"fix {CONFIG_FILE} or the JMEM_* variable")
    try:
        config: Config = TypeAdapter(Config).validate_python(merged)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            dotted = ".".join(str(p) for p in err["loc"] if not isinstance(p, int))
            where = sources.get(dotted) or sources.get(dotted.split(".")[0]) or CONFIG_FILE
            msg = err["msg"]
            if err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
                msg = "unknown setting"
            elif err["type"] == "predicate_failed":
                msg = next((m for k, m in _MESSAGES.items() if k in msg), msg)
            lines.append(f"config: {dotted}: {msg} (from {where})")
        hint = f"fix {CONFIG_FILE} or the JMEM_* variable"
        raise ConfigError("\n".join(lines), hint=hint) from exc
    return config


def _snapshot_key(file_bytes: bytes, flags: dict[str, Any] | None) -> str:
    """The exact inputs of a validation (compared whole: no hash to collide)."""
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("JMEM_"))
    return jsonc.dumps([file_bytes.decode("utf-8", "surrogateescape"), env,
                       sorted((flags or {}).items())], default=str)


def snapshot_path(state_dir: str, flags: dict[str, Any] | None) -> str:
    """Where the snapshot for these flags lives: one per set of flags, so that
    `distill --no-commit` and `distill` do not evict each other's."""
    if not flags:
        return os.path.join(state_dir, "cache", CACHE_NAME)

    tag = sha256(jsonc.dumps(sorted(flags.items()), default=str).encode()).hexdigest()
    return os.path.join(state_dir, "cache", f"{CACHE_NAME.removesuffix('.json')}-{tag[:12]}.json")


def load(root: str, flags: dict[str, Any] | None = None, state_dir: str | None = None) -> Config:
    """The configuration of the checkout at `root`: flags > JMEM_* > file > defaults.

    With `state_dir`, a validated snapshot of these exact inputs is reused.
    """
    view = Settings(root, flags)
    cache = snapshot_path(state_dir, view.flags) if state_dir else None
    key = _snapshot_key(view.file_bytes, view.flags)
    if cache is not None:
        try:
            with open(cache, encoding="utf-8") as fh:
                snap = jsonc.loads(fh.read())
            if snap.get("key") == key:
                return _from_plain(snap["config"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    config = validate(*view.merged())
    if cache is not None:
        _save_snapshot(cache, key, config)
    return config


def _save_snapshot(path: str, key: str, config: Config) -> None:
    try:
        replace_atomic(path, jsonc.dumps({"key": key, "config": config.as_dict()}))
    except OSError:
        pass  # the snapshot is only a cache


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return jsonc.dumps(value, ensure_ascii=False)


def render_file(branch: str, agents: list[str]) -> str:
    """The commented config file `init` writes: every default shown, commented out."""
    out = [
        "# journal-mem configuration. Every setting is shown with its",
        "# default, commented out. JMEM_<KEY> / JMEM_<SECTION>_<KEY> environment",
        "# variables override this file; command-line flags override both.",
        "# An empty value means unset.",
        "",
    ]
    chosen: dict[str, object] = {"distill.branch": branch, "agents": sorted(set(agents))}

    def emit(cls: type[Any], prefix: str) -> None:
        for name, comment in docs(cls).items():
            if name in SECTIONS and not prefix:
                continue
            default = cls._field_defaults[name]
            value = chosen.get(prefix + name)
            out.append(f"# {comment}")
            if value:
                out.append(f"{name} = {_toml_value(value)}")
            else:
                out.append(f"# {name} = {_toml_value(default)}")

    emit(Config, "")
    for name, cls in SECTIONS.items():
        out.extend(["", f"[{name}]"])
        emit(cls, f"{name}.")
    return "\n".join(out) + "\n"
