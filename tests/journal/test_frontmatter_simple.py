"""Frontmatter in the shape `jmem` writes is read without PyYAML (`frontmatter.simple`),
and reads exactly as PyYAML reads it; anything else goes to PyYAML, whose errors stay."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from journal_mem.journal import frontmatter
from journal_mem.journal.entry import Entry, parse, render


def by_yaml(front: str) -> dict[str, Any] | None:
    """What `load_yaml` reads without its fast path."""
    simple = frontmatter.simple
    frontmatter.simple = lambda front: None  # type: ignore[assignment]
    try:
        return frontmatter.load_yaml(front, [])
    finally:
        frontmatter.simple = simple


KEYS = st.sampled_from(["agent", "topic", "key", "tags", "refs", "source", "created", "x_y"])
TEXT = st.text(max_size=12)
VALUE = st.one_of(
    TEXT,                                                    # raw: anything at all
    TEXT.map(lambda t: json.dumps(t, ensure_ascii=False)),   # a JSON string
    st.lists(TEXT, max_size=3).map(                          # a JSON list of strings
        lambda items: "[" + ", ".join(json.dumps(i, ensure_ascii=False) for i in items) + "]"),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,10}", fullmatch=True),
)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUE), min_size=1, max_size=5))
def test_the_fast_reading_is_pyyamls_whenever_it_answers(fields: list[tuple[str, str]]) -> None:
    front = "".join(f"{key}: {value}\n" for key, value in fields)
    fast = frontmatter.simple(front)
    if fast is not None:
        assert fast == by_yaml(front), front


def test_every_entry_jmem_writes_is_read_without_pyyaml() -> None:
    entry = Entry(agent="api", topic="testing", title="Run the tests with -p no:randomly",
                  body="Why.", created=dt.datetime(2026, 3, 2, 10, 0, 0, 123000, tzinfo=dt.UTC),
                  key="run-tests", supersedes=("old-a", "old-b"), applies_to=("web",),
                  tags=("ci",), refs=("src/a b.py",), source="rescue: wt, line 3",
                  valid_until=dt.datetime(2027, 1, 1, tzinfo=dt.UTC))
    text = render(entry)
    front = text.split("---\n")[1]
    assert frontmatter.simple(front) == by_yaml(front)
    sys.modules.pop("yaml", None)
    assert parse(text.encode()) == entry
    assert "yaml" not in sys.modules


def test_duplicates_and_odd_characters_still_reach_pyyaml() -> None:
    problems: list[str] = []
    assert frontmatter.load_yaml("agent: api\nagent: web\n", problems) is None
    assert problems == ["frontmatter: field 'agent' appears twice"]
    assert frontmatter.simple('source: "a\u2028b"\n') is None  # a YAML line break
    assert frontmatter.simple('source: "a\rb"\n') is None  # another one
    assert frontmatter.simple('source: "a\tb"\n') is None
    assert frontmatter.simple("agent: api:\n") is None  # not a plain scalar
