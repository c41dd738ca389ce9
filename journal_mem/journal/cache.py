"""The disposable cache files in the common git dir (`<git-common-dir>/journal-mem/cache/`).

A missing, corrupt or foreign-version file is ignored and rebuilt: nothing
here is ever the only copy of anything. Standard library only at import: the
Claude Code hooks read their small cache through it (`plain`: kept with
`marshal`, so that a hook imports neither `pickle` nor `datetime`, ~4 ms); the
entry model is imported only when a cache holding entries is written or read back.
"""

from __future__ import annotations

import _thread
import copyreg
import functools
import io
import itertools
import marshal
import operator
import os

from journal_mem.fsutil import replace_atomic_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping
    from pickle import Pickler
    from typing import Any, TypeVar

    from journal_mem.journal.entry import Entry
    from journal_mem.journal.near import Signatures

    _T = TypeVar("_T")
    # (rows a `FoldCache` gave, the keys whose row differs from theirs): `FoldCache.save`
    Since = tuple[dict[str, tuple[Any, ...]], set[str]]

# 6: one cache per reader (journal, hook views); keyed by the whole validation policy;
# plain entries (no frontmatter) marked; 9: a pending view holds its knew (8: its topic,
# its body's first words)
CACHE_VERSION = 11  # 11: a long key group's history edges (`order.history_edges`)
_PROTOCOL = 5  # pickle's newest (`pickle.HIGHEST_PROTOCOL` in 3.11-3.14)

# The functions a cache names once per item (each entry of the entry cache; each UTC date
# of a pickle with no memo), written as an extension code of two bytes instead of their
# module and name: a load looks such a code up in a dict, where a name was looked up
# again for every item (100k at 100k lessons: 120 of the entry cache's 300 ms). Codes
# 240-255 are for private use (`copyreg`). A cache written with them does not load where
# they are not registered (an older journal-mem): it is then no cache, parsed again.
EXTENSIONS = {"lazy_entry": 241, "_at_utc": 242}
for _name, _code in EXTENSIONS.items():
    copyreg.add_extension(__name__, _name, _code)
_Item = tuple[int, int, int, bytes, object, bool]  # see reader.py


def xor_of(digests: Iterable[bytes]) -> int:
    """The digest of a set of files from their own digests (each covering its path): their
    XOR, so that adding a file is one XOR more, and a set of most of a cache's files is
    weighed by the few it lacks (`Cache.digest`)."""
    return functools.reduce(operator.xor, map(int.from_bytes, digests), 0)


def cache_dir(state_dir: str) -> str:
    return os.path.join(state_dir, "cache")


def _entry_fields() -> tuple[str, ...]:
    """The entry's field names; the entry model is imported here, on first use (the
    hooks' small caches never need it)."""
    if not _FIELDS:
        from journal_mem.journal import lazy  # and the entry model

        Entry = lazy.Entry
        _FIELDS.extend(lazy.SLOTS)
        _ENTRY.extend((Entry, lazy.LazyEntry))
        _BUILD.append(builder(Entry, _FIELDS, _SHARED_FIELDS))
        _ROW.append(operator.attrgetter(*_FIELDS))
        _LAZY.extend((lazy.lazy, lazy.row_of, lazy.made, lazy.drop_rows))
        fill: Callable[..., Any] = builder(Entry, _FIELDS, _SHARED_FIELDS, fill=True)
        lazy.setup(_ROW[0], fill)
    return tuple(_FIELDS)


_FIELDS: list[str] = []
_ENTRY: list[type[Entry]] = []  # Entry, lazy.LazyEntry
_BUILD: list[Callable[..., Entry]] = []
_LAZY: list[Callable[..., Any]] = []  # lazy.lazy, lazy.row_of, lazy.made, lazy.drop_rows
# Fields with few distinct values (agents, topics, types, keys a correction reuses):
# 100k entries hold one copy of each value, not 100k (distill of 100k entries <= 300 MB).
_SHARED_FIELDS = frozenset({"agent", "topic", "type", "importance", "key", "supersedes",
                            "retracts", "applies_to", "tags"})
_SHARED: dict[object, object] = {}


