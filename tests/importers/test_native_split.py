"""A native memory file over the entry limit is kept whole, in parts that each fit."""

from __future__ import annotations

import datetime as dt
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from journal_mem.importers.native import split
from journal_mem.journal.drafts import Draft, to_entry
from journal_mem.journal.validate import Policy

LINE = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n\x00"),
               max_size=400)
SECTION = st.tuples(st.text(alphabet="abc xyz", min_size=1, max_size=30),
                    st.lists(LINE, max_size=40))


@settings(max_examples=150, deadline=None)
@given(st.lists(SECTION, min_size=1, max_size=12), st.integers(256, 4096),
       st.text(alphabet="abc/-._", max_size=300))
def test_every_part_fits_and_nothing_is_lost(sections: list[tuple[str, list[str]]],
                                             limit: int, where: str) -> None:
    body = "\n\n".join(f"## {head}\n" + "\n".join(lines) for head, lines in sections)
    draft = Draft(agent="api", topic="notes", title="Architecture notes", body=body,
                  key="architecture-notes", where=where or "x.md:1")
    parts = split(draft, limit)
    assert all(len(p.body.encode()) <= limit for p in parts)
    if len(parts) == 1:
        assert parts[0] == draft
        return
    keys = [p.key for p in parts]
    assert keys[0] == "architecture-notes" and len(set(keys)) == len(keys)
    for p in parts:  # every part is a valid lesson under this limit
        to_entry(p, dt.datetime.now(dt.UTC), Policy(entry_bytes=limit))
    kept = "".join(re.sub(r"\n\n\(part \d+ of \d+ of one memory file: .*\)$", "", p.body,
                          flags=re.DOTALL) for p in parts)
    assert "".join(body.split()) == "".join(kept.split())
