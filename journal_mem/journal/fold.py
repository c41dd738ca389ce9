"""Live facts from the journal (docs/DESIGN.md, "Distilling"): pure, no disk, no git.

The journal is replayed in causal order (`journal/order.py`: an entry after
every entry it was written knowing; `created` and path only between entries
that know nothing of each other). A key is team-wide: its latest entry gives
the fact's text and fields, and the agents that hold it are the union of
every entry's writer and `applies_to` (`all` is every agent). A `supersedes`
hands the replaced fact's holders to the new fact and removes the old key
everywhere; a `retracts` removes it with no replacement; a `drops` removes
only its writer from the key's holders; a later entry that asserts a removed
key again brings it back.
Then the rules of the distill date drop expired, stale-ref'd and old
episodic facts, and one writer's facts whose titles are equal once normalised
are merged into the latest (`journal/rules.py`; a fold that goes on from a kept
replay goes on from the last fold's decisions and facts too, judging again only
what the new entries changed). Probable corrections are judged the same way
(`journal/corrections.py`). Near-duplicate titles are only reported
(`journal/near.py`: found in a forked child past `NEAR_FORK_AT` facts, while the
fold and what follows it go on: `Fold.start`, `Fold.settle`; or, going on from the
last fold, from the signatures it kept and those of the facts made again).
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import itertools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence

from journal_mem.journal.anchor import CodeChange
from journal_mem.journal.corrections import go_on as go_on_judging
from journal_mem.journal.entry import IMPORTANCE, Entry
from journal_mem.journal.forked import in_child
from journal_mem.journal.near import Signatures
from journal_mem.journal.order import history_edges, related_entries
from journal_mem.journal.replay import (
    Kept,
    KeyState,
    Replay,
    Row,
    Ruled,
    keep,
    replay_all,
    resume,
    touched,
)
from journal_mem.journal.rules import RefsAt, apply, go_on
from journal_mem.journal.similar import Index, conflicts
from journal_mem.schema import Config
from journal_mem.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from journal_mem.journal.near import Packed
    from journal_mem.journal.order import Lineage
    from journal_mem.journal.similar import Dated

# facts from which the near-duplicates are found in a forked child (`forked.in_child`)
# while the fold goes on: ~40 ms at 10k lessons, a fork ~2 ms
NEAR_FORK_AT = 5000


class Fact(NamedTuple):
    """One live fact, as every agent that holds it sees it.

    A named tuple, not a frozen dataclass: a fold makes every fact the last one kept
    again from its row (56k at 100k lessons), and a tuple is made from a row in C
    (`fact_of`), where the dataclass's slots were set one at a time."""

    key: str
    title: str
    body: str
    topic: str
    type: str
    confidence: float
    importance: str
    created: dt.datetime
    holders: tuple[str, ...]
    path: str  # memory-root-relative path of the newest entry with this key
    tags: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    source: str | None = None
    writers: tuple[str, ...] = ()  # agents that wrote an entry stating it
    cited: tuple[str, ...] = ()  # what its anchored refs cited when filed (citations.py)


FactRow = tuple[object, ...]
FACT_FIELDS: tuple[str, ...] = Fact._fields
# A fact as its field values, in field order: a plain tuple (the fold cache keeps these).
fact_row: Callable[[Fact], FactRow] = tuple
# The fact whose field values are a row, made in C (`tuple.__new__`, no Python `__new__`).
_from_row: Callable[[FactRow], Fact] = functools.partial(tuple.__new__, Fact)


def fact_of(row: FactRow) -> Fact:
    """The fact whose field values are `row` (`fact_row`'s inverse)."""
    return _from_row(row)


