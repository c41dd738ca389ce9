"""The one entry reader: every command, the Claude Code hooks included, reads entries here.

Each file is judged by `model.validate.parse_valid` under one `Policy`, and
the verdict (the entry, or its problems) is cached in the common git dir by
file: a file is parsed again only when its (size, mtime, inode) and, failing
that, its content digest differ from what was cached, so a fresh clone (new
mtimes, same bytes) parses nothing twice and an edited file is always parsed
again. Two readers share that machinery:

* `read_journal`: every entry of the main journal, as `Entry` objects, for
  distill, `check` and `recall` (cache `entries.pickle`, with a delta; an entry
  the cache gives back is made when one of its fields is first read:
  `lazy.LazyEntry`).
* `read_lessons` / `pending`: the few entries the hooks show (the pending ones,
  at wake-up and for the reminder), as small `PendingFile` views (cache
  `pending.marshal`: plain values, so that a hook imports neither `pickle` nor
  `datetime`). Standard library only while nothing changed: the parser
  (and YAML) is imported only to judge a changed file, so the wake-up pack
  costs no more than listing the journal and reading two small files, and it
  shows exactly what the next distill would fold. Every way in judges what it
  filed into that cache (`keep_filed`): a new lesson is not a changed file to
  the next hook.

Which files are entries, and which are pending, is `listing.py`'s job.
"""

from __future__ import annotations

import bisect
import functools
import gc
import itertools
import operator
import os
import stat
import time

from journal_mem import hashes
from journal_mem.errors import InvalidEntry
from journal_mem.fsutil import touched_now
from journal_mem.journal.cache import (
    Cache,
    cache_dir,
    drop_rows,
    entry_bytes,
    entry_row,
    parsed_entry,
    share,
    write,
    xor_of,
)
from journal_mem.journal.forked import children, in_child, map_forked
from journal_mem.journal.listing import (
    MISNAMED,
    Found,
    entry_files,
    entry_names,
    journal_order,
    pending_paths,
)
from journal_mem.journal.listing import listdir as _listdir
from journal_mem.journal.order import causal_order
from journal_mem.journal.validate import Policy, parse_valid
from journal_mem.layout import JOURNAL, Layout
from journal_mem.names import ENTRY_NAME_RE
from journal_mem.progress import track

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from journal_mem.journal.entry import Entry

# (size, mtime_ns, inode, digest, verdict, plain): the verdict is the cached value of a
# valid entry or its problems; plain: a valid entry written without frontmatter
_Item = tuple[int, int, int, bytes, object, bool]


class Journal:
    """Every entry file of the main journal: valid ones, and invalid ones with problems."""

    __slots__ = ("_paths", "digest", "entries", "invalid", "items", "parsed", "plain")

    def __init__(self) -> None:
        self.entries: list[tuple[str, Entry]] = []  # (memory-root-relative path, entry)
        self.invalid: dict[str, tuple[str, ...]] = {}
        # paths of the valid entries written without frontmatter: their topic depends on
        # their agent's other entries (`_plain_topics`)
        self.plain: set[str] = set()
        self.parsed = 0  # files parsed in this run (the rest came from the cache)
        # path -> its cache item: its digest (item[3]) covers its path and bytes
        self.items: dict[str, _Item] = {}
        self.digest: int | None = None  # of all of `items`' files (`cache.xor_of`), if known
        self._paths: set[str] | None = None  # `__contains__` without cache items

    def __contains__(self, rel: object) -> bool:
        """Whether `rel` is the path of one of the valid `entries`: by its cache item (its
        verdict), where the journal was read with the cache; a distill's commit asks this
        of a few paths, and a set of 100k took ~60 ms to make at 100k lessons."""
        if self.items:
            item = self.items.get(rel) if isinstance(rel, str) else None
            return item is not None and not isinstance(item[4], tuple)
        if self._paths is None:
            self._paths = {path for path, _ in self.entries}
        return rel in self._paths


