"""Memory files on disk that the distiller did not write: found, and read into drafts.

An agent's `MEMORY.md` and `topics/<topic>.md` are the distiller's files
once it has run; before that (or beside it) a team may have written them by
hand, or Claude Code's native memory may have. A file without the
distiller's generated header is *foreign*: its facts are imported as
lessons (`jmem import memory`, `init`, and every distill before it renders),
never overwritten unread.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence

from journal_mem.errors import InvalidEntry
from journal_mem.gitops import history, memgit
from journal_mem.importers.found import MemFile, memory_files
from journal_mem.importers.markdown import Origin, Resolver, memory_drafts
from journal_mem.intake.pipeline import Known, settle
from journal_mem.journal.drafts import Draft, unique_keys
from journal_mem.journal.entry import Entry
from journal_mem.journal.validate import Policy
from journal_mem.layout import Layout

TYPE_CHECKING = False  # `typing` is not on the capture's path (~3 ms of a start)
if TYPE_CHECKING:
    from typing import Protocol

    class Located(Protocol):
        """A file under the memory root: memory-root-relative and absolute path."""

        @property
        def rel(self) -> str: ...

        @property
        def path(self) -> str: ...


KIND = "import memory"


def foreign(layout: Layout, agents: list[str] | None = None) -> list[MemFile]:
    """The memory files the distiller did not write."""
    return [f for f in memory_files(layout, agents) if not f.generated and f.text.strip()]


def provenance(layout: Layout, files: Sequence[Located], kind: str = KIND,
               ) -> dict[str, tuple[str, dt.datetime | None]]:
    """{rel: (source text, original date)}: the commit that last wrote each file, and when.

    A file changed since that commit is dated now and says so; a file never
    committed says "uncommitted".
    """

    repo_rel = {f.rel: layout.rel(f.path) for f in files}
    commits = history.last_commits(layout.repo.main_root, sorted(repo_rel.values()))
    dirty = {p for _, p in memgit.status(layout.repo.main_root, layout.memory_root)}
    out: dict[str, tuple[str, dt.datetime | None]] = {}
    for rel, path in repo_rel.items():
        sha_date = commits.get(path)
        if sha_date is None:
            out[rel] = (f"{kind}: {path} (uncommitted)", None)
        elif path in dirty:
            out[rel] = (f"{kind}: {path}@{sha_date[0][:12]} with uncommitted edits", None)
        else:
            out[rel] = (f"{kind}: {path}@{sha_date[0][:12]}", sha_date[1])
    return out


def drafts_of(layout: Layout, files: list[MemFile], kind: str = KIND,
              adopted: set[str] | frozenset[str] = frozenset()) -> list[Draft]:
    """Every fact of `files` as lesson drafts, with provenance (`adopted`: absolute paths of
    native memory files already filed: an index line naming one is not a new fact)."""
    where = provenance(layout, files, kind)
    out: list[Draft] = []
    for f in files:
        source, created = where[f.rel]
        out += memory_drafts(f.text, Origin(f.agent, source, created), f.topic,
                             index=_index_of(f, adopted))
    return out


def _index_of(f: MemFile, adopted: set[str] | frozenset[str]) -> Resolver | None:
    """For an agent's `MEMORY.md`: whether a link names a memory file beside it (on disk,
    or one already adopted)."""
    if f.topic is not None:
        return None
    folder = os.path.dirname(f.path)

    def exists(link: str) -> bool:
        path = os.path.normpath(os.path.join(folder, link))
        return path in adopted or os.path.isfile(path)
    return exists


def not_imported(layout: Layout, files: list[MemFile], entries: list[tuple[str, Entry]],
                 policy: Policy, adopted: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The memory-root-relative paths of `files` holding a fact the journal lacks."""

    known = Known(entries)
    now = dt.datetime.now(dt.UTC)
    where = provenance(layout, files)
    lacking: set[str] = set()
    drafts = []
    for f in files:
        source, created = where[f.rel]
        drafts += [(f.rel, d) for d in memory_drafts(f.text, Origin(f.agent, source, created),
                                                     f.topic, index=_index_of(f, adopted))]
    keyed = unique_keys([d for _, d in drafts])
    for (rel, _), draft in zip(drafts, keyed, strict=True):
        try:
            if settle(draft, known, now, policy) is not None:
                lacking.add(rel)
        except InvalidEntry:
            lacking.add(rel)
    return sorted(lacking)