class Fold:
    """The result: live facts by key, and why every other key is gone.

    A plain class, written as the dataclass it was would make it (`dataclasses` and the
    `inspect` it imports cost `write`, which folds the lesson it files, ~11 ms): it
    equals another fold of the same result (`_SAME`) and shows that result (`_SHOWN`)."""

    __slots__ = ("code", "conflicts", "cycles", "facts", "flagged", "judged", "keep_near",
                 "kept", "merged", "near_duplicates", "near_from", "pending", "redone",
                 "rejudged", "removed", "resumed", "retractions", "rows_from", "ruled",
                 "signatures", "staled", "unnear", "waiting", "went_on")
    __hash__ = None  # type: ignore[assignment]  # a mutable value

    def __init__(self, facts: dict[str, Fact] | None = None) -> None:
        self.facts: dict[str, Fact] = {} if facts is None else facts
        self.removed: dict[str, str] = {}
        self.near_duplicates: list[tuple[str, ...]] = []
        self.flagged: dict[str, str] = {}
        self.conflicts: list[tuple[str, str]] = []  # (old key, newer key)
        # a newer key in `conflicts` that is no fact: a retraction, whose words say the
        # fact it names is gone, and probably so is another wording of that fact
        self.retractions: dict[str, Fact] = {}
        # key -> its cited code that changed since it was cited (`journal/citations.follow`)
        self.code: dict[str, list[CodeChange]] = {}
        self.judged = ""  # the commit `code` was judged at ("" when no fact cites code)
        self.merged: dict[str, str] = {}  # same title: loser -> winner
        # entries the replay placed by breaking a cycle of entries that each came after
        # the other (`order.causal_order`): a later entry may land among those
        self.cycles: list[str] = []
        # Not compared, nor shown (but the three counts):
        # the replay kept for the next fold (`fold(files=...)`): all of it, or what
        # changed since the kept one it went on from (`replay.keep`)
        self.kept: Kept | None = None
        # what the rules after the replay decided, for the next fold to go on from
        self.ruled: Ruled | None = None
        # facts the judgement of their citations removed (`stale`), as they were before it
        self.staled: dict[str, Fact] = {}
        self.resumed = -1  # new entries it went on with; -1: none
        # keys the rules judged again, going on from the last fold's (`rules.go_on`); -1:
        # every live key was judged
        self.rejudged = -1
        # whether the probable corrections went on from the last fold's
        # (`corrections.go_on`)
        self.went_on = False
        # Going on from the last fold (`rules.go_on`): the keys whose fact was made again;
        # every other fact was made from its row in `rows_from` (the last fold's facts, as
        # the fold cache gave them), so only these can differ from it. None otherwise.
        self.redone: frozenset[str] | None = None
        self.rows_from: Mapping[str, FactRow] | None = None
        # the near-duplicates being found (`start`), or still to find (`waiting`), and the
        # keys to leave out of them
        self.pending: Callable[[], tuple[list[tuple[str, ...]], Packed | None]] | None = None
        self.waiting = False
        self.unnear: set[str] = set()
        # the signatures the last fold kept, and the title and type each key made again
        # (`redone`) had then: the near-duplicates go on from them (`start`)
        self.near_from: tuple[Signatures, dict[str, tuple[str, str]]] | None = None
        self.keep_near = False  # keep `signatures` for the next fold (`fold(keep_near=)`)
        self.signatures: Signatures | None = None  # what they were found by

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return _SAME(self) == _SAME(other)
        return NotImplemented

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _SHOWN)
        return f"{self.__class__.__qualname__}({shown})"

    def start(self) -> None:
        """Start finding the near-duplicate titles of the facts: in a forked child past
        `NEAR_FORK_AT` facts, while the fold and what follows it go on (`settle`). The
        fold of a distill leaves this to its caller (`fold(settle=False)`), to fork once
        the git processes the fold read refs through are ended: a child would hold their
        pipes open, and they would not end until it did."""
        self.waiting = False
        if self.near_from is not None and self.redone is not None:
            sigs, was = self.near_from
            self.near_from = None
            try:  # a few dozen facts' signatures, not every fact's
                sigs.go_on(was, self.facts, self.redone)
            except (KeyError, ValueError, TypeError, IndexError):  # a kept index is disposable
                pass
            else:
                groups = sigs.groups()
                self.signatures = sigs
                self.pending = lambda: (groups, None)
                return
        facts = list(self.facts.values())  # as they are now: `stale` may drop some after
        keep = self.keep_near
        self.pending = (in_child(lambda: _near(facts, keep)) if len(facts) >= NEAR_FORK_AT
                        else lambda: _near(facts, keep))

    def settle(self) -> None:
        """Wait for the near-duplicates being found (`start`)."""
        if self.waiting:
            self.start()
        if self.pending is not None:
            pending, self.pending = self.pending, None
            groups, packed = pending()
            self.near_duplicates = [g for g in groups if not self.unnear.intersection(g)]
            if packed is not None:
                self.signatures = Signatures.unpacked(packed)

    def lesson(self, key: str) -> Fact | None:
        """The live fact or retraction a key in `conflicts` names."""
        return self.facts.get(key) or self.retractions.get(key)

    def held_by(self, agent: str) -> list[Fact]:
        """The live facts `agent` holds, in rank order."""
        return ranked(f for f in self.facts.values() if agent in f.holders)