class PendingFile:
    """One pending entry file as the wake-up pack and the reminder show it: where it is,
    and its verdict (the shown fields of a valid entry, or its problems). Not a second
    lesson record: the hooks read these from a small cache without the entry model.

    Its `created` is kept as the entry's ISO text (`stamp`) and its POSIX time (`when`):
    the hooks order (`pending`) and show the views without importing `datetime`."""

    __slots__ = ("agent", "applies_to", "body", "confidence", "key", "knew", "outbox",
                 "path", "problems", "rel", "retracts", "stamp", "supersedes", "title",
                 "topic", "when")

    def __init__(self, agent: str, path: str, rel: str, outbox: bool) -> None:
        self.agent, self.path, self.rel, self.outbox = agent, path, rel, outbox
        self.title = os.path.basename(path)
        self.topic = ""
        self.body = ""  # its first words only: enough to tell what it corrects
        self.key = ""
        self.stamp = ""  # `created.isoformat()`; "" for an invalid entry
        # `created.timestamp()`: ordered as the datetimes are (distinct to the microsecond
        # until the year 2242), and equal where they are
        self.when = 0.0
        self.supersedes: tuple[str, ...] = ()
        self.knew: tuple[str, ...] = ()
        self.retracts: tuple[str, ...] = ()
        self.applies_to: tuple[str, ...] = ()
        self.confidence: float | None = None
        self.problems: tuple[str, ...] = ()

    @property
    def day(self) -> str:
        """The date of `created`, at its own UTC offset ("" for an invalid entry)."""
        return self.stamp[:10]

    def is_for(self, agent: str) -> bool:
        """True when `agent` must hold this lesson (its writer, or named by applies_to)."""
        return agent == self.agent or agent in self.applies_to or "all" in self.applies_to


_SHOWN = ("title", "key", "supersedes", "retracts", "applies_to", "confidence", "topic",
          "knew")
BODY_CHARS = 400  # of a pending lesson's body, for telling which held fact it corrects


def _shown(entry: Entry) -> dict[str, object]:
    shown: dict[str, object] = {name: getattr(entry, name) for name in _SHOWN}
    shown["body"] = entry.body[:BODY_CHARS]
    shown["stamp"] = entry.created.isoformat()
    shown["when"] = entry.created.timestamp()
    return shown


# --- judging files, through a cache -------------------------------------------------


def _judge(data: bytes, name: str, agent: str, policy: Policy) -> Entry | tuple[str, ...]:
    try:
        return parse_valid(data, policy, filename=name, folder_agent=agent)
    except InvalidEntry as exc:
        return tuple(exc.problems)


