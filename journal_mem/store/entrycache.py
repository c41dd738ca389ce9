"""Reading the whole journal, with parsed entries cached in the common git dir.

The cache (`<git-common-dir>/journal-mem/cache/entries.pickle`) is
disposable: a missing, corrupt or foreign-version cache is ignored and
rebuilt. A file is re-parsed unless its (size, mtime, inode) or, failing
that, its content digest equals what was cached, so a fresh clone (new
mtimes, same bytes) parses nothing twice and an edited file is always
re-parsed. Invalid entries are cached with their problems too.
"""

from __future__ import annotations

import copyreg
import dataclasses
import hashlib
import os
import pickle
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from journal_mem.errors import InvalidEntry
from journal_mem.model.entry import Entry, parse
from journal_mem.model.secretscan import scan
from journal_mem.store.layout import JOURNAL, Layout

CACHE_VERSION = 4  # 4: secrets make an entry invalid; entries rebuilt by shared_entry
Parsed = Entry | tuple[str, ...]  # an entry, or its problems
_Item = tuple[int, int, int, bytes, Parsed]  # size, mtime_ns, inode, digest, parsed


@dataclass
class Journal:
    """Every entry file of the main journal: valid ones, and invalid ones with problems."""

    entries: list[tuple[str, Entry]] = field(default_factory=list)  # (memory-root-rel, entry)
    invalid: dict[str, tuple[str, ...]] = field(default_factory=dict)
    parsed: int = 0  # files parsed in this run (the rest came from the cache)


def cache_path(layout: Layout) -> str:
    return os.path.join(layout.state_dir, "cache", "entries.pickle")


def _entry_reduce(entry: Entry) -> tuple[Any, tuple[object, ...]]:
    # Pickle an entry as its field values: the dataclass default (a state dict
    # through __setstate__) is about three times slower for 100k entries.
    return shared_entry, tuple(getattr(entry, name) for name in _FIELDS)


_FIELDS = tuple(f.name for f in dataclasses.fields(Entry))
# Fields with few distinct values (agents, topics, types, keys a correction reuses):
# 100k entries hold one copy of each value, not 100k (the budget: distill 100k in <= 300 MB).
_SHARED_FIELDS = tuple(_FIELDS.index(name) for name in (
    "agent", "topic", "type", "importance", "key", "supersedes", "retracts", "applies_to",
    "tags"))
_SHARED: dict[object, object] = {}


def shared_entry(*values: Any) -> Entry:
    """An entry from its field values, with the repetitive ones shared between entries."""
    fields = list(values)
    for i in _SHARED_FIELDS:
        fields[i] = _SHARED.setdefault(fields[i], fields[i])
    return Entry(*fields)


def _pickler(fh: Any) -> pickle.Pickler:
    pickler = pickle.Pickler(fh, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, Entry: _entry_reduce}
    # No memo: it holds an entry for every object pickled (~80 MB at 100k entries).
    # Nothing pickled here refers to itself; shared values are re-shared on load.
    pickler.fast = True
    return pickler


def _load_one(path: str, entry_bytes: int) -> tuple[str, dict[str, _Item]]:
    """(generation, items) of one cache file; ("", {}) when absent or unusable."""
    try:
        with open(path, "rb") as fh:
            data = pickle.load(fh)
        if data.get("version") == CACHE_VERSION and data.get("entry_bytes") == entry_bytes:
            items = data["items"]
            assert isinstance(items, dict)
            return str(data["gen"]), items
    except Exception:  # disposable: any damage means "no cache"
        pass
    return "", {}