# What makes two folds equal, and what a fold shows of itself
_RESULT = ("facts", "removed", "near_duplicates", "flagged", "conflicts", "retractions",
           "code", "judged", "merged", "cycles")
_SAME = operator.attrgetter(*_RESULT)
_SHOWN = (*_RESULT, "resumed", "rejudged", "went_on")


def _near(facts: list[Fact], keep: bool) -> tuple[list[tuple[str, ...]], Packed | None]:
    """The near-duplicate groups of `facts`, and with `keep` the signatures they were
    found by, packed (sent back from a forked child as a few strings)."""
    sigs = Signatures.of(facts)
    return sigs.groups(), sigs.packed() if keep else None


def rank(fact: Fact) -> tuple[bool, int, float, float, str]:
    """Principle first, then importance, confidence, date (newest first), key.

    docs/DESIGN.md, "Distilled files".
    """
    return (
        fact.type != "principle",
        IMPORTANCE.index(fact.importance),
        -fact.confidence,
        -fact.created.timestamp(),
        fact.key,
    )


def ranked(facts: Iterable[Fact]) -> list[Fact]:
    """`sorted(facts, key=rank)`, sorted by one field at a time from the last: each sort is
    stable, so facts equal in a field keep the order the fields after it gave them, and
    each compares one kind of value in C. 55k facts at 100k lessons took 150-450 ms by
    `rank`'s tuples (five-field comparisons, and `timestamp()` for each)."""
    out = sorted(facts, key=_KEY)
    try:
        out.sort(key=_CREATED, reverse=True)  # newest first; ties keep the key order
    except TypeError:  # a date without a zone beside one with: as `timestamp()` says,
        out.sort(key=_KEY)  # from the key order again (a failed sort leaves it half done)
        out.sort(key=_timestamp, reverse=True)
    out.sort(key=_CONFIDENCE, reverse=True)
    # the last two by values made in C (`map`), not by a Python key function per fact
    out = _by(out, list(map(_LEVEL.__getitem__, map(_IMPORTANCE, out))))
    return _by(out, list(map(_PRINCIPLE.__ne__, map(_TYPE, out))))


def ranked_since(facts: Mapping[str, Fact], order: list[str], changed: set[str],
                 ) -> list[Fact] | None:
    """`ranked(facts.values())`, from the keys of an earlier set of facts in rank order
    (`order`) and the keys of `facts` whose fact is not that set's (`changed`: changed or
    new): every other fact keeps its place among them, and each changed one is put in by
    bisection (`rank`: the order `ranked` makes, as every `created` has its offset).
    None when `order` and `changed` do not account for each of `facts` once. At 100k
    lessons ranking 56k facts took ~110-150 ms of each distill; 20 new lessons change a
    few dozen."""
    kept = list(filter(facts.__contains__, itertools.filterfalse(changed.__contains__, order)))
    new = [facts[key] for key in changed if key in facts]
    if len(kept) + len(new) != len(facts) or len(set(kept)) != len(kept):
        return None
    out = list(map(facts.__getitem__, kept))
    try:
        for fact in new:
            out.insert(bisect.bisect_left(out, rank(fact), key=rank), fact)
    except TypeError:  # a date without an offset: `ranked` orders by what it can compare
        return None
    return out


