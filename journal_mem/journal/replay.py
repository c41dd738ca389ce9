"""The fold's replay (docs/DESIGN.md, "Distilling"), and a replay kept to go on from.

The replay applies every entry in causal order (`order.causal_order`) and
knows, for each key, its latest entry, its holders and writers, and whether it
is live. It is the part of a fold that depends on order; what comes after it
(the rules of a date, same-title merges, the reports) reads only its result.

A replay of the entries S is kept (`Kept`: plain data, cached by the distiller)
and a later fold of S and new entries N continues it (`resume`) instead of
replaying S again. That gives what a replay of all of them gives when the
causal order of S and N is the order of S followed by an order of N. It is,
when (each checked here, the git ones by `distill.folding`):

* S is the same entries, byte for byte (the entry files' digests);
* every new entry sorts after every entry of S by (`created`, path): the
  order's tie-break never places it among them;
* no entry of S waits for a new one: none names a new path in its `knew`,
  no new entry is the only entry of a key an entry of S supersedes or
  retracts (it would become the earliest of that key, which the namer comes
  after), and git history orders S as it did: HEAD is the commit S was kept
  at or descends from it (`gitops.lineage.added_since`), no entry of S was
  committed since, and, when a new entry was, no merge came in since and the
  history edges of each entry of S are what they were without the new ones;
* no cycle was broken in S (a new entry that is ready waits out a cycle).

Then every entry of S is placed before any new one, in the order it had, and
the new ones follow in their own causal order, in which a key S has an entry
of names an entry already placed (`causal_order`'s `settled`), and a new entry
committed since comes after those it knew by history. Otherwise the fold
replays everything.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from journal_mem.journal.cache import builder, row_of, xor_of
from journal_mem.journal.order import causal_order, concerns, history_edges, related_entries

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    import datetime as dt
    from typing import Any

    from journal_mem.journal.entry import Entry
    from journal_mem.journal.near import Signatures
    from journal_mem.journal.order import Lineage

ALL = "all"
# A key's replay state as kept: (path, holders, live, seq, writers)
Row = tuple[str, tuple[str, ...], bool, int, tuple[str, ...]]
MAX_NEW = 1000  # more new entries than this: replay everything (and keep it whole)


class KeyState:
    """What the replay knows about one key so far."""

    __slots__ = ("entry", "holders", "live", "path", "seq", "writers")

    def __init__(self, path: str, entry: Entry, holders: set[str]) -> None:
        self.path = path
        self.entry = entry
        self.holders = holders
        self.live = True
        self.seq = 0  # the place of `entry` in the replay: what "latest" means
        self.writers: set[str] = set()

    def row(self, share: Callable[[tuple[str, ...], tuple[str, ...]], tuple[str, ...]]) -> Row:
        """As kept; `share` gives one tuple for equal holders (few sets of agents)."""
        holders, writers = tuple(sorted(self.holders)), tuple(sorted(self.writers))
        return (self.path, share(holders, holders), self.live, self.seq,
                share(writers, writers))


_key_state = builder(KeyState, ("path", "entry", "holders", "live", "seq", "writers"))


def _holders(entry: Entry, agents: list[str]) -> set[str]:
    named = set(entry.holders_hint)
    if ALL in named:
        named.discard(ALL)
        named.update(agents)
    return named


class Replay:
    """A replay in progress: every key seen (live or not), why each removed one is gone,
    the retractions with their places, and the entries placed by breaking a cycle."""

    __slots__ = ("accs", "agents", "count", "cycles", "removed", "retractions", "source")

    def __init__(self, agents: list[str]) -> None:
        self.agents = agents
        self.accs: dict[str, KeyState] = {}
        self.removed: dict[str, str] = {}
        self.retractions: list[KeyState] = []
        self.cycles: list[str] = []
        self.count = 0  # entries replayed: the next one's place
        # a replay gone on with lazily (`resume(lazy=True)`): the kept rows and the entries
        # by path, from which `state` makes a key `accs` lacks
        self.source: tuple[dict[str, Row], dict[str, Entry]] | None = None

    def state(self, key: str) -> KeyState | None:
        """The state of `key` (None: never seen), made from the kept replay when this one
        went on lazily and no new entry touched it."""
        acc = self.accs.get(key)
        if acc is None and self.source is not None:
            rows, by_path = self.source
            row = rows.get(key)
            if row is not None:
                path, holders, live, seq, writers = row
                acc = self.accs[key] = _key_state(path, by_path[path], set(holders), live,
                                                  seq, set(writers))
        return acc

    def kept_row(self, key: str) -> Row | None:
        """The state of `key` in the kept replay this one went on from lazily, as kept."""
        return self.source[0].get(key) if self.source is not None else None

    def kept_entry(self, key: str) -> Entry:
        """The latest entry of `key` in the kept replay this one went on from lazily."""
        assert self.source is not None
        rows, by_path = self.source
        return by_path[rows[key][0]]

    def materialize(self) -> None:
        """Make the state of every key the kept replay has (a lazy replay made whole)."""
        if self.source is not None:
            for key in self.source[0]:
                self.state(key)
            self.source = None

    def run(self, ordered: Iterable[tuple[str, Entry]]) -> None:
        """Apply `ordered` (in causal order) after what was replayed so far."""
        accs, removed, agents = self.accs, self.removed, self.agents
        for path, entry in ordered:
            seq = self.count
            self.count += 1
            if (entry.retracts or entry.drops) and not entry.supersedes:  # states no fact
                if entry.retracts:
                    said = KeyState(path, entry, {entry.agent})
                    said.seq = seq
                    self.retractions.append(said)
                _retract(entry, path, accs, removed)
                _drop(entry, path, accs, removed)
                own = accs.get(entry.key)
                if own is None or not own.live:
                    removed.setdefault(entry.key, f"a retraction only ({path})")
                continue
            acc = accs.get(entry.key)
            if acc is None:
                acc = accs[entry.key] = KeyState(path, entry, set())
            acc.path, acc.entry, acc.live, acc.seq = path, entry, True, seq
            acc.holders |= _holders(entry, agents)
            acc.writers.add(entry.agent)
            removed.pop(entry.key, None)
            for old in entry.supersedes:
                gone = accs.get(old)
                if old != entry.key and gone is not None and gone.live:
                    acc.holders |= gone.holders  # the correction reaches every holder
                    gone.live = False
                    removed[old] = f"superseded by {entry.key} ({path})"
            _retract(entry, path, accs, removed)


def _retract(entry: Entry, path: str, accs: dict[str, KeyState],
             removed: dict[str, str]) -> None:
    for old in entry.retracts:
        gone = accs.get(old)
        if old != entry.key and gone is not None and gone.live:
            gone.live = False
            removed[old] = f"retracted by {path}"


def _drop(entry: Entry, path: str, accs: dict[str, KeyState], removed: dict[str, str]) -> None:
    """`drops`: the writer stops holding those keys (it deleted the fact's line from its own
    memory); the fact stays live for every other holder, and goes when none is left."""
    for old in entry.drops:
        acc = accs.get(old)
        if old == entry.key or acc is None or not acc.live:
            continue
        acc.holders.discard(entry.agent)
        if not acc.holders:
            acc.live = False
            removed[old] = f"dropped by its last holder ({path})"


def replay_all(entries: Iterable[tuple[str, Entry]], agents: list[str],
               history: dict[str, tuple[str, ...]] | None = None) -> Replay:
    """Replay `entries` from nothing (`history`: `order.history_edges`)."""
    replay = Replay(agents)
    replay.run(causal_order(entries, history, replay.cycles))
    return replay


# --- a replay kept between folds ------------------------------------------------------

digest = xor_of  # the digest of a set of entry files from their own


def files_digest(items: Mapping[str, tuple[Any, ...]], total: int | None = None,
                 ) -> Callable[[Iterable[str]], int]:
    """`digest` of the entry files at some paths, from the reader's cache items by path
    (`reader.Journal.items`: an item's digest is its fourth field). With `total`, the
    digest of all of `items` (`reader.Journal.digest`), a set of paths that is most of
    them is weighed by the paths it lacks: at 100k lessons the replay kept is checked
    against ~100k files at every distill (`resume`), ~130 ms one by one."""
    def files(paths: Iterable[str]) -> int:
        if total is not None and isinstance(paths, (set, frozenset)) and (
                2 * len(paths) > len(items)):
            rest = items.keys() - paths
            if len(items) - len(rest) == len(paths):  # each of `paths` is in `items`
                return total ^ digest(map(_DIGEST, map(items.__getitem__, rest)))
        return digest(map(_DIGEST, map(items.__getitem__, paths)))

    return files


_DIGEST = operator.itemgetter(3)


class Kept:
    """A replay as plain data, with what `resume` checks: all of it (`whole`), or what a
    replay that went on from a kept one changed (the cache puts it over that one).

    `rows`: each key's state (`Row`), or the keys changed; `paths`: the entries
    replayed, or those added; `said`: the keys of entries that state no fact (a
    retraction), which `rows` lacks; `named`: keys an entry supersedes or retracts,
    and `self_named` those named by an entry of their own key; `dropped`: keys an
    entry drops; `knew`: paths an entry knew that it did not replay; `last`: the
    greatest (`created`, path); `files`: the `digest` of the entry files; the rest as
    `Replay` has them.

    Not kept with it, but given with it to the fold that goes on from it: `ruled`, the
    decisions of the rules after the replay (`rules.Ruled`), `facts`, the facts of
    that fold before their citations were judged (as rows, `fold.fact_row`), and `near`,
    the signatures of those facts' titles (`near.Signatures`); None when not known.
    And `committed`: the entry paths the commits since it was kept added
    (`lineage.added_since`).
    """

    FIELDS = ("count", "cycles", "dropped", "files", "knew", "last", "named", "paths",
              "removed", "retractions", "rows", "said", "self_named", "whole")
    __slots__ = (*FIELDS, "committed", "facts", "near", "ruled")

    def __init__(self) -> None:
        self.whole = True
        self.rows: dict[str, Row] = {}
        self.removed: dict[str, str] = {}
        self.retractions: list[tuple[str, int]] = []
        self.cycles: list[str] = []
        self.count = 0
        self.paths: set[str] = set()
        self.last: tuple[dt.datetime, str] | None = None
        self.said: set[str] = set()
        self.named: set[str] = set()
        self.self_named: set[str] = set()
        self.dropped: set[str] = set()
        self.knew: set[str] = set()
        self.files = 0
        self.ruled: Ruled | None = None
        self.facts: Mapping[str, tuple[Any, ...]] | None = None
        # the signatures that fold found its near-duplicates by (`near.Signatures`)
        self.near: Signatures | None = None
        # the entries committed since it was kept (`lineage.added_since`)
        self.committed: frozenset[str] = frozenset()

    def fields(self) -> dict[str, Any]:
        """Its fields by name (`cache.ReplayCache` keeps them)."""
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def of(cls, fields: dict[str, Any]) -> Kept:
        """The kept replay whose `fields` these are."""
        kept = cls()
        for name in cls.FIELDS:
            setattr(kept, name, fields[name])
        return kept

    def unsafe(self, key: str) -> bool:
        """Whether a new entry of `key` may be the earliest of it that an entry here named."""
        return key in self.named and (key in self.self_named
                                      or (key not in self.rows and key not in self.said))


# A same-title group: (the writer of the key's latest entry, its normalised title)
Group = tuple[str, str]


class Ruled:
    """What the rules after a fold's replay decided (`journal/rules.py`), for the next
    fold to go on from.

    `ruled`: why the date or a fact's refs removed a key live in the replay;
    `flagged`: why a fact was flagged (refs gone, `stale_refs = flag`);
    `refs`: the refs of each live key judged by the tree (refs not cited, no date
    rule); `groups`: the keys that passed the rules by same-title group (episodic
    ones and empty titles have none); `merged`: loser -> winner of a group;
    `index`: what the probable corrections were judged by (`similar.Index`, as its
    fields), None when they were not judged; `expires`: each judged key whose judgement
    by date changes on a later date (`rules.next_change`), with that date; `at`: the
    commit the refs were judged at ("" when unknown).
    """

    __slots__ = ("at", "date", "drop", "expires", "flagged", "groups", "index", "merged",
                 "refs", "ruled", "ttl")

    def __init__(self, date: dt.date, ttl: int, drop: bool) -> None:
        self.date, self.ttl, self.drop = date, ttl, drop
        self.at = ""
        self.expires: dict[str, dt.date] = {}
        self.ruled: dict[str, str] = {}
        self.flagged: dict[str, str] = {}
        self.refs: dict[str, tuple[str, ...]] = {}
        self.groups: dict[Group, list[str]] = {}
        self.merged: dict[str, str] = {}
        self.index: dict[str, object] | None = None

    def fields(self) -> dict[str, object]:
        """Its fields by name (the cache keeps them)."""
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def of(cls, fields: dict[str, object]) -> Ruled:
        """The decisions whose `fields` these are."""
        ruled = cls.__new__(cls)
        for name in cls.__slots__:
            setattr(ruled, name, fields[name])
        return ruled

    def fits(self, date: dt.date, ttl: int, drop: bool) -> bool:
        """Whether a fold on `date` by these rules may go on from these decisions: the
        same rules, on their date or a later one (`rules.go_on` judges again the keys
        whose judgement changed since: `expires`; an earlier date may bring back what
        expired, and judges every key)."""
        return (self.ttl, self.drop) == (ttl, drop) and self.date <= date

    def removals(self) -> dict[str, str]:
        """Why each key the rules removed is gone: its date or refs, or its merge."""
        out = dict(self.ruled)
        out.update((loser, f"merged into {winner} (same title)")
                   for loser, winner in self.merged.items())
        return out


def keep(replay: Replay, entries: Sequence[tuple[str, Entry]], files: int,
         since: Kept | None = None) -> Kept:
    """`replay` as kept, after it applied `entries`: all of it when `since` is None, else
    what changed since the kept replay `since` it went on from (the keys `entries`
    touched, and their paths); `files` is the digest of every entry file it replayed."""
    kept = Kept()
    tuples: dict[tuple[str, ...], tuple[str, ...]] = {}
    share = tuples.setdefault
    if since is None:
        kept.rows = {key: acc.row(share) for key, acc in replay.accs.items()}
    else:
        kept.whole = False
        kept.rows = {key: replay.accs[key].row(share) for key in touched(entries)
                     if key in replay.accs}
        kept.last = since.last
        kept.said, kept.named = set(since.said), set(since.named)
        kept.self_named, kept.knew = set(since.self_named), set(since.knew)
        kept.dropped = set(since.dropped)
    kept.removed = dict(replay.removed)
    kept.retractions = [(said.path, said.seq) for said in replay.retractions]
    kept.cycles = list(replay.cycles)
    kept.count = replay.count
    kept.files = files
    for path, entry in entries:
        kept.paths.add(path)
        here = (entry.created, path)
        if kept.last is None or here > kept.last:
            kept.last = here
        if (entry.retracts or entry.drops) and not entry.supersedes:
            kept.said.add(entry.key)
        for key in (*entry.supersedes, *entry.retracts):
            kept.named.add(key)
            if key == entry.key:
                kept.self_named.add(key)
        kept.dropped.update(entry.drops)
        kept.knew.update(entry.knew)
    kept.knew -= kept.paths
    if since is not None:
        kept.knew -= since.paths
    return kept


def touched(new: Iterable[tuple[str, Entry]]) -> set[str]:
    """The keys entries state or name: the only ones their replay changes."""
    return {k for _, entry in new
            for k in (entry.key, *entry.supersedes, *entry.retracts, *entry.drops)}


def resume(kept: Kept, entries: Sequence[tuple[str, Entry]], agents: list[str],
           files: Callable[[Iterable[str]], int], lazy: bool = False,
           history: Callable[[], Lineage | None] | None = None,
           ) -> tuple[Replay, list[tuple[str, Entry]]] | None:
    """The replay of `entries` continued from `kept` (see the module docstring), with the
    new entries it applied; None when that would not be the replay of all of them.
    `files(paths)` is the `digest` of those entry files as they are now. `lazy`: only
    the keys the new entries touch get their state now, any other when first asked
    (`Replay.state`): 100k keys at 100k lessons, for a fold that reads few of them.
    `history()`: git history (`gitops.lineage.History`), asked only when a new entry
    was committed since and another entry speaks about one of its keys."""
    if kept.cycles:
        return None
    paths = kept.paths
    new = [(path, entry) for path, entry in entries if path not in paths]
    if len(entries) - len(new) != len(paths) or len(new) > MAX_NEW:
        return None  # an entry of S is gone (or invalid now), or too many are new
    last = kept.last
    for path, entry in new:
        if last is not None and (entry.created, path) <= last:
            return None
        if path in kept.knew or kept.unsafe(entry.key):
            return None
    committed = kept.committed
    if not committed.isdisjoint(paths):
        return None  # an entry of S was committed since: history orders it otherwise
    edges = None
    if not committed.isdisjoint(path for path, _ in new):
        edges = _edges_of_new(kept, entries, new, history)
        if edges is None:
            return None
    if files(paths) != kept.files:
        return None  # an entry of S is not what it was
    replay = Replay(agents)
    by_path = dict(entries)
    make = _key_state  # 100k keys at 100k lessons: half the cost of `KeyState(...)`
    if lazy:
        replay.source = (kept.rows, by_path)
        for key in sorted(touched(new)):
            replay.state(key)
    else:
        replay.accs = {key: make(path, by_path[path], set(holders), live, seq, set(writers))
                       for key, (path, holders, live, seq, writers) in kept.rows.items()}
    replay.removed = dict(kept.removed)
    for path, seq in kept.retractions:
        said = KeyState(path, by_path[path], {by_path[path].agent})
        said.seq = seq
        replay.retractions.append(said)
    replay.count = kept.count
    settled = kept.rows.keys() | kept.said
    replay.run(causal_order(new, edges, replay.cycles, settled=settled))
    return replay, new


def _edges_of_new(kept: Kept, entries: Sequence[tuple[str, Entry]],
                  new: list[tuple[str, Entry]], history: Callable[[], Lineage | None] | None,
                  ) -> dict[str, tuple[str, ...]] | None:
    """The history edges (`order.history_edges`) among the `new` entries, some committed
    since `kept` (the replay of the others) was kept; None when history orders an entry
    of that replay otherwise now than it did then. An entry's edges come from the
    entries that speak about a key it speaks about: those of the keys the new ones touch
    are read with and without the new ones, and each old entry among them must have the
    same edges both ways (a new entry's commit may make a key's group long enough to be
    ordered along its chain only, and an old entry not committed yet comes after every
    committed one)."""
    group = _group(kept, entries, new)
    if not related_entries(group):
        return {}  # no other entry speaks about their keys: no edge to read
    known = history() if history is not None else None
    if known is None:
        return {}  # a fold of everything reads no history either
    fresh = {path for path, _ in new}
    now = history_edges(group, known)
    then = history_edges([item for item in group if item[0] not in fresh], known)
    out: dict[str, tuple[str, ...]] = {}
    for path, _ in group:
        if path not in fresh:
            if now.get(path) != then.get(path):
                return None
        elif mine := tuple(p for p in now.get(path, ()) if p in fresh):
            out[path] = mine
    return out


def _group(kept: Kept, entries: Sequence[tuple[str, Entry]], new: list[tuple[str, Entry]],
           ) -> list[tuple[str, Entry]]:
    """The `new` entries and the kept ones that speak about a key a new one speaks about.
    Only keys `kept` knows an entry of are looked for, and an entry from the entry cache
    only when its pickled fields hold one of them (`cache.row_of`: a pickled string is
    its UTF-8 bytes): read whole, 10k entries took ~50 ms."""
    keys = touched(new)
    known = {key for key in keys if key in kept.rows or key in kept.said or key in kept.named
             or key in kept.dropped}  # not a union of 100k keys at 100k lessons
    group = list(new)
    if not known:
        return group
    fresh = {path for path, _ in new}
    needles = re.compile(b"|".join(re.escape(key.encode()) for key in sorted(known)))
    for path, entry in entries:
        if path in fresh:
            continue
        row = row_of(entry)
        if row is not None and needles.search(row) is None:
            continue
        if entry.key in known or ((entry.supersedes or entry.retracts or entry.drops)
                                  and not known.isdisjoint(concerns(entry))):
            group.append((path, entry))
    return group

