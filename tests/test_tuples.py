"""`journal_mem.tuples.NamedTuple` makes the class `typing.NamedTuple` makes."""

from __future__ import annotations

import pickle
import typing

import pytest

from journal_mem.tuples import NamedTuple


class Row(NamedTuple):
    """A row with a default and a method."""

    key: str
    count: int = 0
    tags: tuple[str, ...] = ()

    @property
    def tagged(self) -> bool:
        return bool(self.tags)

    def bumped(self) -> Row:
        return self._replace(count=self.count + 1)


class TypedRow(typing.NamedTuple):
    """A row with a default and a method."""

    key: str
    count: int = 0
    tags: tuple[str, ...] = ()


def test_it_is_the_named_tuple_typing_makes() -> None:
    row = Row("a", tags=("x",))
    assert row == ("a", 0, ("x",)) == TypedRow("a", tags=("x",))
    assert Row._fields == TypedRow._fields == ("key", "count", "tags")
    assert Row._field_defaults == TypedRow._field_defaults == {"count": 0, "tags": ()}
    assert Row.__mro__ == (Row, tuple, object)
    assert Row.__doc__ == TypedRow.__doc__ == "A row with a default and a method."
    assert Row.__module__ == __name__ and Row.__qualname__ == "Row"
    assert row.tagged and not Row("b").tagged and Row("b").bumped().count == 1
    assert row._asdict() == {"key": "a", "count": 0, "tags": ("x",)}
    assert Row._make(["c", 2, ()]) == Row("c", 2)
    assert pickle.loads(pickle.dumps(row)) == row
    assert Row.__match_args__ == ("key", "count", "tags")
    with pytest.raises(AttributeError):
        row.key = "b"  # type: ignore[misc]


def test_its_annotations_resolve_as_typing_s_do() -> None:
    assert typing.get_type_hints(Row) == typing.get_type_hints(TypedRow) == {
        "key": str, "count": int, "tags": tuple[str, ...]}


def test_what_typing_refuses_it_refuses() -> None:
    with pytest.raises(TypeError, match="'late' without a default follows"):
        class Late(NamedTuple):
            early: int = 0
            late: int  # type: ignore[misc]

    with pytest.raises(AttributeError, match="cannot define _replace"):
        class Replacing(NamedTuple):
            key: str

            def _replace(self, **kw: object) -> Replacing:  # type: ignore[misc, override]
                return self

    with pytest.raises(TypeError, match="derives from NamedTuple alone"):
        class Mixed(NamedTuple, int):  # type: ignore[misc]
            key: str