def builder(cls: type[_T], names: list[str] | tuple[str, ...],
            shared: frozenset[str] = frozenset(), fill: bool = False) -> Callable[..., _T]:
    """`cls(*values)` with the shared fields shared, as one function made for its fields:
    it sets each slot through its descriptor, as the frozen dataclass's `__init__` does
    through `object.__setattr__`, at half the cost (10k entries come back from the cache
    at each distill; a fold makes a fact of each live key). A class with a
    `__post_init__` or without slots gets its own `__init__`. With `fill`: a function
    `fill(obj, *values)` that sets the slots of an object made already (of `cls` or a
    subclass of it that adds slots: `lazy.LazyEntry`)."""
    args = ", ".join(f"v{i}" for i in range(len(names)))
    values = [f"share(v{i}, v{i})" if name in shared else f"v{i}"
              for i, name in enumerate(names)]
    sets = "".join(f"    s{i}(o, {value})\n" for i, value in enumerate(values))
    if fill:
        source = f"def build(o, {args}):\n{sets}"
    elif hasattr(cls, "__post_init__") or "__slots__" not in cls.__dict__:
        source = f"def build({args}):\n    return cls({', '.join(values)})\n"
    else:
        source = f"def build({args}):\n    o = new(cls)\n{sets}    return o\n"
    space: dict[str, Any] = {"cls": cls, "new": object.__new__, "share": _SHARED.setdefault}
    space.update((f"s{i}", getattr(cls, name).__set__) for i, name in enumerate(names))
    # exec of the text, not of `compile(...)`: the builtin `compile` first sets up the
    # `ast` module's classes (~0.8 ms of the first call in a process), `exec` does not
    exec(source, space)
    build: Callable[..., _T] = space["build"]
    return build


def shared_entry(*values: Any) -> Entry:
    """An entry from its field values, with the repetitive ones shared between entries."""
    if not _BUILD:
        _entry_fields()
    return _BUILD[0](*values)


def share(entry: Entry) -> Entry:
    """`entry` rebuilt by `shared_entry` (as the cache would give it back)."""
    return shared_entry(*entry_row(entry))


def entry_row(entry: Entry) -> tuple[object, ...]:
    """An entry's field values, in field order (one `attrgetter`, made in C)."""
    if not _ROW:
        _entry_fields()
    row: tuple[object, ...] = _ROW[0](entry)
    return row


_ROW: list[Callable[[Entry], tuple[object, ...]]] = []


def entry_bytes(entry: Entry) -> bytes:
    """The pickle of an entry's field values: what the entry cache keeps of it, and what
    `lazy_entry` makes it again from (the very bytes a lazy entry was made from)."""
    row = row_of(entry)
    if row is None:
        buffer = io.BytesIO()
        _pickler(buffer, entries=False).dump(entry_row(entry))
        row = buffer.getvalue()
    return row


def row_of(entry: Entry) -> bytes | None:
    """The bytes a lazy entry was made from, read without reading its fields (None: an
    entry made otherwise)."""
    if not _LAZY:
        _entry_fields()
    row: bytes | None = _LAZY[1](entry)
    return row


def lazy_entry(row: bytes) -> Entry:
    """The entry whose field values `entry_bytes` pickled, its fields set when first read
    (`lazy.LazyEntry`): the entry cache loads 100k of them without making one."""
    if not _LAZY:
        _entry_fields()
    made: Entry = _LAZY[0](row)
    return made


def parsed_entry(values: tuple[object, ...], row: bytes) -> Entry:
    """An entry parsed just now, from its field `values`, that the cache keeps as `row`
    (their pickle, `entry_bytes`: made where it was parsed)."""
    if not _LAZY:
        _entry_fields()
    made: Entry = _LAZY[2](row, values)
    return made


def drop_rows(entries: list[Entry]) -> None:
    """Let go of the pickles of entries `parsed_entry` made, once the cache is saved
    (`lazy.drop_rows`)."""
    if entries:
        _LAZY[3](entries)


def _entry_reduce(entry: Entry) -> tuple[Any, tuple[object, ...]]:
    # Pickle an entry as the bytes of its field values: loading it back makes a lazy entry
    # (`lazy_entry`) and reads none of them. The dataclass default (a state dict through
    # __setstate__) was about three times slower than the field values for 100k entries.
    return lazy_entry, (entry_bytes(entry),)


def _utc_types() -> list[Any]:
    """[datetime.datetime, datetime.UTC], imported on first use: a cache with no datetime
    in it never imports datetime."""
    if not _UTC:
        import datetime

        _UTC.extend((datetime.datetime, datetime.UTC))
    return _UTC


_UTC: list[Any] = []


def _at_utc(state: bytes) -> Any:
    """The UTC datetime whose pickled state is `state` (`_datetime_reduce`)."""
    kinds = _UTC or _utc_types()
    return kinds[0](state, kinds[1])


def _datetime_reduce(value: Any) -> tuple[Any, tuple[Any, ...]]:
    # A datetime pickles its tzinfo with it, and with no memo (`fast`) every one of 100k
    # `created` dates made and loaded its own `timezone` and `timedelta`: a UTC one is
    # its state alone, rebuilt on the shared `UTC` (a third of the bytes, less than half
    # the time to load). Any other tzinfo pickles as it always did.
    reduced: tuple[Any, tuple[Any, ...]] = value.__reduce_ex__(_PROTOCOL)
    if value.tzinfo is _UTC[1]:
        return _at_utc, (reduced[1][0],)
    return reduced


