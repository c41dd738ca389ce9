"""The entry and the fold are written out by hand (no `dataclasses` on `write`'s path):
each behaves as the dataclass it was, checked against that dataclass, kept here."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fold import journals, run

from journal_mem.journal.entry import SCHEMA, SLOTS, Date, Entry, FrozenEntryError
from journal_mem.journal.fold import Fold


@dataclasses.dataclass(frozen=True, slots=True)
class Was:
    """`Entry` as it was declared (journal/entry.py before it was written out)."""

    agent: str
    topic: str
    title: str
    created: dt.datetime
    body: str = ""
    type: str = "semantic"
    confidence: float = 0.8
    importance: str = "medium"
    key: str = ""
    supersedes: tuple[str, ...] = ()
    retracts: tuple[str, ...] = ()
    drops: tuple[str, ...] = ()
    knew: tuple[str, ...] = ()
    applies_to: tuple[str, ...] = ()
    valid_until: Date | None = None
    tags: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    cited: tuple[str, ...] = ()
    source: str | None = None
    schema: int = dataclasses.field(default=SCHEMA)


def _values(obj: Any) -> tuple[object, ...]:
    return tuple(getattr(obj, name) for name in SLOTS)


def test_the_fields_are_the_dataclass_s_in_its_order() -> None:
    assert tuple(f.name for f in dataclasses.fields(Was)) == SLOTS
    day = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
    # the defaults, by keyword and by position
    assert _values(Entry("api", "t", "T", day)) == _values(Was("api", "t", "T", day))
    assert _values(Entry(agent="api", topic="t", title="T", created=day)) == _values(
        Was("api", "t", "T", day))
    with pytest.raises(TypeError):
        Entry("api", "t", "T")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Entry("api", "t", "T", day, colour="red")  # type: ignore[call-arg]


@settings(max_examples=80, deadline=None)
@given(journals(), st.data())
def test_an_entry_equals_hashes_shows_pickles_and_replaces_as_the_dataclass(
        items: list[tuple[str, Entry]], data: st.DataObject) -> None:
    for _, entry in items:
        was = Was(*_values(entry))
        same = Entry(*_values(entry))
        assert same == entry and (same != entry) is False and hash(same) == hash(entry) == hash(was)
        assert repr(entry) == repr(was).replace("Was(", "Entry(", 1)
        for back in (pickle.loads(pickle.dumps(entry, protocol)) for protocol in range(6)):
            assert type(back) is Entry and back == entry
        assert copy.copy(entry) == entry and copy.deepcopy(entry) == entry
        assert entry != was and entry != _values(entry)  # another class: never equal
        name = data.draw(st.sampled_from(SLOTS))
        value = getattr(data.draw(st.sampled_from([e for _, e in items])), name)
        changed = entry.replace(**{name: value})
        assert _values(changed) == _values(dataclasses.replace(was, **{name: value}))
        assert (changed == entry) == (value == getattr(entry, name))
        assert entry.replace() == entry and entry.replace() is not entry


def test_an_entry_is_frozen_and_replace_names_only_fields() -> None:
    entry = Entry("api", "t", "T", dt.datetime(2026, 5, 1, tzinfo=dt.UTC))
    for name in ("title", "colour"):
        with pytest.raises(FrozenEntryError):
            setattr(entry, name, "x")
        with pytest.raises(AttributeError):  # as a dataclass's FrozenInstanceError is
            delattr(entry, name)
    assert entry.title == "T"
    with pytest.raises(TypeError, match="colour"):
        entry.replace(colour="red")
    assert not hasattr(entry, "__dict__")  # slots: no other attribute can be set


@settings(max_examples=60, deadline=None)
@given(journals(), journals())
def test_two_folds_are_equal_when_their_results_are(one: list[tuple[str, Entry]],
                                                    two: list[tuple[str, Entry]]) -> None:
    first, second, again = run(*one), run(*two), run(*one)
    assert first == again and (first != again) is False
    result = ("facts", "removed", "near_duplicates", "flagged", "conflicts", "retractions",
              "code", "judged", "merged", "cycles")
    assert (first == second) == all(getattr(first, n) == getattr(second, n) for n in result)
    # what a fold went through to get there is not its result
    again.resumed, again.rejudged, again.went_on, again.staled = 7, 3, True, {"k": None}
    assert first == again
    assert repr(first).startswith("Fold(facts=") and "resumed=" in repr(first)
    assert "rows_from" not in repr(first) and "pending" not in repr(first)


def test_a_fold_starts_empty_and_is_not_hashable() -> None:
    fold = Fold()
    assert fold == Fold() and fold != object()
    assert (fold.facts, fold.removed, fold.near_duplicates, fold.code, fold.judged) == (
        {}, {}, [], {}, "")
    assert (fold.resumed, fold.rejudged, fold.went_on, fold.waiting) == (-1, -1, False, False)
    assert Fold().facts is not fold.facts  # each its own
    with pytest.raises(TypeError):
        hash(fold)
    fold.judged = "abc"  # a fold is built up: it is not frozen
    assert fold != Fold()