_KEY = operator.attrgetter("key")
_CREATED = operator.attrgetter("created")
_CONFIDENCE = operator.attrgetter("confidence")
_IMPORTANCE = operator.attrgetter("importance")
_TYPE = operator.attrgetter("type")
_LEVEL = {level: rank for rank, level in enumerate(IMPORTANCE)}  # critical first
_PRINCIPLE = "principle"  # principles first: `type != "principle"` is False for them


def _by(facts: list[Fact], keys: Sequence[int]) -> list[Fact]:
    """`facts` sorted by `keys` (one per fact, in its order), stably, each compared in C."""
    return list(map(facts.__getitem__, sorted(range(len(facts)), key=keys.__getitem__)))


def _timestamp(fact: Fact) -> float:
    return fact.created.timestamp()


def _to_fact(acc: KeyState) -> Fact:
    e = acc.entry
    return _from_row((e.key, e.title, e.body, e.topic, e.type, e.confidence, e.importance,
                       e.created, tuple(sorted(acc.holders)), acc.path, e.tags, e.refs,
                       e.source, tuple(sorted(acc.writers)), e.cited))


def fold(
    entries: list[tuple[str, Entry]],
    *,
    agents: list[str],
    date: dt.date,
    ref_exists: Callable[[str], bool],
    config: Config,
    report_near: bool = True,
    settle: bool = True,
    lineage: Callable[[], Lineage] | None = None,
    files: Callable[[Iterable[str]], int] | None = None,
    kept: Callable[[], Kept | None] | None = None,
    at: str = "",
    same_since: Callable[[str, set[str]], bool] | None = None,
    keep_near: bool = False,
) -> Fold:
    """The live facts of `entries` (memory-root-relative path, entry) on `date`.

    `agents` is who `applies_to: all` reaches; `ref_exists(path)` says whether
    a repository path exists in the committed tree. `report_near=False` skips
    the near-duplicate and conflict reports (a fold made only to compare with).
    `lineage` reads git history (`gitops.lineage.read`), only when two entries speak
    about one key: an entry committed after another's commit knew it.
    With `files` (the digest of entry files by path, `replay.digest`), the result
    keeps its replay for the next fold (`Fold.kept`), and goes on from the replay
    `kept()` gives, kept by an earlier fold, when that gives the same
    (`replay.resume`). `at`: the commit `ref_exists` answers for, and `same_since(old,
    paths)` whether each of `paths` resolves there as at commit `old` (`rules.RefsAt`).
    `keep_near`: keep what the near-duplicates were found by (`Fold.signatures`).
    """
    result = Fold()
    result.keep_near = keep_near
    read: list[Lineage] = []
    commit = RefsAt(at, same_since) if at and same_since is not None else None

    def git_history() -> Lineage | None:  # read once, and only when asked
        if lineage is None:
            return None
        if not read:
            read.append(lineage())
        return read[0]

    ttl = config.distill.episodic_ttl_days
    drop_stale = config.distill.stale_refs == "drop"
    replay, since, new = _replayed(result, entries, sorted(set(agents)), files, kept,
                                   git_history, (date, ttl, drop_stale))
    retractions = replay.retractions
    result.removed, result.cycles = replay.removed, replay.cycles
    redo = None
    was: dict[str, str] = {}  # the title of each key the rules judged again, if a fact
    if since is not None and since.ruled is not None:  # gone on with lazily: so the rules
        ruled = since.ruled
        redo = go_on(ruled, replay, new, date, ref_exists, commit)
        if redo is None:
            replay.materialize()
    if redo is None or since is None or since.facts is None:
        redo = None
        live, ruled = apply(replay.accs, date, ttl, drop_stale, ref_exists, commit)
        result.facts = {key: _to_fact(live[key]) for key in sorted(live)}
        order = {key: acc.seq for key, acc in live.items()}
        del live
    else:
        order = _facts_since(result, since.facts, redo, since.rows)
        result.rejudged = len(redo)
        result.redone, result.rows_from = frozenset(redo), since.facts
        was = {key: str(since.facts[key][_TITLE]) for key in redo if key in since.facts}
        if since.near is not None:
            result.near_from = (since.near, {key: (title, str(since.facts[key][_TYPE_AT]))
                                             for key, title in was.items()})
    del replay, since  # every key's replay state: ~40 MB at 100k lessons
    result.removed.update(ruled.removals())
    result.flagged = dict(sorted(ruled.flagged.items()))
    result.merged = dict(ruled.merged)
    result.ruled = ruled
    if not report_near:
        ruled.index = None  # no report made: nothing to go on from
    else:
        said = {acc.entry.key: _to_fact(acc) for acc in retractions
                if acc.entry.key not in result.facts}
        order.update((acc.entry.key, acc.seq) for acc in retractions if acc.entry.key in said)
        if settle:  # the near-duplicates in a child while the corrections are judged
            result.start()
        try:
            result.conflicts = _conflicts(result, ruled, redo, was, date, order, said,
                                          git_history)
        finally:
            if settle:
                result.settle()
            else:
                result.waiting = True  # started by the caller: `Fold.start`
        used = {new for _, new in result.conflicts}
        result.retractions = {key: fact for key, fact in said.items() if key in used}
    return result


