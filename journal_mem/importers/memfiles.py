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
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from journal_mem.errors import InvalidEntry
from journal_mem.gitops import history, memgit
from journal_mem.importers.markdown import (
    GENERATED_MARK,
    Origin,
    Resolver,
    is_generated,
    memory_drafts,
)
from journal_mem.intake.pipeline import Known, settle
from journal_mem.journal.cache import cache_dir, dump, load
from journal_mem.journal.drafts import Draft, unique_keys
from journal_mem.journal.entry import Entry
from journal_mem.journal.validate import Policy
from journal_mem.layout import Layout
from journal_mem.names import MEMORY_MD, TOPICS, is_name, slugify

KIND = "import memory"


@dataclass(frozen=True)
class MemFile:
    """One memory file of an agent."""

    agent: str
    rel: str  # memory-root-relative
    path: str  # absolute
    topic: str | None  # None for MEMORY.md
    generated: bool

    @property
    def text(self) -> str:
        """The whole file (read when asked: a distill looks at every file's head only)."""
        return _read(self.path) or ""


HEAD_BYTES = 1024  # the generated header is in the first lines


def _read(path: str, size: int = -1) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(size).decode("utf-8", "replace").replace("\r\n", "\n")
    except OSError:
        return None


def memory_files(layout: Layout, agents: list[str] | None = None,
                 heads: Heads | None = None) -> list[MemFile]:
    """Every agent's MEMORY.md and topic files, sorted (`agents`: only theirs); `heads`:
    a file whose stamp it holds is not read (`Heads`)."""
    out: list[MemFile] = []
    for agent in layout.agents_on_disk():
        if agents and agent not in agents:
            continue
        found: list[tuple[str, str | None]] = [(MEMORY_MD, None)]
        try:
            names = sorted(os.listdir(os.path.join(layout.agent_dir(agent), TOPICS)))
        except (FileNotFoundError, NotADirectoryError):
            names = []
        found += [(f"{TOPICS}/{n}", n[:-3]) for n in names
                  if n.endswith(".md") and not n.startswith(".")]
        for name, topic in found:
            path = os.path.join(layout.agent_dir(agent), name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):  # a symbolic link, a folder
                continue
            rel = f"{agent}/{name}"
            generated = heads.generated(rel, st) if heads is not None else None
            if generated is None:
                head = _read(path, HEAD_BYTES)
                if head is None:
                    continue
                generated = is_generated(head)
                if heads is not None:
                    heads.keep(rel, st, generated)
            out.append(MemFile(agent, rel, path,
                               topic if topic is None or is_name(topic) else _topic(topic),
                               generated))
    return out


class Heads:
    """Whether each memory file is the distiller's (`is_generated` of its head), as read
    at its stamp (size, mtime, ctime, inode), kept by the distill for the next one in
    `<git-common-dir>/journal-mem/cache/heads.pickle`: at 100k lessons reading the head
    of ~2,500 files took 75-130 ms of every distill. Any write of a file moves its ctime
    (or its inode, when replaced), so a file whose stamp is the one kept has the head it
    had; only a stamp whose ctime and mtime are `SETTLED_NS` older than `now_ns` (by the
    file system's clock) is kept, as a write within the same tick could leave it as it
    was. A disposable cache: missing or damaged, every head is read."""

    SETTLED_NS = 2_000_000_000

    def __init__(self, layout: Layout, now_ns: int) -> None:
        self.path = os.path.join(cache_dir(layout.state_dir), "heads.pickle")
        # under another memory root the same rels name other files; another mark, other heads
        self.key = ("heads", layout.main_memory, GENERATED_MARK)
        self.before = now_ns - self.SETTLED_NS
        self.kept: dict[str, tuple[tuple[int, ...], bool]] = load(self.path, self.key)[1]
        self.seen: dict[str, tuple[tuple[int, ...], bool]] = {}

    @staticmethod
    def _stamp(st: os.stat_result) -> tuple[int, ...]:
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def generated(self, rel: str, st: os.stat_result) -> bool | None:
        """The verdict kept for `rel` at the stamp `st` gives; None: not kept."""
        kept = self.kept.get(rel)
        if kept is None or kept[0] != self._stamp(st):
            return None
        self.seen[rel] = kept
        return kept[1]

    def keep(self, rel: str, st: os.stat_result, generated: bool) -> None:
        """Keep the verdict of a file just read at `st`, once its stamp has settled."""
        if st.st_ctime_ns < self.before and st.st_mtime_ns < self.before:
            self.seen[rel] = (self._stamp(st), generated)

    def save(self) -> None:
        """Keep the verdicts of the files seen (those of files gone are dropped)."""
        if self.seen != self.kept:
            try:
                dump(self.path, "", self.key, self.seen, entries=False)
            except OSError:
                pass  # only slower next time


def _topic(stem: str) -> str:

    slug = slugify(stem, 64)
    return slug if is_name(slug) else "general"


def foreign(layout: Layout, agents: list[str] | None = None) -> list[MemFile]:
    """The memory files the distiller did not write."""
    return [f for f in memory_files(layout, agents) if not f.generated and f.text.strip()]


class Located(Protocol):
    """A file under the memory root: memory-root-relative and absolute path."""

    @property
    def rel(self) -> str: ...

    @property
    def path(self) -> str: ...


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
