"""`jmem export`: one JSON snapshot of the memory, for disaster recovery and audits.

Every live fact as the distiller would fold it today (key, title, body, type,
confidence, importance, holders, topic, dates, valid_until, refs, tags,
source, entry path), every journal entry (invalid ones with their problems)
and the recorded distill state. `jmem import snapshot FILE` reads it back
into an empty repository; a distill there gives the same MEMORY.md files.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from journal_mem.fsutil import replace_atomic
from journal_mem.gitops import gitcore
from journal_mem.importers.snapshot import build, dumps
from journal_mem.journal.fold import today
from journal_mem.journal.foldstate import read_state
from journal_mem.journal.reader import read_journal
from journal_mem.repo import Context


def snapshot(ctx: Context, date: dt.date | None = None) -> dict[str, Any]:
    """The snapshot document of the repository's memory on `date` (today by default)."""

    layout = ctx.layout
    journal = read_journal(layout, ctx.policy)
    day = date or today()
    root = ctx.repo.main_root
    folded = ctx.fold(journal.entries, day, report_near=False)
    head = gitcore.run(["rev-parse", "--verify", "--quiet", "HEAD"], root, clean=True,
                        check=False).text().strip() or None
    return build(facts=folded.facts.values(), entries=dict(journal.entries),
                 invalid=journal.invalid, state=read_state(layout.distill_state), head=head,
                 date=day, memory_root=layout.memory_root)


def write_snapshot(doc: dict[str, Any], path: str) -> None:
    """Write the document to `path` all at once (a reader never sees half a snapshot)."""


    replace_atomic(os.path.abspath(path), dumps(doc).encode("utf-8"))


def summary(doc: dict[str, Any], path: str) -> str:
    """One line saying what was written where."""
    invalid = sum(1 for e in doc["entries"] if not e["valid"])
    extra = f" ({invalid} invalid)" if invalid else ""
    return (f"exported {len(doc['facts'])} live facts and {len(doc['entries'])} journal "
            f"entries{extra} to {path}")