_TITLE = FACT_FIELDS.index("title")
_TYPE_AT = FACT_FIELDS.index("type")


def _conflicts(result: Fold, ruled: Ruled, redo: dict[str, KeyState | None] | None,
               was: dict[str, str], date: dt.date, order: dict[str, int],
               said: dict[str, Fact], history: Callable[[], Lineage | None],
               ) -> list[tuple[str, str]]:
    """The probable corrections among `result`'s facts (`similar.conflicts`): going on from
    the index the last fold judged them by when the rules went on from its (`redo`: the
    keys whose fact may differ from its; `was`: the title each had then), else judging
    every fact; the index is kept in `ruled` either way."""
    def newer(new: Dated, old: Dated) -> bool | None:
        return _committed_after(history, new.path, old.path)

    def place(fact: Dated) -> float:
        return _depth(history, fact.path, order.get(fact.key, 0))

    kept = ruled.index
    ruled.index = None
    if redo is not None and kept is not None:
        try:
            index = Index.of(kept)
            pairs = go_on_judging(index, result.facts, was, redo, date, order, newer,
                                  said.values(), place)
        except (KeyError, ValueError, TypeError):  # a kept index is disposable
            pairs = None
        if pairs is not None:
            ruled.index = index.fields()
            result.went_on = True
            return pairs

    def keep(index: Index) -> None:
        ruled.index = index.fields()

    return conflicts(result.facts.values(), date, order, newer=newer,
                     correctors=said.values(), place=place, keep=keep)


def _replayed(result: Fold, entries: list[tuple[str, Entry]], agents: list[str],
              files: Callable[[Iterable[str]], int] | None,
              kept: Callable[[], Kept | None] | None,
              history: Callable[[], Lineage | None],
              rules: tuple[dt.date, int, bool],
              ) -> tuple[Replay, Kept | None, set[str]]:
    """The replay of `entries`: gone on with from the replay `kept()` gives when that
    gives the same (`replay.resume`), else from nothing; kept in `result` when `files`
    is given. When it went on from a kept replay given with the decisions of the rules
    (date, TTL, drop) that this fold applies and the facts they made, it went on lazily:
    then that kept replay too, and the keys the new entries touched."""
    since = kept() if kept is not None and files is not None else None
    lazy = (since is not None and since.ruled is not None and since.facts is not None
            and since.ruled.fits(*rules))
    went_on = (resume(since, entries, agents, files, lazy=lazy, history=history)
               if since and files else None)
    if went_on is None:
        known = history() if related_entries(entries) else None
        replay = replay_all(entries, agents,
                            history_edges(entries, known) if known is not None else None)
        if files is not None:
            result.kept = keep(replay, entries, files(p for p, _ in entries))
        return replay, None, set()
    replay, new = went_on
    result.resumed = len(new)
    assert since is not None and files is not None
    result.kept = keep(replay, new, since.files ^ files(p for p, _ in new), since=since)
    return replay, since if lazy else None, touched(new)


