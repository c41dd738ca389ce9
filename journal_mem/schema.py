"""The validated configuration (docs/DESIGN.md, "Configuration").

The schema is a set of frozen dataclasses whose annotations carry the
constraints; pydantic validates the merged mapping from `settings.gather`
against them. Importing pydantic costs more than the whole budget of a quick
command (~80 ms), so a validated snapshot is cached in the machine-local
state dir, keyed by the exact inputs (config file bytes, `JMEM_*`
environment, flags): on a hit the dataclasses are built with the standard
library alone; any change of input validates again through pydantic.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Annotated, Any, Literal

from journal_mem.errors import ConfigError
from journal_mem.fsutil import replace_atomic
from journal_mem.names import is_name
from journal_mem.settings import CONFIG_FILE, DEFAULTS, Settings

if TYPE_CHECKING:  # resolved by pydantic at validation time (see validate)
    from annotated_types import Ge, Predicate

_B, _D, _G, _H = DEFAULTS["budget"], DEFAULTS["distill"], DEFAULTS["guard"], DEFAULTS["hooks"]
_L = DEFAULTS["loop"]
_C = DEFAULTS["consolidate"]
_STRICT = {"extra": "forbid"}
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


def doc(text: str) -> Any:
    """Field metadata: the comment `init` writes above the setting."""
    return {"doc": text}


@dataclass(frozen=True)
class Budget:
    __pydantic_config__ = _STRICT
    memory_lines: Annotated[int, Ge(10)] = field(
        default=_B["memory_lines"], metadata=doc("MEMORY.md line budget"))
    memory_bytes: Annotated[int, Ge(1000)] = field(
        default=_B["memory_bytes"], metadata=doc("MEMORY.md byte budget"))
    line_chars: Annotated[int, Ge(40)] = field(
        default=_B["line_chars"], metadata=doc("longest line in MEMORY.md"))
    topic_lines: Annotated[int, Ge(10)] = field(
        default=_B["topic_lines"], metadata=doc("line budget of a topic file"))
    entry_bytes: Annotated[int, Ge(256)] = field(
        default=_B["entry_bytes"], metadata=doc("largest journal entry body, in bytes"))


@dataclass(frozen=True)
class Distill:
    __pydantic_config__ = _STRICT
    threshold: Annotated[int, Ge(1)] = field(
        default=_D["threshold"], metadata=doc("pending lessons that start a distill"))
    max_age_hours: Annotated[float, Ge(0)] = field(
        default=_D["max_age_hours"], metadata=doc("a pending lesson this old starts a distill"))
    commit: bool = field(default=_D["commit"], metadata=doc("commit the distilled files"))
    branch: str = field(
        default=_D["branch"], metadata=doc("the only branch the distiller writes on"))
    stale_refs: Literal["drop", "flag"] = field(
        default=_D["stale_refs"],
        metadata=doc('"drop" facts whose refs are all gone, or only "flag" them'))
    episodic_ttl_days: Annotated[int, Ge(1)] = field(
        default=_D["episodic_ttl_days"], metadata=doc("episodic facts older than this drop"))
    default_topic: Annotated[str, Predicate(valid_name)] = field(
        default=_D["default_topic"],
        metadata=doc("topic of a plain journal entry (no frontmatter) whose file name starts "
                     "with none of its agent's topics"))


@dataclass(frozen=True)
class Guard:
    __pydantic_config__ = _STRICT
    append_only: bool = field(
        default=_G["append_only"], metadata=doc("refuse edits of committed journal entries"))
    scan_secrets: bool = field(
        default=_G["scan_secrets"], metadata=doc("refuse lessons that hold secrets"))


@dataclass(frozen=True)
class Hooks:
    __pydantic_config__ = _STRICT
    guard: bool = field(default=_H["guard"], metadata=doc("git pre-commit/pre-merge-commit guard"))
    distill_on_commit: bool = field(
        default=_H["distill_on_commit"],
        metadata=doc("post-commit starts a background distill when due"))
    wake: bool = field(default=_H["wake"], metadata=doc("SessionStart/SubagentStart loads memory"))
    remind: bool = field(
        default=_H["remind"], metadata=doc("Stop/SubagentStop asks for a lesson"))
    enabled: bool = field(
        default=_H["enabled"], metadata=doc("master switch of the agent-loop points below"))
    pre_work: bool = field(
        default=_H["pre_work"], metadata=doc("loop point: facts that bear on the queued work"))
    pre_spawn: bool = field(
        default=_H["pre_spawn"], metadata=doc("loop point: a worker's memory pack in CLAUDE.md"))
    post_run: bool = field(
        default=_H["post_run"], metadata=doc("loop point: record 0-3 lessons of a passed run"))
    fail_diag: bool = field(
        default=_H["fail_diag"], metadata=doc("loop point: earlier failures like this one"))
    post_retro: bool = field(
        default=_H["post_retro"], metadata=doc("loop point: a retrospective becomes lessons"))


@dataclass(frozen=True)
class Loop:
    __pydantic_config__ = _STRICT
    min_confidence: Annotated[float, Ge(0)] = field(
        default=_L["min_confidence"], metadata=doc("confidence floor of a worker's pack"))
    pack_tokens: Annotated[int, Ge(100)] = field(
        default=_L["pack_tokens"], metadata=doc("token budget of a worker's pack"))
    repeat_failures: Annotated[int, Ge(2)] = field(
        default=_L["repeat_failures"],
        metadata=doc("failures of one signature that make a 'repeated failure' lesson"))


@dataclass(frozen=True)
class Consolidate:
    __pydantic_config__ = _STRICT
    command: str = field(
        default=_C["command"],
        metadata=doc("the curator `consolidate --propose` runs (the plan on stdin)"))
    timeout: Annotated[int, Ge(1)] = field(
        default=_C["timeout"],
        metadata=doc("seconds the curator may run before its process group is ended"))


@dataclass(frozen=True)
class Config:
    """Every setting, validated. Build it with `load`."""

    __pydantic_config__ = _STRICT
    memory_root: Annotated[str, Predicate(relative_inside_repo)] = field(
        default=DEFAULTS["memory_root"],
        metadata=doc("where agent memory lives, relative to the repository top"))
    default_agent: Annotated[str, Predicate(valid_name)] = field(
        default=DEFAULTS["default_agent"], metadata=doc("the agent used when none is named"))
    agents: tuple[Annotated[str, Predicate(valid_name)], ...] = field(
        default=(), metadata=doc('agents "applies_to = all" reaches besides agent folders'))
    budget: Budget = field(default_factory=Budget)
    distill: Distill = field(default_factory=Distill)
    guard: Guard = field(default_factory=Guard)
    hooks: Hooks = field(default_factory=Hooks)
    loop: Loop = field(default_factory=Loop)
    consolidate: Consolidate = field(default_factory=Consolidate)

    def as_dict(self) -> dict[str, Any]:
        """Plain values (tuples as lists), as in the config file."""
        data = asdict(self)
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


def validate(merged: dict[str, Any], sources: dict[str, str]) -> Config:
    """Validate a merged mapping; every problem becomes one line naming field and source.
    Imports pydantic (~80 ms): only on a snapshot miss."""
    import annotated_types
    from pydantic import TypeAdapter, ValidationError

    # The annotations are strings; pydantic evaluates them in this module.
    globals().setdefault("Ge", annotated_types.Ge)
    globals().setdefault("Predicate", annotated_types.Predicate)
    try:
        config: Config = TypeAdapter(Config).validate_python(merged)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            dotted = ".".join(str(p) for p in err["loc"] if not isinstance(p, int))
            where = sources.get(dotted) or sources.get(dotted.split(".")[0]) or CONFIG_FILE
            msg = err["msg"]
            if err["type"] == "unexpected_keyword_argument":
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
    return json.dumps([file_bytes.decode("utf-8", "surrogateescape"), env,
                       sorted((flags or {}).items())], default=str)


def snapshot_path(state_dir: str, flags: dict[str, Any] | None) -> str:
    """Where the snapshot for these flags lives: one per set of flags, so that
    `distill --no-commit` and `distill` do not evict each other's."""
    if not flags:
        return os.path.join(state_dir, "cache", CACHE_NAME)

    tag = hashlib.sha256(json.dumps(sorted(flags.items()), default=str).encode()).hexdigest()
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
                snap = json.load(fh)
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
        replace_atomic(path, json.dumps({"key": key, "config": config.as_dict()}))
    except OSError:
        pass  # the snapshot is only a cache


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


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
        for f in fields(cls):
            if f.name in SECTIONS and not prefix:
                continue
            default = getattr(cls(), f.name)
            value = chosen.get(prefix + f.name)
            out.append(f"# {f.metadata['doc']}")
            if value:
                out.append(f"{f.name} = {_toml_value(value)}")
            else:
                out.append(f"# {f.name} = {_toml_value(default)}")

    emit(Config, "")
    for name, cls in SECTIONS.items():
        out.extend(["", f"[{name}]"])
        emit(cls, f"{name}.")
    return "\n".join(out) + "\n"
