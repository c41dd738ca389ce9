"""The validated configuration (DESIGN §5): a pydantic model over `settings.gather`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from journal_mem.errors import ConfigError
from journal_mem.names import NAME_PATTERN
from journal_mem.settings import CONFIG_FILE, DEFAULTS, gather

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
_B, _D, _G, _H = DEFAULTS["budget"], DEFAULTS["distill"], DEFAULTS["guard"], DEFAULTS["hooks"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Budget(_Section):
    memory_lines: int = Field(_B["memory_lines"], ge=10, description="MEMORY.md line budget")
    memory_bytes: int = Field(_B["memory_bytes"], ge=1000, description="MEMORY.md byte budget")
    line_chars: int = Field(_B["line_chars"], ge=40, description="longest line in MEMORY.md")
    topic_lines: int = Field(_B["topic_lines"], ge=10, description="line budget of a topic file")
    entry_bytes: int = Field(_B["entry_bytes"], ge=256, description="largest journal entry body")


class Distill(_Section):
    threshold: int = Field(
        _D["threshold"], ge=1, description="pending lessons that start a distill"
    )
    max_age_hours: float = Field(
        _D["max_age_hours"], ge=0, description="a pending lesson this old starts a distill"
    )
    commit: bool = Field(_D["commit"], description="commit the distilled files")
    branch: str = Field(_D["branch"], description="the only branch the distiller writes on")
    stale_refs: Literal["drop", "flag"] = Field(
        _D["stale_refs"], description='"drop" facts whose refs are all gone, or only "flag" them'
    )
    episodic_ttl_days: int = Field(
        _D["episodic_ttl_days"], ge=1, description="episodic facts older than this are dropped"
    )


class Guard(_Section):
    append_only: bool = Field(_G["append_only"], description="refuse edits of committed entries")
    scan_secrets: bool = Field(_G["scan_secrets"], description="refuse lessons holding secrets")


class Hooks(_Section):
    guard: bool = Field(_H["guard"], description="git pre-commit/pre-merge-commit guard")
    distill_on_commit: bool = Field(
        _H["distill_on_commit"], description="post-commit starts a background distill when due"
    )
    wake: bool = Field(_H["wake"], description="SessionStart/SubagentStart loads memory")
    remind: bool = Field(_H["remind"], description="Stop/SubagentStop asks for a lesson")


def _memory_root_ok(value: str) -> str:
    value = value.strip().strip("/")
    parts = value.split("/")
    if not value or value.startswith("~") or any(p in ("", ".", "..") for p in parts):
        raise ValueError("must be a relative path inside the repository, without '..'")
    return value


class Config(_Section):
    """Every setting, validated. Build it with `load`."""

    memory_root: str = Field(
        DEFAULTS["memory_root"], description="where agent memory lives, relative to the repo top"
    )
    default_agent: Name = Field(
        DEFAULTS["default_agent"], description="the agent used when none is named"
    )
    agents: list[Name] = Field(
        default_factory=list, description='agents that "applies_to = all" reaches besides folders'
    )
    budget: Budget = Budget()
    distill: Distill = Distill()
    guard: Guard = Guard()
    hooks: Hooks = Hooks()

    @field_validator("memory_root")
    @classmethod
    def _root_ok(cls, value: str) -> str:
        return _memory_root_ok(value)


def validate(merged: dict[str, Any], sources: dict[str, str]) -> Config:
    """Validate a merged mapping; every problem becomes one line naming field and source."""
    try:
        return Config.model_validate(merged)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            dotted = ".".join(str(p) for p in err["loc"])
            where = sources.get(dotted) or sources.get(dotted.split(".")[0]) or CONFIG_FILE
            msg = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
            lines.append(f"config: {dotted}: {msg} (from {where})")
        hint = f"fix {CONFIG_FILE} or the JMEM_* variable"
        raise ConfigError("\n".join(lines), hint=hint) from exc


def load(root: str, flags: dict[str, Any] | None = None) -> Config:
    """The configuration of the checkout at `root`: flags > JMEM_* > file > defaults."""
    merged, sources = gather(root, flags)
    return validate(merged, sources)


def _toml_value(value: object) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def render_file(branch: str, agents: list[str]) -> str:
    """The commented config file `init` writes: every default shown, commented out."""
    out = [
        "# journal-mem configuration (DESIGN §5). Every setting is shown with its",
        "# default, commented out. JMEM_<KEY> / JMEM_<SECTION>_<KEY> environment",
        "# variables override this file; command-line flags override both.",
        "# An empty value means unset.",
        "",
    ]
    set_values: dict[str, object] = {"distill.branch": branch}
    if agents:
        set_values["agents"] = sorted(set(agents))

    def emit(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            if isinstance(field.default, BaseModel):
                continue
            default = field.get_default(call_default_factory=True)
            dotted = f"{prefix}{name}"
            out.append(f"# {field.description}")
            if set_values.get(dotted):
                out.append(f"{name} = {_toml_value(set_values[dotted])}")
            else:
                out.append(f"# {name} = {_toml_value(default)}")

    emit(Config, "")
    for section in ("budget", "distill", "guard", "hooks"):
        annotation = Config.model_fields[section].annotation
        assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
        out.extend(["", f"[{section}]"])
        emit(annotation, f"{section}.")
    return "\n".join(out) + "\n"