def _pickler(fh: Any, entries: bool, shared: bool = False) -> Pickler:
    import pickle

    pickler = pickle.Pickler(fh, protocol=_PROTOCOL)
    if not _TABLES:  # made once: an entry's fields are pickled one entry at a time
        _TABLES.append({**copyreg.dispatch_table, _utc_types()[0]: _datetime_reduce})
    if entries and len(_TABLES) < 2:  # the entry model only for a cache of entries
        _entry_fields()
        _TABLES.append({**_TABLES[0], **dict.fromkeys(_ENTRY, _entry_reduce)})
    pickler.dispatch_table = _TABLES[1 if entries else 0]
    # No memo: it holds an entry for every object pickled (~80 MB at 100k entries).
    # Nothing pickled here refers to itself; shared values are re-shared on load. With
    # `shared`, an object pickled twice is kept once and loads as one object again.
    pickler.fast = not shared
    return pickler


# the pickler's dispatch tables: without entries (datetimes only), with them
_TABLES: list[dict[Any, Any]] = []


def load(path: str, key: object, plain: bool = False) -> tuple[str, dict[str, Any]]:
    """(generation, items) of one cache file made under `key`; ("", {}) when unusable.
    `plain`: a file `dump` wrote with `plain`."""
    gen, items, _ = _load(path, key, plain)
    return gen, items


def _load(path: str, key: object, plain: bool) -> tuple[str, dict[str, Any], int | None]:
    """`load`, and the `digest` the file was written with (None without one)."""
    try:
        with open(path, "rb") as fh:
            if plain:  # from bytes: `marshal.load` reads a file a few bytes at a time
                data = marshal.loads(fh.read())
            else:
                import pickle

                data = pickle.load(fh)
        if data.get("version") == CACHE_VERSION and data.get("key") == key:
            items, digest = data["items"], data.get("digest")
            assert isinstance(items, dict)
            return str(data["gen"]), items, digest if isinstance(digest, int) else None
    except Exception:  # disposable: any damage means "no cache"
        pass
    return "", {}, None


def dump(path: str, gen: str, key: object, items: dict[str, Any], entries: bool,
         shared: bool = False, plain: bool = False, digest: int | None = None) -> None:
    """Write one cache file atomically (temp file, then rename); `entries`: it holds entries;
    `shared`: with the pickle's memo (`_pickler`); `plain`: with `marshal`, for plain
    values only (str, bytes, numbers, None, and tuples and dicts of them); `digest`: kept
    with it (`Cache.digest`)."""
    data = {"version": CACHE_VERSION, "gen": gen, "key": key, "items": items}
    if digest is not None:
        data["digest"] = digest
    if plain:
        replace_atomic_with(path, lambda fh: fh.write(marshal.dumps(data)))
    else:
        replace_atomic_with(path, lambda fh: _pickler(fh, entries, shared).dump(data))


def _replace(path: str, gen: str, key: object, items: dict[str, Any], entries: bool,
             shared: bool = False, plain: bool = False, digest: int | None = None) -> None:
    """`dump` a cache's base file, then remove the delta that was over the old one."""
    dump(path, gen, key, items, entries, shared=shared, plain=plain, digest=digest)
    try:
        os.unlink(path + ".delta")
    except FileNotFoundError:
        pass


# --- writes held while a distill waits on git ---------------------------------------

_HELD: list[HeldWrites] = []  # who holds this process's cache writes, while one does


def write(op: Callable[[], object]) -> None:
    """Write a cache file now (`op`), or hold the write for `HeldWrites` (and anything
    that must come after the writes held so far). A held write's values are never
    changed after it is made: each save builds the dicts it writes."""
    if _HELD and _HELD[-1].writer != _thread.get_ident():
        _HELD[-1].ops.append(op)
    else:  # not held, or by the thread that writes them (a held op that saves)
        op()


class HeldWrites:
    """The cache writes of one distill, held while it is entered (`with HeldWrites() as
    held`) until `start` runs them in a thread while the distill waits on git's processes
    for its commit; those held after `start`, and all of them when nothing started, run
    as it is left, in order. A write that fails with `OSError` leaves a cache only
    slower, as it always did. (A class, not `contextlib`: the hooks import this module,
    and `contextlib` costs them ~0.7 ms.)"""

    def __init__(self) -> None:
        self.ops: list[Callable[[], object]] = []
        self.thread: Any = None
        self.writer = -1  # the thread that writes them, once started
        self.failed: BaseException | None = None

    def __enter__(self) -> HeldWrites:
        _HELD.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _HELD.remove(self)
        self.finish()

    def start(self) -> None:
        """Run the writes held so far in a thread."""
        import threading

        ops, self.ops = self.ops, []
        self.thread = threading.Thread(target=self._run, args=(ops,), daemon=True)
        self.thread.start()

    def _run(self, ops: list[Callable[[], object]]) -> None:
        self.writer = _thread.get_ident()
        try:
            _run_all(ops)
        except BaseException as exc:  # raised again by `finish`, in the distill's thread
            self.failed = exc
        finally:  # a thread made later may be given the same ident
            self.writer = -1

    def finish(self) -> None:
        if self.thread is not None:
            self.thread.join()
        ops, self.ops = self.ops, []
        _run_all(ops)
        if self.failed is not None:
            raise self.failed