def _facts_since(result: Fold, facts: Mapping[str, FactRow],
                 redo: dict[str, KeyState | None], rows: dict[str, Row]) -> dict[str, int]:
    """Set the facts of `result`: the last fold's `facts` (as rows), but for the keys in
    `redo` (`rules.go_on`: the state each has as a fact, or None); the place of each in
    the replay (its kept `rows` have it, unless it is in `redo`)."""
    # in the rows' order, sorted but for the keys the last fold added: sorting the keys
    # alone is merging a few runs of strings (a set of 56k keys at 100k lessons took ~30
    # ms to sort), and each dict is then made in that order by lookups in C; each kept
    # fact is made from its row in C (`_from_row`), not one Python call per fact. Sorting
    # (key, value) pairs by their first item took a third longer.
    kept = list(itertools.filterfalse(redo.__contains__, facts))  # in C
    new = [(key, acc) for key, acc in redo.items() if acc is not None]
    keys = sorted(itertools.chain(kept, map(_FIRST, new)))
    made = dict(zip(kept, map(_from_row, map(facts.__getitem__, kept)), strict=True))
    made.update((key, _to_fact(acc)) for key, acc in new)
    result.facts = dict(zip(keys, map(made.__getitem__, keys), strict=True))
    places = dict(zip(kept, map(_SEQ, map(rows.__getitem__, kept)), strict=True))
    places.update((key, acc.seq) for key, acc in new)
    return dict(zip(keys, map(places.__getitem__, keys), strict=True))


_FIRST = operator.itemgetter(0)
_SEQ = operator.itemgetter(3)  # a kept replay row's place (`replay.Row`)


def _depth(history: Callable[[], Lineage | None], path: str, seq: int) -> float:
    """Where an entry stands for "the newest of several": its commit's depth among the
    journal commits (an entry not committed yet is deepest), then its place in the
    replay."""
    known = history()
    commit = known.added.get(path) if known is not None else None
    depth = known.generation(commit) if known is not None and commit else 1 << 30
    return depth * 1e6 + seq


def _committed_after(history: Callable[[], Lineage | None], new: str, old: str) -> bool | None:
    """Whether the entry at `new` came after the one at `old` by git history: its commit
    descends from the other's, or it is not committed yet and the other is (the distill
    commits it on top); None when history does not say."""
    known = history()
    if known is None:
        return None
    a, b = known.added.get(new), known.added.get(old)
    if a is None or b is None:
        return None if a is None and b is None else a is None
    if a != b:
        if known.descends(a, b):
            return True
        if known.descends(b, a):
            return False
    return None


def stale(result: Fold, gone: dict[str, list[str]], config: Config) -> None:
    """Apply `distill.stale_refs` to facts whose refs are all gone, as their citations'
    history says (`gone`: key → those refs): drop them, or flag them."""
    for key, refs in sorted(gone.items()):
        why = "refs gone: " + ", ".join(refs)
        if config.distill.stale_refs == "flag":
            result.flagged[key] = why
            continue
        fact = result.facts.pop(key, None)
        if fact is not None:
            result.staled[key] = fact
        result.removed[key] = why
        result.conflicts = [c for c in result.conflicts if key not in c]
        result.near_duplicates = [g for g in result.near_duplicates if key not in g]
        result.unnear.add(key)  # and from those still being found


def today() -> dt.date:
    """The distill date: today, in UTC."""
    return dt.datetime.now(dt.UTC).date()
