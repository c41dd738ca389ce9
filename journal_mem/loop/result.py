"""What an agent-loop point returns, and how it reads the caller's context."""

from __future__ import annotations

from journal_mem.errors import InvalidEntry

TYPE_CHECKING = False  # `typing` is not on the loop's hot path
if TYPE_CHECKING:
    from typing import Any


class Result:
    """What a loop point did; `journal_mem.api.HookResult` is built from it. A plain class:
    `dataclasses` costs the loop's hot path about 8 ms."""

    __slots__ = ("details", "errors", "found", "skipped", "written")

    def __init__(self, found: list[dict[str, Any]] | None = None,
                 written: list[str] | None = None, errors: list[str] | None = None,
                 skipped: str | None = None, details: dict[str, Any] | None = None) -> None:
        self.found: list[dict[str, Any]] = found if found is not None else []
        self.written: list[str] = written if written is not None else []  # lessons' keys
        self.errors: list[str] = errors if errors is not None else []
        self.skipped = skipped  # the reason, when the point chose not to run
        self.details: dict[str, Any] = details if details is not None else {}


def text_field(context: dict[str, Any], name: str) -> str:
    """A string from the caller's context, stripped ('' when absent)."""
    value = context.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidEntry([f"{name}: must be a string"])
    return value.strip()
