"""An entry the entry cache gave back, made from its pickled field values when first read.

The entry cache (`cache.Cache`, `entries.pickle`) keeps each valid entry as the
pickle of its field values (`cache.entry_bytes`). Loading 100k of them as
`Entry` objects took most of a second at every distill, and a distill that goes
on from the last fold reads a few dozen of them (`journal/rules.py`). So the
cache gives back a `LazyEntry`: an `Entry` whose fields are set from those bytes
the first time one is read. Its slots are empty until then, and reading an
empty slot is what calls `__getattr__`. It equals and hashes as the `Entry` with
the same fields, and the cache writes it back as the bytes it came from.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

from journal_mem.journal.entry import SLOTS, Entry

__all__ = ["SLOTS", "Entry", "LazyEntry", "drop_rows", "lazy", "made", "row_of", "setup"]


class LazyEntry(Entry):
    """An `Entry` made from `_row` (its pickled field values) when a field is first read."""

    __slots__ = ("_row",)

    def __getattr__(self, name: str) -> Any:
        if name not in _FIELDS:
            raise AttributeError(name)
        _fill(self)
        return object.__getattribute__(self, name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Entry):
            return _values(self) == _values(other)
        return NotImplemented

    __hash__ = Entry.__hash__


_FIELDS = frozenset(SLOTS)
_values: Callable[[Entry], tuple[object, ...]]
_fill_from: Callable[..., None]


def setup(values: Callable[[Entry], tuple[object, ...]],
          fill_from: Callable[..., None]) -> None:
    """Set how an entry's field values are read and set (`cache` makes both)."""
    global _values, _fill_from
    _values, _fill_from = values, fill_from


def _fill(entry: LazyEntry) -> None:
    """Set every field of `entry` from its bytes."""
    row = object.__getattribute__(entry, "_row")
    _fill_from(entry, *pickle.loads(row))


def lazy(row: bytes) -> LazyEntry:
    """The entry whose pickled field values are `row`, made when first read."""
    entry = object.__new__(LazyEntry)
    _ROW_SLOT(entry, row)
    return entry


def made(row: bytes, values: tuple[object, ...]) -> LazyEntry:
    """The entry of field `values`, made now, whose pickle `row` is (`lazy`'s, without
    reading it: an entry parsed just now, which a fold reads at once)."""
    entry = object.__new__(LazyEntry)
    _ROW_SLOT(entry, row)
    _fill_from(entry, *values)
    return entry


def row_of(entry: Entry) -> bytes | None:
    """The bytes a lazy entry was made from (None: another entry, or one made with fields)."""
    if type(entry) is LazyEntry:
        try:
            row: bytes = object.__getattribute__(entry, "_row")
        except AttributeError:
            return None
        return row
    return None


def drop_rows(entries: list[LazyEntry]) -> None:
    """Let go of the bytes of entries made with their fields (`made`) once the entry cache
    holds them: they are kept twice otherwise, as fields and as their pickle (at 100k
    lessons, ~40 MB of a full distill's peak). An entry without them is pickled from its
    fields again (`row_of` gives None). Never for an entry not made: its bytes are all
    it has."""
    for entry in entries:
        _ROW_DROP(entry)


_ROW_SLOT = LazyEntry._row.__set__  # type: ignore[attr-defined]
_ROW_DROP = LazyEntry._row.__delete__  # type: ignore[attr-defined]