class _Files:
    """Read files through one cache; `keep` turns a valid entry into what is cached.

    With `from_row` (what is cached for a valid entry, from its field values and their
    pickle: `cache.parsed_entry`), a file that must be parsed is only read here:
    `judge_later` parses them all at once, shared with forked children when they are
    many (`journal.forked`).
    """

    def __init__(self, cache: Cache, policy: Policy, keep: Callable[[Entry], object],
                 from_row: Callable[..., object] | None = None) -> None:
        self.cache, self.policy, self.keep, self.from_row = cache, policy, keep, from_row
        self.new: dict[str, _Item] = {}
        self.judged: list[str] = []  # the paths whose item in `new` is not the cache's
        self.changed = False
        self.parsed = 0
        # each file to parse (`_Later`), with `from_row`
        self.later: list[_Later] | None = [] if from_row is not None else None
        self.made: list[Entry] = []  # the valid entries `from_row` made (`judge_later`)
        self.total: int | None = None  # the digest of `new`, once saved (`digest`)

    def verdict(self, agent: str, path: str, rel: str) -> _Item | None:
        """The cache item of the entry at `path` (its verdict: `item[4]`); None if gone;
        `_LATER` while it waits to be parsed (`judge_later`)."""
        return self.verdict_of(agent, path, rel, _stat(path))

    def verdict_of(self, agent: str, path: str, rel: str, st: _Stat | None) -> _Item | None:
        """`verdict`, the file's `lstat` already made (`_stat`: None when it was gone)."""
        self.verdicts([(agent, rel, "", st)], lambda _agent, _name: path)
        return self.new.get(rel) if st is not None else None

    def verdicts(self, found: Iterable[_Listed], where: Callable[[str, str], str]) -> list[str]:
        """Give each listed file its verdict (`verdict_of`); the paths of those still there.
        `where(agent, name)` is the file's path, made only for a file not as cached (at
        100k lessons one call per file took ~40 ms)."""
        items, new, listed = self.cache.items, self.new, []
        for agent, rel, name, st in found:
            if st is None:  # removed since the listing (never by journal-mem)
                continue
            item = items.get(rel)
            if stat.S_ISLNK(st[0]):
                item = (0, 0, 0, b"", ("file: is a symlink; journal entries are regular "
                                       "files",), False)
                self.judged.append(rel)
            elif item is None or item[:3] != st[1:]:
                item = self._fresh(agent, where(agent, name), rel, st)
                self.changed = True
                self.judged.append(rel)
            new[rel] = item
            listed.append(rel)
        return listed

    def _fresh(self, agent: str, path: str, rel: str, st: _Stat) -> _Item:
        if self.later is not None and not self.cache.items:
            # no verdict to reuse by digest (a first read, `check`, `--rebuild`): the file
            # is read where it is parsed, so that 100k files' bytes are never held at once
            self.later.append((rel, agent, path, st, None))
            return _LATER
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:  # never matches a later stat: judged again next time
            return _unreadable(exc)
        digest = file_digest(rel, data)
        # the same bytes under a new stat (touched, checked out again): its verdict stands.
        # The digest covers the path, so only this path's item can hold it (a map of
        # every item's digest took ~20 ms at 100k lessons, built at every distill)
        known = self.cache.items.get(rel)
        if known is not None and known[3] == digest:
            return (st[1], st[2], st[3], digest, known[4], known[5])
        if self.later is not None:  # a placeholder until `judge_later` parses it
            self.later.append((rel, agent, path, st, data))
            return _LATER
        judged = _judge(data, os.path.basename(path), agent, self.policy)
        self.parsed += 1
        if isinstance(judged, tuple):
            return (st[1], st[2], st[3], digest, judged, False)
        return (st[1], st[2], st[3], digest, self.keep(judged), _plain(data))

    def judge_later(self, what: str) -> None:
        """Parse every file `verdict` put off (see the class), shared with forked children
        when there are `FORK_AT` or more; a progress bar saying `what`."""
        later, self.later = self.later or [], None
        from_row = self.from_row
        assert from_row is not None or not later
        verdicts = map_forked(functools.partial(_judged_file, policy=self.policy), later,
                              children() if len(later) >= FORK_AT else 0,
                              lambda part: track(part, what, "entries"))
        for i, (digest, plain, valid, value) in verdicts:  # each used as it comes
            rel, _, _, st, _ = later[i]
            if not digest:
                self.new[rel] = (-1, -1, -1, b"", value, False)  # unreadable: see _fresh
                continue
            self.parsed += 1
            if valid:
                value = from_row(*value)  # type: ignore[misc]
                self.made.append(value)  # type: ignore[arg-type]
            self.new[rel] = (st[1], st[2], st[3], digest, value, plain)

    def digest(self) -> int:
        """The digest of the files of `new` (`cache.xor_of` of their items' digests): the
        cache's, changed by the files judged again and those gone since, when it kept one
        (20 new lessons at 100k: a few dozen digests, not 100k). Every other path of
        `new` holds its very item of the cache (`verdicts`)."""
        known, items, new = self.cache.digest, self.cache.items, self.new
        if known is None:
            return xor_of(map(_DIGEST, new.values()))
        judged = set(self.judged)  # each is in `new`
        total = known ^ xor_of(map(_DIGEST, map(new.__getitem__, judged)))
        total ^= xor_of(items[rel][3] for rel in judged if rel in items)
        if len(new) - len(judged.difference(items.keys())) != len(items):  # some are gone
            total ^= xor_of(items[rel][3] for rel in items.keys() - new.keys())
        return total

    def save(self) -> None:
        """Keep the verdicts in the cache, with their digest (`total`) in a cache of
        entries; then the entries made here need their pickles no more
        (`cache.drop_rows`)."""
        self.total = self.digest() if self.cache.entries else None
        held = (self.cache.save(self.new, self.judged, self.total)
                if self.changed or len(self.new) != len(self.cache.items) else False)
        made, self.made = self.made, []
        if held:  # once the cache holds them
            write(functools.partial(drop_rows, made))
        else:
            drop_rows(made)


