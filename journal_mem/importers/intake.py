"""Lesson drafts into the journal: validated, idempotent, never replacing a fact by accident.

A draft is already imported when the journal holds an entry with its key,
its title and its body for its writer (a second run of any import writes
nothing). A draft whose key is taken by a different fact gets its text's
hash appended to the key instead, so an import never supersedes a fact it
did not mean to; a draft marked `replaces` (a hand edit that changed a fact)
keeps the key on purpose. New entries are created exclusively (`journal.py`)
and only fsynced once, at the end: an import of a thousand lessons would
otherwise spend most of its time in fsync.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from journal_mem.errors import InvalidEntry
from journal_mem.journal.drafts import Draft, hashed_key, to_entry, unique_keys
from journal_mem.journal.entry import Entry
from journal_mem.journal.files import write_entry
from journal_mem.journal.validate import Policy
from journal_mem.layout import Layout

Progress = Callable[[int, int], None]  # (done, total)


@dataclass
class Written:
    """What writing a batch of drafts did."""

    paths: list[str] = field(default_factory=list)  # absolute paths of new entries
    skipped: int = 0  # already in the journal
    invalid: list[str] = field(default_factory=list)  # "where: problem"


class Known:
    """The journal's keys and texts, to tell an imported draft from a new one."""

    def __init__(self, entries: Iterable[tuple[str, Entry]]) -> None:
        self.by_key: dict[str, list[tuple[str, str, frozenset[str]]]] = {}
        for _, e in entries:
            self.add(e)

    def add(self, e: Entry) -> None:
        self.by_key.setdefault(e.key, []).append(
            (e.title, e.body, frozenset(e.holders_hint)))

    def has(self, key: str, draft: Draft, body: str) -> bool:
        """An entry with this key and text, held by the draft's writer, exists."""
        return any(t == draft.title and b == body and (draft.agent in h or "all" in h)
                   for t, b, h in self.by_key.get(key, ()))

    def taken(self, key: str, draft: Draft, body: str) -> bool:
        """The key names a different fact."""
        return any(t != draft.title or b != body for t, b, _ in self.by_key.get(key, ()))


def settle(draft: Draft, known: Known, now: dt.datetime, policy: Policy) -> Entry | None:
    """The entry to write for `draft`, or None when the journal already holds it."""
    entry = to_entry(draft, now, policy)
    if known.has(entry.key, draft, entry.body):
        return None
    if not draft.replaces and known.taken(entry.key, draft, entry.body):
        entry = replace(entry, key=hashed_key(replace(draft, key=entry.key)))
        if known.has(entry.key, draft, entry.body):
            return None
    return entry


def write_drafts(layout: Layout, drafts: list[Draft], known: Known, policy: Policy,
                 progress: Progress | None = None, now: dt.datetime | None = None) -> Written:
    """Create a journal entry for every draft not already in the journal."""
    out = Written()
    now = now or dt.datetime.now(dt.UTC).replace(microsecond=0)
    ready = unique_keys(drafts)
    folders: set[str] = set()
    for done, draft in enumerate(ready, 1):
        try:
            entry = settle(draft, known, now, policy)
        except InvalidEntry as exc:
            out.invalid += [f"{draft.source or draft.where}: {p}" for p in exc.problems]
            continue
        if entry is None:
            out.skipped += 1
        else:
            folder = layout.journal_dir(entry.agent)
            out.paths.append(write_entry(folder, entry, durable=False))
            folders.add(folder)
            known.add(entry)
        if progress is not None:
            progress(done, len(ready))
    _sync(out.paths, folders)
    return out


def _sync(paths: list[str], folders: set[str]) -> None:
    """Make the new files and their names durable, once for the batch: one `sync()`
    (0.14 s here) instead of two fsyncs per file (8.4 s for 1,000 files)."""
    if not paths:
        return
    if hasattr(os, "sync"):
        os.sync()
        return
    for path in [*paths, *sorted(folders)]:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
