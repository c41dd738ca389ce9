"""What an agent-loop point returns, and how it reads the caller's context."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from journal_mem.errors import InvalidEntry


@dataclass
class Result:
    """What a loop point did; `journal_mem.api.HookResult` is built from it."""

    found: list[dict[str, Any]] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # keys of the lessons recorded
    errors: list[str] = field(default_factory=list)
    skipped: str | None = None  # the reason, when the point chose not to run
    details: dict[str, Any] = field(default_factory=dict)


def text_field(context: dict[str, Any], name: str) -> str:
    """A string from the caller's context, stripped ('' when absent)."""
    value = context.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidEntry([f"{name}: must be a string"])
    return value.strip()