_DIGEST = operator.itemgetter(3)  # an item's file digest

# A file's `lstat` as the cache compares it: (mode, size, mtime_ns, inode)
_Stat = tuple[int, int, int, int]
# A file `_Files.verdict` put off parsing: (rel, agent, path, stat, its bytes if read)
_Later = tuple[str, str, str, _Stat, bytes | None]
# What `_Files.verdict` returns for it until `judge_later` has parsed it
_LATER: _Item = (-1, -1, -1, b"", ("not judged yet",), False)


def _stat(path: str) -> _Stat | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)


def file_digest(rel: str, data: bytes) -> bytes:
    """A file's content digest. It covers the path too: a hand-written entry's date and
    agent come from its name and folder, so equal bytes elsewhere may parse differently."""
    return hashes.blake2b(rel.encode() + b"\0" + data, digest_size=16).digest()


def _plain(data: bytes) -> bool:
    """Whether a valid entry's file was written without frontmatter."""
    return not data.removeprefix(b"\xef\xbb\xbf").startswith(b"---")


def _unreadable(exc: OSError) -> _Item:
    return (-1, -1, -1, b"", (f"file: cannot be read: {exc.strerror}",), False)


FORK_AT = 1000  # files to parse before children share the work (a fork costs ~ms)


def _judged_file(job: _Later, policy: Policy) -> tuple[bytes, bool, bool, object]:
    """(digest, plain, True, (the entry's field values, their pickle)) or (digest,
    False, False, its problems) of a file put off (`_Later`: read now when its bytes are
    None; the digest is empty when it cannot be read): plain values, which pickle fast
    (`journal.forked` sends them back from a child); the entry cache keeps the pickle as
    it is (`cache.entry_bytes`), and the entry is made from the values."""
    rel, agent, path, _, data = job
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            return b"", False, False, _unreadable(exc)[4]
    judged = _judge(data, os.path.basename(path), agent, policy)
    if isinstance(judged, tuple):
        return file_digest(rel, data), False, False, judged
    return file_digest(rel, data), _plain(data), True, (entry_row(judged), entry_bytes(judged))


def collector_paused() -> _Paused:
    """The cyclic garbage collector off while many objects without reference cycles are
    made (entries parsed or unpickled, a fold's facts, rendered files): it would only
    re-scan every one made so far, again and again. At 10k lessons that was a seventh of
    a fold and render's CPU. A cycle made meanwhile is collected once it is back on."""
    return _Paused()


class _Paused:
    """`collector_paused` (a class, not `contextlib`: the hooks import this module, and
    `contextlib` costs them ~0.7 ms)."""

    __slots__ = ("enabled",)

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            gc.enable()


def read_journal(layout: Layout, policy: Policy, use_cache: bool = True,
                 cache: Cache | None = None, listing: Listing | None = None) -> Journal:
    """Judge (or recall from the cache) every entry of the main journal; `cache`: the
    entry cache loaded already (`entry_cache`); `listing`: the journal's listing started
    already (`start_listing`)."""
    with collector_paused():
        return _read_journal(layout, policy, use_cache, cache, listing)


def entry_cache(layout: Layout, policy: Policy, use_cache: bool = True) -> Cache:
    """The entry cache `read_journal` reads, loaded now (the distiller loads it while
    `git status` runs)."""
    with collector_paused():
        return Cache(_cache_path(layout), policy.key, use_cache, entries=True)


def _cache_path(layout: Layout) -> str:
    return os.path.join(cache_dir(layout.state_dir), "entries.pickle")


