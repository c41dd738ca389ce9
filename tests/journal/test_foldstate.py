"""distill-state.json: its bytes are json.dumps's, and read back as they were written."""

from __future__ import annotations

import datetime as dt
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from journal_mem.journal.foldstate import SCHEMA, FoldState, parse_state, render_state


def _by_json(state: FoldState) -> bytes:
    """The file as `json.dumps` writes it: the format the file has always had."""
    data: dict[str, object] = {"schema": SCHEMA, "date": state.date.isoformat(),
                               "folded": sorted(state.folded)}
    if state.judged:
        data["judged"] = state.judged
    return (json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


# any text, or printable ASCII as entry paths are (written at once), with now and then a
# character JSON escapes (written one by one)
PATHS = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30),
                  st.from_regex(r"[a-z0-9/._-]{1,30}", fullmatch=True),
                  st.text(st.sampled_from('ab/-."\\\t\x7f'), min_size=1, max_size=8))


@settings(max_examples=300, deadline=None)
@given(st.dates(), st.lists(PATHS, max_size=12, unique=True),
       st.one_of(st.just(""), st.text(max_size=12)))
def test_the_state_file_is_the_bytes_json_writes(day: dt.date, folded: list[str],
                                                 judged: str) -> None:
    state = FoldState(day, tuple(folded), judged)
    data = render_state(state)
    assert data == _by_json(state)
    back = parse_state(data)
    assert back == FoldState(day, tuple(sorted(folded)), judged)


def test_a_state_file_reads_as_it_always_did() -> None:
    state = FoldState(dt.date(2026, 5, 1), ("web/journal/b.md", 'api/journal/"a"\\ü.md'),
                      "abc123")
    assert render_state(state) == (
        '{\n "date": "2026-05-01",\n "folded": [\n  "api/journal/\\"a\\"\\\\ü.md",\n'
        '  "web/journal/b.md"\n ],\n "judged": "abc123",\n "schema": 1\n}\n').encode()
    assert render_state(FoldState(dt.date(2026, 5, 1), ())) == (
        b'{\n "date": "2026-05-01",\n "folded": [],\n "schema": 1\n}\n')
