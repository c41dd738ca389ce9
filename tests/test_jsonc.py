"""`jsonc` is `json.loads` and `json.dumps`, value for value, error for error."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from journal_mem import jsonc

SCALARS = (st.none() | st.booleans() | st.integers() | st.floats()
           | st.text(st.characters(codec="utf-8")))
KEYS = st.text() | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20)
SPACE = st.text(" \t\n\r", max_size=3)


def outcome(call: object, *args: object, **kwargs: object) -> tuple[str, str]:
    """What a call gave: ("value", its repr) or (the exception's type, its message)."""
    try:
        return "value", repr(call(*args, **kwargs))  # type: ignore[operator]
    except (ValueError, TypeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@given(VALUES, st.booleans(), st.booleans())
def test_dumps_is_json_dumps(value: object, ensure_ascii: bool, sort_keys: bool) -> None:
    assert outcome(jsonc.dumps, value, ensure_ascii=ensure_ascii, sort_keys=sort_keys) == \
        outcome(json.dumps, value, ensure_ascii=ensure_ascii, sort_keys=sort_keys)


@given(VALUES, SPACE, SPACE)
def test_loads_is_json_loads_on_documents(value: object, before: str, after: str) -> None:
    text = before + json.dumps(value, ensure_ascii=False) + after
    assert outcome(jsonc.loads, text) == outcome(json.loads, text)


@given(st.text(max_size=40) | st.builds(lambda v, tail: json.dumps(v) + tail, VALUES,
                                        st.text(max_size=5)))
@example("[NaN, Infinity, -Infinity, 1e400]")  # json's constants, and a float too large
@example('"a\x01b"')  # a control character in a string: refused (strict)
@example("\ufeff[]")
def test_loads_is_json_loads_on_any_text(text: str) -> None:
    """Malformed text, a byte-order mark, a value with text after it: json's error."""
    assert outcome(jsonc.loads, text) == outcome(json.loads, text)


@pytest.mark.parametrize("value", [object(), {1j: 1}, {"a": {1, 2}}])
def test_dumps_refuses_what_json_refuses(value: object) -> None:
    assert outcome(jsonc.dumps, value)[0] == "TypeError"
    assert outcome(jsonc.dumps, value) == outcome(json.dumps, value)


def test_dumps_finds_a_cycle_as_json_does() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    assert outcome(jsonc.dumps, cycle) == ("ValueError", "Circular reference detected")


def test_without_the_c_codec_json_does_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another Python, without `_json`'s scanner and encoder: `json` itself."""
    monkeypatch.setattr(jsonc, "_SCAN", None)
    monkeypatch.setattr(jsonc, "make_encoder", None)
    assert jsonc.loads(' {"a": [1, 2.5]} ') == {"a": [1, 2.5]}
    assert jsonc.dumps({"b": "é", "a": 1}, ensure_ascii=False, sort_keys=True) == \
        '{"a": 1, "b": "é"}'
    assert outcome(jsonc.loads, "[1] x") == outcome(json.loads, "[1] x")


@given(st.text())
def test_quoted_is_a_json_string_with_non_ascii_kept(text: str) -> None:
    assert jsonc.quoted(text) == json.dumps(text, ensure_ascii=False)
    assert jsonc._quoted(text) == json.dumps(text, ensure_ascii=False)  # without `_json`