def _read_journal(layout: Layout, policy: Policy, use_cache: bool,
                  cache: Cache | None, listing: Listing | None) -> Journal:
    if listing is None:
        listing = start_listing(layout, use_cache)
    if cache is None:
        try:
            cache = Cache(_cache_path(layout), policy.key, use_cache, entries=True)
        except BaseException:
            if listing is not None:
                listing.close()
            raise
    files = _Files(cache, policy, share, from_row=parsed_entry)
    journal = Journal()
    plain: list[int] = []
    misnamed: list[str] = []
    listed: list[str] = []
    where = _paths(layout)
    if listing is not None:
        found, misnamed = listing.result()
        listed = files.verdicts(found, where)
    else:
        for agent, rel, name in track(entry_files(layout, misnamed), "reading the journal",
                                      "entries"):
            if files.verdict(agent, where(agent, name), rel) is not None:
                listed.append(rel)
    files.judge_later("parsing the journal")  # the files that changed, all at once
    items = files.new
    for rel in listed:
        item = items[rel]
        if isinstance(item[4], tuple):
            journal.invalid[rel] = item[4]
            continue
        if item[5]:
            plain.append(len(journal.entries))
        journal.entries.append((rel, item[4]))  # type: ignore[arg-type]
    files.save()
    journal.parsed, journal.items, journal.digest = files.parsed, files.new, files.total
    journal.invalid.update((rel, (MISNAMED,)) for rel in misnamed)
    if plain:
        journal.plain = {journal.entries[i][0] for i in plain}
        _plain_topics(journal, plain)
    return journal


STAT_FORK_BYTES = 2_000_000  # an entry cache this large (~4k entries): stat in a child
# A journal folder changed this recently when it was listed may have changed again within
# the same tick of its mtime: it is listed again (git's "racy" entries, the same way).
# Where the file system's own clock was read before the listing (`Listing`), that
# reading is the bound instead.
RACY_NS = 2_000_000_000

# A listed entry file: (agent, memory-root-relative path, file name, its `lstat`)
_Listed = tuple[str, str, str, _Stat | None]
# A journal folder's stat as a listing saw it: (device, inode, mtime_ns, ctime_ns), None
# if none
_Folder = tuple[int, int, int, int] | None


def start_listing(layout: Layout, use_cache: bool = True) -> Listing | None:
    """The listing of a large journal (an entry cache of `STAT_FORK_BYTES` or more),
    started in a forked child now; None for a small one (`read_journal` lists it then)."""
    try:
        large = use_cache and os.stat(_cache_path(layout)).st_size >= STAT_FORK_BYTES
    except OSError:
        large = False
    return Listing(layout) if large else None


class Listing:
    """Every journal entry file with its `lstat`, listed in forked children from when it
    is made (at 100k lessons that costs about half a second): the distiller starts it
    before it loads the entry cache, reads `git status` and files adopted memory and the
    outbox. `result()` then lists again each journal folder that changed since a child
    listed it (or that is racy: below), so a file filed meanwhile is read, and
    one removed meanwhile is not; `close()` ends a listing whose result is not wanted.

    A folder changed just before the listing began is racy: a change within the same
    tick of the file system's clock could leave its stat as it was. That tick is told by
    the clock itself: a file in the state dir is touched before the children start
    (`touched_now`), and a folder last changed before that reading, on the same file
    system, cannot change again without a newer stat. Only the folders changed since,
    or at, that reading are listed again: a distill starts right after lessons were
    filed, and re-listing every folder they went to took ~100 ms at 100k lessons.

    Two children list a half of the journal each (`_halves`) where a child may be
    forked at all: the distiller waits for the listing, not the other way round (at 100k
    lessons on two CPUs it waited ~450 ms for one child that shared them with it and
    `git status`)."""

    __slots__ = ("_children", "_clock", "_layout")

    def __init__(self, layout: Layout) -> None:
        self._layout = layout
        self._clock = _fs_clock(layout)  # before any child looks at a folder
        self._children: list[Callable[[], _PackedListing]] = [
            in_child(functools.partial(_packed_listing, layout, half))
            for half in _halves(layout)]

    def result(self) -> tuple[list[_Listed], list[str]]:
        """(every entry file, sorted by path; the misnamed files), as they are now."""
        children, self._children = self._children, []
        if not children:
            raise RuntimeError("a journal listing gives its result once")
        packed: list[_Packed] = []
        misnamed: list[str] = []
        folders: dict[str, _Folder] = {}
        at = time.time_ns()
        for child in children:  # halves in path order: their files are in it too
            got = child()
            packed += got[0]
            misnamed += got[1]
            folders.update(got[2])
            at = min(at, got[3])  # the earlier: a folder racy for one is racy here
        misnamed.sort()
        return _caught_up(self._layout, _unpacked(packed), misnamed, folders, at,
                          self._clock)

    def close(self) -> None:
        """Wait for the children of a listing whose result was not taken."""
        children, self._children = self._children, []
        for child in children:
            child()


