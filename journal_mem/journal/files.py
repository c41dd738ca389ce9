"""The journal on disk: exclusive creation of entries, the outbox, and listing.

No code path here overwrites or deletes a journal entry. A new entry is
created with `fsutil.create_exclusive`: written and fsynced under no name,
then hard-linked to its final name, which fails on EEXIST instead of
replacing (docs/DESIGN.md, "Exclusive atomic writes"); a collision retries
with a new random suffix.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from journal_mem.errors import PolicyViolation
from journal_mem.fsutil import create_exclusive
from journal_mem.journal.entry import Entry, render
from journal_mem.layout import Layout
from journal_mem.names import ENTRY_NAME_RE, is_name, slugify
from journal_mem.tuples import NamedTuple


class Written(NamedTuple):
    """Where `record` put an entry."""

    path: str
    key: str
    outbox: bool
    note: str = ""
    # keys it supersedes or retracts that no lesson holds -> the closest one that does
    unknown: Mapping[str, str] = MappingProxyType({})  # (read-only: one shared default)


def entry_name(entry: Entry, suffix: str) -> str:
    """`<YYYY-MM-DD>-<slug>-<suffix>.md` for an entry."""
    slug = slugify(entry.title, 48) or "lesson"
    return f"{entry.created.date().isoformat()}-{slug}-{suffix}.md"


def write_entry(folder: str, entry: Entry, durable: bool = True) -> str:
    """Create `entry` in `folder` under a fresh name; returns its path."""
    data = render(entry).encode("utf-8")
    return create_exclusive(folder, lambda suffix: entry_name(entry, suffix), data, durable)


def record(layout: Layout, entry: Entry, outbox: bool = False, durable: bool = True) -> Written:
    """File one validated entry: into the main checkout's journal, else the outbox.

    `outbox` forces the outbox. A main checkout that cannot be written also
    sends the entry to the outbox, and `Written.note` says why.
    """
    if not outbox:
        link = layout.symlink_on_way(layout.journal_dir(entry.agent))
        if link:  # every writer (write, rescue, outbox drain) comes through here

            raise PolicyViolation(
                f"{link} is a symlink: memory folders must be real folders inside the "
                "repository; nothing written",
                hint="replace the link with a real folder, or file the lesson with --outbox",
            )
        try:
            path = write_entry(layout.journal_dir(entry.agent), entry, durable)
            return Written(path, entry.key, False)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR,
                                 errno.EEXIST, errno.ENOSPC):
                raise
            note = (f"the main checkout's journal cannot be written "
                    f"({exc.strerror}: {exc.filename}); filed in the outbox instead")
    else:
        note = "filed in the outbox (the next distill or `jmem outbox drain` moves it)"
    path = write_entry(layout.outbox_dir(entry.agent), entry, durable)
    return Written(path, entry.key, True, note)


def is_entry_name(name: str) -> bool:
    """A journal entry's file name: `YYYY-MM-DD-….md` (hand-written names included)."""
    return ENTRY_NAME_RE.fullmatch(name) is not None


def iter_outbox(layout: Layout) -> Iterator[tuple[str, str]]:
    """(agent folder, absolute path) of every file waiting in the outbox, sorted."""
    root = os.path.join(layout.state_dir, "outbox")
    try:
        agents = sorted(os.listdir(root))
    except FileNotFoundError:
        return
    for agent in agents:
        folder = os.path.join(root, agent)
        if not is_name(agent) or not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if is_entry_name(name):
                yield agent, os.path.join(folder, name)