def _dump(path: str, data: dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        _pickler(fh).dump({"version": CACHE_VERSION, **data})
    os.replace(tmp, path)


class _Cache:
    """A base file and a delta of what changed since it: writing 20 new entries must not
    rewrite 100k cached ones (the delta is folded into the base once it grows)."""

    def __init__(self, path: str, entry_bytes: int, use: bool) -> None:
        self.path, self.entry_bytes = path, entry_bytes
        self.gen, self.base = _load_one(path, entry_bytes) if use else ("", {})
        gen, delta = _load_one(path + ".delta", entry_bytes) if self.base else ("", {})
        self.items = {**self.base, **delta} if gen == self.gen else dict(self.base)

    def save(self, new: dict[str, _Item]) -> None:
        diff = {rel: item for rel, item in new.items() if self.base.get(rel) is not item}
        small = len(diff) <= max(1000, len(self.base) // 5)
        if self.base and small and not set(self.base) - set(new):
            _dump(self.path + ".delta", {"gen": self.gen, "entry_bytes": self.entry_bytes,
                                         "items": diff})
            return
        gen = secrets.token_hex(8)
        _dump(self.path, {"gen": gen, "entry_bytes": self.entry_bytes, "items": new})
        try:
            os.unlink(self.path + ".delta")
        except FileNotFoundError:
            pass


def _parse(data: bytes, name: str, agent: str, entry_bytes: int) -> Parsed:
    try:
        entry = parse(data, filename=name, folder_agent=agent, entry_bytes=entry_bytes)
    except InvalidEntry as exc:
        return tuple(exc.problems)
    # A lesson holding a secret is never folded or committed (`check` reports it too):
    # the distiller's own commit is not scanned by the guard.
    found = scan(data.decode("utf-8"))
    if found:
        return tuple(f"secret: {f.describe()}" for f in found)
    return shared_entry(*(getattr(entry, name) for name in _FIELDS))


def entry_files(layout: Layout) -> list[tuple[str, str, str]]:
    """(agent, memory-root-relative path, file name) of every journal entry file, sorted.

    Names only (no `os.DirEntry`): at 100k entries the dir entries and their
    cached stats would be tens of MB held for the whole read.
    """
    from journal_mem.store.journal import is_entry_name

    out = []
    for agent in layout.agents_on_disk():
        try:
            names = [n for n in os.listdir(layout.journal_dir(agent)) if is_entry_name(n)]
        except (FileNotFoundError, NotADirectoryError):
            continue
        out += [(agent, f"{agent}/{JOURNAL}/{n}", n) for n in names]
    out.sort(key=lambda t: t[1])
    return out


def _fresh(path: str, name: str, agent: str, rel: str, st: os.stat_result,
           by_digest: Callable[[], dict[bytes, Parsed]], entry_bytes: int,
           journal: Journal) -> _Item:
    """Read one file whose stat changed; parse it unless its digest is known."""
    with open(path, "rb") as fh:
        data = fh.read()
    # The digest covers the path too: a hand-written entry's date and agent
    # come from its name and folder, so equal bytes elsewhere may parse differently.
    digest = hashlib.blake2b(rel.encode() + b"\0" + data, digest_size=16).digest()
    parsed = by_digest().get(digest)
    if parsed is None:
        parsed = _parse(data, name, agent, entry_bytes)
        journal.parsed += 1
    return (st.st_size, st.st_mtime_ns, st.st_ino, digest, parsed)


def read_journal(layout: Layout, entry_bytes: int, use_cache: bool = True) -> Journal:
    """Parse (or recall from the cache) every entry of the main journal."""
    import gc

    # Entries hold no reference cycles: the collector would only re-scan every entry
    # made so far, again and again, as 100k of them are parsed or unpickled.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _read_journal(layout, entry_bytes, use_cache)
    finally:
        if enabled:
            gc.enable()


def _read_journal(layout: Layout, entry_bytes: int, use_cache: bool) -> Journal:
    cache = _Cache(cache_path(layout), entry_bytes, use_cache)
    old = cache.items
    digests: list[dict[bytes, Parsed]] = []

    def by_digest() -> dict[bytes, Parsed]:  # built once, and only if a file changed
        if not digests:
            digests.append({item[3]: item[4] for item in old.values()})
        return digests[0]

    new: dict[str, _Item] = {}
    journal = Journal()
    changed = False
    for agent, rel, name in entry_files(layout):
        item = old.get(rel)
        path = os.path.join(layout.journal_dir(agent), name)
        try:
            st = os.lstat(path)
        except FileNotFoundError:  # removed since the listing (never by journal-mem)
            continue
        if stat.S_ISLNK(st.st_mode):
            parsed: Parsed = ("file: is a symlink; journal entries are regular files",)
            item = (0, 0, 0, b"", parsed)
        elif item is None or item[:3] != (st.st_size, st.st_mtime_ns, st.st_ino):
            item = _fresh(path, name, agent, rel, st, by_digest, entry_bytes, journal)
            changed = True
        new[rel] = item
        if isinstance(item[4], Entry):
            journal.entries.append((rel, item[4]))
        else:
            journal.invalid[rel] = item[4]
    if changed or len(new) != len(old):
        try:
            cache.save(new)
        except OSError:
            pass  # a cache we cannot write is only slower
    return journal


# --- the last fold, kept to compare the next one with ------------------------------


def _fact_reduce(fact: Any) -> tuple[type, tuple[object, ...]]:
    return type(fact), tuple(getattr(fact, f.name) for f in dataclasses.fields(fact))


def fold_path(layout: Layout) -> str:
    return os.path.join(layout.state_dir, "cache", "fold.pickle")


def load_fold(layout: Layout, signature: str) -> Any | None:
    """The facts of the fold saved under `signature`, or None."""
    gen, facts = _load_one(fold_path(layout), 0)
    return facts if gen == signature else None


def save_fold(layout: Layout, signature: str, facts: dict[str, Any]) -> None:
    """Keep `facts` (a fold's live facts) for the next distill's change report."""
    from journal_mem.model.fold import Fact

    path = fold_path(layout)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            pickler = _pickler(fh)
            pickler.dispatch_table = {**pickler.dispatch_table, Fact: _fact_reduce}
            pickler.dump({"version": CACHE_VERSION, "gen": signature, "entry_bytes": 0,
                          "items": facts})
        os.replace(tmp, path)
    except OSError:
        pass  # only slower next time