def _run_all(ops: list[Callable[[], object]]) -> None:
    for op in ops:
        try:
            op()
        except OSError:  # a cache we cannot write is only slower
            pass


class Cache:
    """A base file and a delta of what changed since it: writing 20 new entries must not
    rewrite 100k cached ones (the delta is folded into the base once it grows). A cache
    of `entries` is pickled; any other holds plain values, kept with `marshal`.

    `digest`: what its last save was given as the digest of its items (`reader._Files`:
    the XOR of every item's file digest, `xor_of`), None when not given; a save without
    one keeps none."""

    def __init__(self, path: str, key: object, use: bool, entries: bool) -> None:
        self.path, self.key, self.entries = path, key, entries
        self.gen, self.base, base_digest = (_load(path, key, not entries) if use
                                            else ("", {}, None))
        gen, delta, delta_digest = (_load(path + ".delta", key, not entries) if self.base
                                    else ("", {}, None))
        over = bool(gen) and gen == self.gen  # the delta is over this base
        self.delta: Collection[str] = delta.keys() if over else ()
        self.items: dict[str, _Item] = {**self.base, **delta} if self.delta else dict(self.base)
        self.digest = delta_digest if over else base_digest

    def save(self, new: dict[str, _Item], made: Iterable[str] | None = None,
             digest: int | None = None) -> bool:
        """Keep `new` as the cache's content (as a delta when that is much smaller);
        whether the write is held (`HeldWrites`: a delta is; a new base is written now).
        `made`: the paths whose items in `new` are not the very ones of `items` (those of
        files judged again), when the caller knows them: the rest is not compared.
        `digest`: the digest of `new`'s items, kept with them (`digest`)."""
        try:
            return self._save(new, made, digest)
        except OSError:
            return False  # a cache we cannot write is only slower

    def _save(self, new: dict[str, _Item], made: Iterable[str] | None,
              digest: int | None) -> bool:
        base = self.base
        if made is None:
            diff = {rel: item for rel, item in new.items() if base.get(rel) is not item}
        else:  # any other path holds its item of `items`: the base's, unless in the delta
            diff = {rel: new[rel] for rel in itertools.chain(self.delta, made)
                    if rel in new and base.get(rel) is not new[rel]}
        small = len(diff) <= max(1000, len(base) // 5)
        # none gone since the base: a keys view's subset test looks each one up (two sets
        # of 100k paths took ~26 ms, this ~7)
        if base and small and base.keys() <= new.keys():
            write(functools.partial(dump, self.path + ".delta", self.gen, self.key, diff,
                                     self.entries, plain=not self.entries, digest=digest))
            return bool(_HELD)
        # No memo (`shared`): 100k entries would load in two thirds of the time, but the
        # unpickler keeps each entry's field tuple until the load ends, and the distill's
        # peak at 100k rose 20-35 MB. Written now, not held: the entries parsed in this
        # run let go of their pickles once it is (`reader._Files.save`), and a whole
        # journal's (~40 MB at 100k) must not be held through the fold.
        _replace(self.path, os.urandom(8).hex(), self.key, new, self.entries,
                 plain=not self.entries, digest=digest)
        return False


# --- the last render's topics, reused where their input is the same --------------


def topics_path(state_dir: str, name: str = "topics") -> str:
    return os.path.join(cache_dir(state_dir), f"{name}.pickle")


class TopicStore:
    """The topic renderings the last distill kept (`render.TopicCache`), if the code that
    rendered them is `code` (`render.code_key`), with the token of the fold they were
    rendered from (`FoldCache.rows_of`); `token` "" and no topics otherwise.

    A base file, and a delta of the topics kept since it (`set`) and those gone (`gone`),
    which names the base by its token: at 100k lessons ~600 topics pickle to ~23 MB,
    and a distill of 20 new lessons changes ~50 of them (their renderings, then their
    settled stamps; pickling them all took ~65 ms of each distill). The base is written
    again once the delta holds more than a fifth of it. A reused topic is kept as the
    very values it was loaded as, so telling it from the base's compares objects, not
    their contents. `name` "memory": each agent's MEMORY.md, kept the same way
    (`render.MemoryCache`)."""

    def __init__(self, state_dir: str, code: str, name: str = "topics") -> None:
        self.path, self.code = topics_path(state_dir, name), code
        self.base_token, base = load(self.path, ("topics", code))
        self.base: dict[Any, Any] = base
        gen, delta = (load(self.path + ".delta", ("topics", code, self.base_token))
                      if self.base_token else ("", {}))
        got, gone = delta.get("set"), delta.get("gone")
        self.token = self.base_token
        self.topics: dict[Any, Any] = dict(base)
        if gen and isinstance(got, dict) and isinstance(gone, list):
            for name in gone:
                self.topics.pop(name, None)
            self.topics.update(got)
            self.token = gen

    def save(self, topics: dict[Any, Any], token: str) -> None:
        """Keep `topics`, rendered from the fold kept under `token` (`FoldCache.save`)."""
        try:
            self._save(topics, token)
        except OSError:
            pass  # only slower next time

    def _save(self, topics: dict[Any, Any], token: str) -> None:
        base = self.base
        if self.base_token and base:
            changed = {name: value for name, value in topics.items()
                       if base.get(name) != value}
            gone = [name for name in base if name not in topics]
            if len(changed) + len(gone) <= max(50, len(base) // 5):
                write(functools.partial(
                    dump, self.path + ".delta", token, ("topics", self.code, self.base_token),
                    {"set": changed, "gone": gone}, entries=False))
                return
        write(functools.partial(_replace, self.path, token, ("topics", self.code), topics,
                                 entries=False))


# --- the last fold, kept to compare the next one with ------------------------------


def fold_path(state_dir: str) -> str:
    return os.path.join(cache_dir(state_dir), "fold.pickle")


class FoldCache:
    """The last fold's live facts (key: its field values), kept for the next distill's
    change report under a signature of the fold's inputs (`folding.fold_signature`).

    A base file, and a delta of the rows that changed since it (`set`) and the keys gone
    (`gone`): at 100k lessons a distill of 20 new ones changes a few dozen of 56k facts,
    and pickling them all again took half a second. The delta is folded into the base
    once it grows past a fifth of it. Plain tuples: 10k facts pickle and load back in a
    fifth of the time their dataclass takes.

    Each save also gets a token of its own (`rows_of`): one signature can stand for two
    folds (the same lessons folded after a commit removed the code they cite), a token
    for exactly one, so what was rendered from a fold names it by its token."""

    def __init__(self, state_dir: str) -> None:
        self.path = fold_path(state_dir)
        self.gen, base = load(self.path, _FOLD)
        self.token: str = base.get("token", "")
        self.base: dict[str, tuple[Any, ...]] = base.get("rows", {})
        self.base_order: object = base.get("order")
        self.delta_gen, self.delta = (load(self.path + ".delta", (*_FOLD, self.token))
                                      if self.token else ("", {}))
        self._rows: dict[str, tuple[Any, ...]] | None = None  # `_merged`, made once

    def facts(self, signature: str) -> dict[str, tuple[Any, ...]] | None:
        """The facts kept under `signature`, or None."""
        if self.delta_gen and signature == self.delta_gen:  # the newer of the two
            return self._merged()
        if self.gen and signature == self.gen:
            return self.base
        return None

    def rows_of(self, token: str) -> dict[str, tuple[Any, ...]] | None:
        """The facts of the one save that got `token`, or None."""
        if token and self.delta_gen and token == self.delta.get("token"):
            return self._merged()
        if token and token == self.token:
            return self.base
        return None

    def order_of(self, token: str) -> str | None:
        """The keys of the facts of the save that got `token` in rank order, NUL-joined, as
        that save was given them (`render.Rendered.order`); None when it was given none."""
        if token and self.delta_gen and token == self.delta.get("token"):
            order = self.delta.get("order")
        elif token and token == self.token:
            order = self.base_order
        else:
            return None
        return order if isinstance(order, str) else None

    def _merged(self) -> dict[str, tuple[Any, ...]]:
        """The delta's rows put over the base's: one dict, whoever asks (so a caller can
        tell by identity that two folds it was given are one)."""
        if self._rows is None:
            rows = dict(self.base)
            rows.update(self.delta["set"])
            for key in self.delta["gone"]:
                rows.pop(key, None)
            self._rows = rows
        return self._rows

    def _latest(self) -> dict[str, tuple[Any, ...]]:
        """The rows of the last save this cache holds."""
        return self._merged() if self.delta_gen else self.base

    def save(self, signature: str, facts: dict[str, tuple[Any, ...]],
             since: Since | None = None, order: str | None = None) -> str:
        """Keep `facts` under `signature` (as a delta of the base when that is small); the
        save's token, "" when nothing could be written. `since`: rows this cache gave
        (`facts`, `rows_of`) and the keys of `facts` whose row differs from theirs
        (`changed_rows`), so that only those are compared with the base. `order`: their
        keys in rank order, NUL-joined, kept with them (`order_of`)."""
        try:
            return self._save(signature, facts, since, order)
        except OSError:
            return ""  # only slower next time

    def _save(self, signature: str, facts: dict[str, tuple[Any, ...]],
              since: Since | None, order: str | None) -> str:
        base, token = self.base, os.urandom(8).hex()
        if self.token and base:
            keys = facts.keys()
            if since is not None and since[0] is self._latest():
                # every other key's row equals the last save's, and so the base's unless
                # the delta set it
                maybe = since[1].union(self.delta.get("set", ()) if self.delta_gen else ())
                changed = {key: tuple(facts[key]) for key in sorted(maybe)
                           if key in facts and base.get(key) != facts[key]}
            else:  # compared in C: 56k rows at 100k lessons
                differ = map(operator.ne, map(base.get, keys), facts.values())
                changed = {key: tuple(facts[key]) for key in itertools.compress(keys, differ)}
            gone = sorted(base.keys() - keys)
            if len(changed) + len(gone) <= max(1000, len(base) // 5):
                delta = {"set": changed, "gone": gone, "token": token, "order": order}
                write(functools.partial(dump, self.path + ".delta", signature,
                                         (*_FOLD, self.token), delta, entries=False))
                self.delta_gen, self.delta, self._rows = signature, delta, None
                return token
        write(functools.partial(_replace_rows, self.path, signature, facts, token, order))
        self.gen, self.base, self.token, self.delta_gen, self.delta = (
            signature, facts, token, "", {})
        self.base_order, self._rows = order, None
        return token


def _replace_rows(path: str, signature: str, facts: dict[str, tuple[Any, ...]],
                  token: str, order: str | None) -> None:
    # shared: a topic, a type, an agent's name is one object in 56k rows (at 100k
    # lessons it loads back in half the time, as fewer objects)
    # plain tuples: a row given as the fact it is (a named tuple) would pickle its class
    rows = dict(zip(facts, map(tuple, facts.values()), strict=True))
    _replace(path, signature, _FOLD, {"rows": rows, "token": token, "order": order},
             entries=False, shared=True)


_FOLD = ("fold", 2)  # 2: rows and a token


def changed_rows(before: dict[str, tuple[Any, ...]],
                 after: dict[str, tuple[Any, ...]]) -> set[str]:
    """The keys of `after` whose row differs from (or is missing in) `before`, found in C:
    the one comparison of 56k rows at 100k lessons that the change report, the render's
    reuse and the next save share."""
    keys = after.keys()
    return set(itertools.compress(keys, map(operator.ne, map(before.get, keys),
                                            after.values())))


def changed_among(before: Mapping[str, tuple[Any, ...]], after: dict[str, tuple[Any, ...]],
                  keys: Iterable[str]) -> set[str]:
    """`changed_rows` where only `keys` can differ: every other key of `after` has the very
    row it has in `before` (a fold that went on from `before`'s rows: `Fold.rows_from`).
    20 new lessons at 100k make a few dozen keys to compare, not 56k."""
    return {key for key in keys if key in after and before.get(key) != after[key]}


# --- the last fold's replay, kept to go on from ---------------------------------------


def replay_path(state_dir: str) -> str:
    return os.path.join(cache_dir(state_dir), "replay.pickle")


class ReplayCache:
    """The replay the last distill's fold kept (`replay.Kept`, as its fields), under `key`
    (what a replay depends on besides its entries: the agents, the validation policy), and
    the commit it was made against (`head`: history orders entries, `replay.resume`).

    A base file (a whole replay) and a delta (what the replays that went on from it
    changed: their rows and paths, and every other field as the last one left it): 20
    new lessons touch a few dozen of 100k keys. `head` is a file of its own, written
    after the distill's commit: it names the save it belongs to."""

    def __init__(self, state_dir: str, key: object) -> None:
        self.path = replay_path(state_dir)
        self.key = ("replay", 2, key)
        self.gen = ""
        self.base: dict[str, Any] = {}
        self.delta: dict[str, Any] = {}
        self.size = 0  # keys in the base
        self.loaded = False

    def load(self) -> None:
        """Read the kept replay, once (a new base is written without reading the old one)."""
        if self.loaded:
            return
        self.loaded = True
        self.gen, self.base = load(self.path, self.key)
        gen, delta = load(self.path + ".delta", self.key) if self.gen else ("", {})
        self.delta = delta if gen == self.gen else {}
        self.size = len(self.base.get("rows", ()))

    def forget(self) -> None:
        """Let go of the base read (100k keys' rows at 100k lessons): it will not be used."""
        self.base = {}

    @property
    def token(self) -> str:
        """The save this cache holds: its delta's when it has one."""
        return str(self.delta.get("token", self.gen))

    def grown(self) -> int:
        """Rows and paths the delta holds."""
        return len(self.delta.get("rows", ())) + len(self.delta.get("paths", ()))

    def fields(self) -> dict[str, Any] | None:
        """The kept replay's fields, the delta put over the base, or None. The cache lets go
        of the base: it is the caller's now."""
        if not self.base:
            return None
        base, self.base = self.base, {}
        rows, paths = base["rows"], base["paths"]
        if self.delta:
            rows.update(self.delta["rows"])
            paths.update(self.delta["paths"])
        return {**self.delta.get("small", base["small"]), "whole": True, "rows": rows,
                "paths": paths}

    def head(self) -> str:
        """The commit the kept replay was made against ("" when unknown)."""
        try:
            with open(self.path + ".head", encoding="utf-8") as fh:
                token, _, commit = fh.read().strip().partition(" ")
        except (OSError, UnicodeDecodeError):
            return ""
        return commit if token and token == self.token else ""

    def save(self, fields: dict[str, Any]) -> str:
        """Keep a replay's `fields`: over the one this cache holds when it went on from it
        (not `whole`), else as a new base; the save's token ("" if nothing was written)."""
        try:
            return self._save(fields)
        except OSError:
            return ""  # only slower next time

    def _save(self, fields: dict[str, Any]) -> str:
        small = {k: v for k, v in fields.items() if k not in ("rows", "paths")}
        if not fields["whole"]:
            if not self.gen:
                return ""  # nothing to put it over
            delta = {"rows": {**self.delta.get("rows", {}), **fields["rows"]},
                     "paths": {*self.delta.get("paths", ()), *fields["paths"]},
                     "small": small, "token": os.urandom(8).hex()}
            write(functools.partial(dump, self.path + ".delta", self.gen, self.key, delta,
                                     entries=False))
            self.delta = delta
            return str(delta["token"])
        gen = os.urandom(8).hex()
        # shared: a row's path is an object of `paths`, its agents' names the journal's
        # (100k keys at 100k lessons: 20 MB less to load back). Written now, not held: the
        # fold lets go of a whole replay (100k rows at 100k lessons) before its render.
        _replace(self.path, gen, self.key,
                 {"rows": fields["rows"], "paths": fields["paths"], "small": small},
                 entries=False, shared=True)
        self.gen, self.base, self.delta = gen, {}, {}
        self.size = len(fields["rows"])
        return gen


# --- what the rules after the last fold's replay decided, to go on from -----------------


def rules_path(state_dir: str) -> str:
    return os.path.join(cache_dir(state_dir), "rules.pickle")


_RULES = ("rules", 4)  # 4: the commit refs were judged at (3: the keys judged by date
# again later; 2: `similar.Index`)


class RulesStore:
    """What the rules after the last fold's replay decided (`rules.Ruled`, as its fields),
    kept with the token of the replay kept with them (`ReplayCache`), that of the fold's
    facts (`FoldCache`) and the rows of the facts their citations removed after
    (`fold.stale`): the next fold goes on from all of them together, or from none.

    A base file, and a delta that holds the rest whole but of the same-title groups only
    those set or gone since the base, which it names by its replay token: at 100k lessons
    the 55k groups are 5.9 MB of the 7 MB, a distill of 20 new lessons changes a few dozen
    of them, and writing them all took ~60 ms of each distill. The base is written again
    once the delta's groups are more than a fifth of its. A group the fold went on from
    is the very list it was loaded as: going on replaces a group's list and never changes
    one (`rules.go_on`), so telling a group from the base's compares objects."""

    def __init__(self, state_dir: str) -> None:
        self.path = rules_path(state_dir)
        self.base_gen = ""
        self.base: dict[Any, Any] | None = None  # the base's groups, as loaded
        self.files: tuple[str, dict[str, Any], tuple[str, dict[str, Any]]] | None = None

    def read(self) -> None:
        """Read the base and the delta now, for `load` (they load while git runs)."""
        base_gen, items = load(self.path, _RULES)
        self.files = (base_gen, items,
                      load(self.path + ".delta", (_RULES, base_gen)) if base_gen else ("", {}))

    def forget(self) -> None:
        """Let go of the files `read` read: they will not be used."""
        self.files = None

    def load(self, replay: str) -> dict[str, Any] | None:
        """What `save` kept with the replay saved as `replay`, or None."""
        if self.files is None:
            self.read()
        assert self.files is not None
        (base_gen, items, (gen, delta)), self.files = self.files, None
        try:
            groups = items["ruled"]["groups"] if base_gen and replay else None
        except (KeyError, TypeError):  # disposable: another shape is no cache
            return None
        if not isinstance(groups, dict):
            return None
        self.base_gen, self.base = base_gen, dict(groups)
        if base_gen == replay:
            return items
        if gen != replay:
            return None
        try:
            for group in delta["gone"]:
                groups.pop(group, None)
            groups.update(delta["set"])
            return {"ruled": {**delta["ruled"], "groups": groups}, "fold": delta["fold"],
                    "staled": delta["staled"]}
        except (KeyError, TypeError):
            return None

    def save(self, fields: dict[str, Any], replay: str, fold: str,
             staled: dict[str, tuple[Any, ...]]) -> None:
        """Keep `fields` with the tokens they go with (nothing without both)."""
        if not (replay and fold):
            return
        try:
            self._save(fields, replay, fold, staled)
        except OSError:  # only slower next time
            pass

    def _save(self, fields: dict[str, Any], replay: str, fold: str,
              staled: dict[str, tuple[Any, ...]]) -> None:
        groups, base = fields["groups"], self.base
        if base is not None and self.base_gen:
            changed = {group: keys for group, keys in groups.items()
                       if base.get(group) is not keys}
            gone = [group for group in base if group not in groups]
            if len(changed) + len(gone) <= max(1000, len(base) // 5):
                write(functools.partial(
                    dump, self.path + ".delta", replay, (_RULES, self.base_gen),
                    {"ruled": {**fields, "groups": {}}, "set": changed, "gone": gone,
                     "fold": fold, "staled": staled}, entries=False, shared=True))
                return
        write(functools.partial(
            _replace, self.path, replay, _RULES,
            {"ruled": fields, "fold": fold, "staled": staled}, entries=False, shared=True))
        self.base_gen, self.base = replay, dict(groups)


# --- the signatures the last fold's near-duplicates were found by ---------------------


def near_path(state_dir: str) -> str:
    return os.path.join(cache_dir(state_dir), "near.marshal")


_NEAR = ("near", 1)


class NearStore:
    """The signatures of the facts the last fold found its near-duplicates by
    (`near.Signatures`, packed), under the token of the replay it kept
    (`ReplayCache`): the next fold that goes on from that replay goes on from these.

    A base file (every signature in order: at 100k lessons ~490k of them, 6 MB) and a
    delta naming it by its token (the keys added to and removed from a signature since,
    and the groups): 20 new lessons change a few dozen. Past a fifth of the base in
    changes (and 1,000), nothing is kept: the next fold finds them all again and keeps
    that whole. Marshal: plain values."""

    def __init__(self, state_dir: str) -> None:
        self.path = near_path(state_dir)
        self.base_gen = ""
        self.files: tuple[str, dict[str, Any], tuple[str, dict[str, Any]]] | None = None

    def read(self) -> None:
        """Read the base and the delta now, for `load` (they load while git runs)."""
        base_gen, base = load(self.path, _NEAR, plain=True)
        self.files = (base_gen, base, load(self.path + ".delta", (*_NEAR, base_gen),
                                           plain=True) if base_gen else ("", {}))

    def forget(self) -> None:
        """Let go of the files `read` read: they will not be used."""
        self.files = None

    def load(self, token: str) -> tuple[str, dict[str, Any]] | None:
        """(the base's token, the packed signatures kept with the replay `token`), or None."""
        if self.files is None:
            self.read()
        assert self.files is not None
        (base_gen, base, (gen, delta)), self.files = self.files, None
        self.base_gen = base_gen
        if not (token and base_gen):
            return None
        if token == base_gen:
            return base_gen, base
        if token == gen:
            return base_gen, {**base, **delta}
        return None

    def save(self, sigs: Signatures, token: str) -> None:
        """Keep `sigs` with the replay saved as `token`: whole when they were made whole,
        else as what changed since the base they were unpacked from."""
        if not token:
            return
        try:
            if not sigs.base:
                write(functools.partial(_replace, self.path, token, _NEAR, sigs.packed(),
                                         entries=False, plain=True))
                self.base_gen = token
            elif sigs.base == self.base_gen and sigs.changes() <= max(1000, sigs.size() // 5):
                write(functools.partial(dump, self.path + ".delta", token,
                                        (*_NEAR, sigs.base), sigs.delta(), entries=False,
                                        plain=True))
            else:  # grown past a fifth: the next fold finds them all again
                write(functools.partial(_forget, self.path))
        except OSError:
            pass  # only slower next time


def _forget(path: str) -> None:
    """Remove a cache's base and delta (neither is valid any more)."""
    for name in (path, path + ".delta"):
        try:
            os.unlink(name)
        except OSError:
            pass


def save_replay_head(state_dir: str, token: str, commit: str) -> None:
    """Say that the kept replay saved as `token` was made against `commit` (or ends at
    it: the distill's own commit)."""
    if token and commit:
        try:
            replace_atomic_with(replay_path(state_dir) + ".head",
                                lambda fh: fh.write(f"{token} {commit}\n".encode()))
        except OSError:
            pass