# The file system's clock as a file touched in the state dir read it: (its device, its
# mtime); None when it cannot be touched (then `RACY_NS` bounds a racy folder)
_Clock = tuple[int, int] | None


def _fs_clock(layout: Layout) -> _Clock:
    try:
        st = touched_now(os.path.join(cache_dir(layout.state_dir), "clock"))
    except OSError:
        return None
    return (st.st_dev, st.st_mtime_ns)


def _halves(layout: Layout) -> list[list[str]]:
    """The journal folders (agents, in path order) in two runs of about as many files each
    (weighed by each folder's size, which grows with its names); one run where no child
    can be forked or one folder holds the journal."""
    agents = journal_order(layout.agents_on_disk())
    if children() < 1 or len(agents) < 2:
        return [agents]
    sizes = []
    for agent in agents:
        try:
            sizes.append(os.stat(layout.journal_dir(agent)).st_size)
        except OSError:
            sizes.append(0)
    # the first folders whose sizes reach half the total, and at least one folder each
    cut = bisect.bisect_left(list(itertools.accumulate(sizes)), -(-sum(sizes) // 2)) + 1
    cut = min(cut, len(agents) - 1)
    return [agents[:cut], agents[cut:]]


def _folder(path: str) -> _Folder:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _listing(layout: Layout) -> tuple[list[_Listed], list[str], dict[str, _Folder], int]:
    """Every journal entry file (`listing.entry_files`) with its `lstat` (`_stat`), the
    misnamed files, and each journal folder's stat taken before it was listed, with the
    time it was taken."""
    packed, misnamed, folders, at = _packed_listing(layout)
    return _unpacked(packed), misnamed, folders, at


# A journal folder's part of a listing as a child sends it: (agent, its entry files'
# names joined by NUL, their `lstat`s as four ints each, `_GONE` for a file gone). At
# 100k lessons, 100k tuples of four took ~250 ms to pickle in the child and ~130 to load
# here; a string and a list of ints per folder, a few ms.
_Packed = tuple[str, str, list[int]]
_GONE = (-1, -1, -1, -1)


# (each folder's files packed, the misnamed files, each folder's stat, when it began)
_PackedListing = tuple[list[_Packed], list[str], dict[str, _Folder], int]


def _packed_listing(layout: Layout, agents: list[str] | None = None) -> _PackedListing:
    """`_listing`, each journal folder's files packed (`_Packed`); of `agents`' folders
    alone, in path order (`listing.journal_order`) when given."""
    at = time.time_ns()
    folders = {agent: _folder(layout.journal_dir(agent))
               for agent in (layout.agents_on_disk() if agents is None else agents)}
    misnamed: list[str] = []
    packed = []
    for agent, names in entry_names(layout, misnamed, agents):
        folder = layout.journal_dir(agent) + os.sep
        stats: list[int] = []
        for name in names:
            stats += _stat(folder + name) or _GONE
        packed.append((agent, "\0".join(names), stats))
    return packed, misnamed, folders, at


def _unpacked(packed: list[_Packed]) -> list[_Listed]:
    """The listed files of `_packed_listing`'s folders, in order."""
    found: list[_Listed] = []
    for agent, joined, stats in packed:
        names = joined.split("\0") if joined else []
        every = iter(stats)
        seen: list[_Stat | None] = list(zip(every, every, every, every, strict=True))
        if -1 in stats[::4]:  # a file gone between its listing and its `lstat`
            seen = [None if st == _GONE else st for st in seen]
        rels = map(f"{agent}/{JOURNAL}/".__add__, names)
        found += zip(itertools.repeat(agent, len(names)), rels, names, seen, strict=True)
    return found


def _caught_up(layout: Layout, found: list[_Listed], misnamed: list[str],
               folders: dict[str, _Folder], at: int,
               clock: _Clock = None) -> tuple[list[_Listed], list[str]]:
    """A listing made at `at` (`_listing`), brought up to date: each journal folder whose
    stat is not the one it was listed under, or was racy then (`_settled`), is listed
    again, its new entry files `lstat`ed. `found` is sorted by path, so each agent's
    files are one run of it: only the runs of the folders listed again are read (at
    100k lessons, going through every row took ~100 ms)."""
    agents = layout.agents_on_disk()
    again = {agent for agent in agents
             if not _settled(layout.journal_dir(agent), folders.get(agent), at, clock)}
    again.update(set(folders) - set(agents))  # a folder gone: its files with it
    if not again:
        return found, misnamed
    on_disk = set(agents)
    path = _paths(layout)
    kept: list[_Listed] = []
    done = 0
    misfits = [rel for rel in misnamed if rel.split("/", 1)[0] not in again]
    for agent in sorted(again, key=lambda agent: f"{agent}/{JOURNAL}/"):  # in path order
        start = bisect.bisect_left(found, f"{agent}/{JOURNAL}/", done, key=_rel_of)
        end = bisect.bisect_left(found, f"{agent}/{JOURNAL}0", start, key=_rel_of)  # '/' + 1
        kept += found[done:start]
        done = end
        if agent not in on_disk:
            continue
        listed = _listdir(layout.journal_dir(agent))
        names = set(listed)
        run = [row for row in found[start:end] if row[2] in names]
        had = {row[2] for row in found[start:end]}
        for name in listed:
            if name in had:
                continue
            rel = f"{agent}/{JOURNAL}/{name}"
            if ENTRY_NAME_RE.fullmatch(name):
                run.append((agent, rel, name, _stat(path(agent, name))))
            elif not name.startswith("."):
                misfits.append(rel)
        run.sort(key=_rel_of)
        kept += run
    kept += found[done:]
    misfits.sort()
    return kept, misfits


def _settled(path: str, seen: _Folder, at: int, clock: _Clock) -> bool:
    """Whether the journal folder at `path` is as a listing that began at `at` saw it
    (`seen`), changed before the file system's clock read `clock` (`_fs_clock`, read
    before the listing) when it is on that file system, else `RACY_NS` before `at`:
    then any change since would show in its stat (mtime or ctime: on Windows `ctime` is
    the time it was made)."""
    if seen is None or _folder(path) != seen:
        return False
    if clock is not None and seen[0] == clock[0]:
        return max(seen[2], seen[3]) < clock[1]
    return at - seen[2] >= RACY_NS


def _rel_of(row: _Listed) -> str:
    return row[1]


def _paths(layout: Layout) -> Callable[[str, str], str]:
    """The path of journal file `name` of `agent`, each agent's folder joined once (10k
    joins cost ~15 ms)."""
    folders: dict[str, str] = {}

    def path(agent: str, name: str) -> str:
        folder = folders.get(agent)
        if folder is None:
            folder = folders[agent] = layout.journal_dir(agent)
        return folder + os.sep + name

    return path


def read_entries(layout: Layout, policy: Policy, rels: Iterable[str]) -> Journal:
    """Only the entries at `rels` (memory-root-relative journal paths), judged as
    `read_journal` judges them, without the cache: for a reader that needs a few of 10k.
    A plain entry keeps the default topic (its topic from its agent's other entries is
    `read_journal`'s)."""
    journal = Journal()
    for rel in rels:
        agent, name = rel.split("/", 1)[0], rel.rsplit("/", 1)[-1]
        path = os.path.join(layout.journal_dir(agent), name)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                journal.invalid[rel] = ("file: is a symlink; journal entries are regular files",)
                continue
            with open(path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            continue
        except OSError as exc:
            journal.invalid[rel] = (f"file: cannot be read: {exc.strerror}",)
            continue
        judged = _judge(data, name, agent, policy)
        journal.parsed += 1
        if isinstance(judged, tuple):
            journal.invalid[rel] = judged
        else:
            journal.entries.append((rel, judged))
    return journal


def _plain_topics(journal: Journal, plain: list[int]) -> None:
    """A plain entry whose file name (after its date) starts with a topic that its
    agent's other entries use takes that topic (the longest one); else it keeps the
    default topic. Decided from the journal alone, so every reader agrees."""
    skip = set(plain)
    topics: dict[str, set[str]] = {}
    for i, (_, entry) in enumerate(journal.entries):
        if i not in skip:
            topics.setdefault(entry.agent, set()).add(entry.topic)
    for i in plain:
        rel, entry = journal.entries[i]
        slug = rel.rsplit("/", 1)[-1][11:].removesuffix(".md")
        found = [t for t in topics.get(entry.agent, ()) if slug == t or slug.startswith(t + "-")]
        if found:
            topic = max(found, key=len)
            journal.entries[i] = (rel, entry.replace(topic=topic))


def read_lessons(layout: Layout, found: Iterable[Found], policy: Policy,
                 cache: str = "pending") -> list[PendingFile]:
    """The `PendingFile` views of the entry files `found`, judged exactly as distill judges them.

    `cache` names the small cache these views are kept in (one per caller, so
    that the wake-up and reminder hooks do not evict each other's).
    """
    path = os.path.join(cache_dir(layout.state_dir), f"{cache}.marshal")
    files = _Files(Cache(path, policy.key, True, entries=False), policy, _shown)
    out = []
    for agent, full, rel, outbox in found:
        item = files.verdict(agent, full, rel)
        if item is None:
            continue
        verdict = item[4]
        lesson = PendingFile(agent, full, rel, outbox)
        if isinstance(verdict, tuple):
            lesson.problems = verdict
        else:
            for name, value in verdict.items():  # type: ignore[attr-defined]
                setattr(lesson, name, value)
        out.append(lesson)
    files.save()
    return out


KEEP_FILED_MAX = 50  # a bigger batch (an import, an init) is judged by its next reader


def keep_filed(layout: Layout, policy: Policy, filed: Iterable[tuple[str, str, bool]]) -> None:
    """Judge entry files just filed, (agent, path, in outbox), into the hooks' cache, as
    `pending` would judge them: the next wake-up, reminder or write then finds them
    judged. Without it, the first hook after any lesson was written imported the parser
    to judge that one file (about 50 ms at the next agent's start). Only speed is at
    stake: a file not kept here is judged by its next reader."""
    found = [(agent, path, (f"outbox/{agent}/" if outbox else f"{agent}/{JOURNAL}/")
              + os.path.basename(path), outbox) for agent, path, outbox in filed]
    if not found or len(found) > KEEP_FILED_MAX:
        return
    path = os.path.join(cache_dir(layout.state_dir), "pending.marshal")
    try:  # the lessons are filed: nothing here may turn that into a failure
        files = _Files(Cache(path, policy.key, True, entries=False), policy, _shown)
        for agent, full, rel, _ in found:
            files.verdict(agent, full, rel)
        if files.changed:  # every other pending file stays as judged
            files.cache.save({**files.cache.items, **files.new})
    except Exception:  # a cache: the next reader judges the files itself
        return


def pending(layout: Layout, policy: Policy) -> list[PendingFile]:
    """Every pending lesson (journal and outbox), valid or not, newest first: in the
    reverse of the order the next distill replays them (`order.causal_order`: what each
    knew, what it names, then its clock); the invalid ones last."""
    lessons = read_lessons(layout, pending_paths(layout), policy)
    valid = [(x.rel, x) for x in lessons if not x.problems and x.stamp]
    ordered = [x for _, x in reversed(causal_order(valid, clock=_when))]  # type: ignore[type-var]
    return ordered + [x for x in lessons if x.problems or not x.stamp]


def _when(lesson: PendingFile) -> float:
    return lesson.when
