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
what the new entries changed). Near-duplicate titles are only reported (found in a
forked child past `NEAR_FORK_AT` facts, while the corrections are judged here).
"""

from __future__ import annotations

import datetime as dt
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from journal_mem.journal.anchor import CodeChange
from journal_mem.journal.cache import builder
from journal_mem.journal.entry import IMPORTANCE, Entry
from journal_mem.journal.forked import in_child
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
from journal_mem.journal.rules import apply, go_on
from journal_mem.journal.similar import conflicts
from journal_mem.schema import Config

if TYPE_CHECKING:
    from journal_mem.journal.order import Lineage

_TOKEN = re.compile(r"\w+")
# facts from which the near-duplicates are found in a forked child (`forked.in_child`)
# while the corrections are judged: ~40 ms of each at 10k lessons, a fork ~2 ms
NEAR_FORK_AT = 5000


@dataclass(frozen=True, slots=True)
class Fact:
    """One live fact, as every agent that holds it sees it."""

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
FACT_FIELDS = tuple(f.name for f in fields(Fact))
# A fact as its field values, in field order, made in C (the fold cache keeps these).
fact_row: Callable[[Fact], FactRow] = operator.attrgetter(*FACT_FIELDS)


# `Fact(*values)` at half the cost of its frozen `__init__` (a fold makes 56k of them at
# 100k lessons)
_make_fact = builder(Fact, FACT_FIELDS)


def fact_of(row: FactRow) -> Fact:
    """The fact whose field values are `row` (`fact_row`'s inverse)."""
    return _make_fact(*row)


@dataclass
class Fold:
    """The result: live facts by key, and why every other key is gone."""

    facts: dict[str, Fact] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)
    near_duplicates: list[tuple[str, ...]] = field(default_factory=list)
    flagged: dict[str, str] = field(default_factory=dict)
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (old key, newer key)
    # a newer key in `conflicts` that is no fact: a retraction, whose words say the fact
    # it names is gone, and probably so is another wording of that fact
    retractions: dict[str, Fact] = field(default_factory=dict)
    # key -> its cited code that changed since it was cited (`journal/citations.follow`)
    code: dict[str, list[CodeChange]] = field(default_factory=dict)
    judged: str = ""  # the commit `code` was judged at ("" when no fact cites code)
    merged: dict[str, str] = field(default_factory=dict)  # same title: loser -> winner
    # entries the replay placed by breaking a cycle of entries that each came after the
    # other (`order.causal_order`): a later entry may land among those
    cycles: list[str] = field(default_factory=list)
    # the replay kept for the next fold (`fold(files=...)`): all of it, or what changed
    # since the kept one it went on from (`replay.keep`)
    kept: Kept | None = field(default=None, compare=False, repr=False)
    # what the rules after the replay decided, for the next fold to go on from
    ruled: Ruled | None = field(default=None, compare=False, repr=False)
    # facts the judgement of their citations removed (`stale`), as they were before it
    staled: dict[str, Fact] = field(default_factory=dict, compare=False, repr=False)
    resumed: int = field(default=-1, compare=False)  # new entries it went on with; -1: none
    # keys the rules judged again, going on from the last fold's (`rules.go_on`); -1: every
    # live key was judged
    rejudged: int = field(default=-1, compare=False)

    def lesson(self, key: str) -> Fact | None:
        """The live fact or retraction a key in `conflicts` names."""
        return self.facts.get(key) or self.retractions.get(key)

    def held_by(self, agent: str) -> list[Fact]:
        """The live facts `agent` holds, in rank order."""
        return sorted((f for f in self.facts.values() if agent in f.holders), key=rank)


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


def _to_fact(acc: KeyState) -> Fact:
    e = acc.entry
    return _make_fact(e.key, e.title, e.body, e.topic, e.type, e.confidence, e.importance,
                      e.created, tuple(sorted(acc.holders)), acc.path, e.tags, e.refs,
                      e.source, tuple(sorted(acc.writers)), e.cited)


def near_duplicates(facts: Iterable[Fact]) -> list[tuple[str, ...]]:
    """Groups of keys whose titles differ by one word ("use X" / "never use X").

    A title's word set, and that set minus any one word, are its signatures;
    facts sharing a signature of two or more words are near-duplicates. A set
    is hashed as the XOR of its words' hashes, so "minus one word" is one XOR:
    linear in the number of facts, no pairwise comparison.
    """
    # A signature maps to its first key, and to a list only once a second key shares
    # it: most signatures are unique, and a list each cost ~40 MB at 100k facts.
    by_sig: dict[int, str | list[str]] = {}

    def add(sig: int, key: str) -> None:
        seen = by_sig.setdefault(sig, key)
        if seen is key:
            return
        if isinstance(seen, str):
            by_sig[sig] = [seen, key]
        else:
            seen.append(key)

    for fact in facts:
        if fact.type == "episodic":
            continue  # runs of the same job share their titles by design
        words = set(_TOKEN.findall(fact.title.casefold()))
        if len(words) < 2 or len(words) > 24:
            continue  # one word is no signature; long titles rarely collide anyway
        hashes = [hash(w) for w in words]
        whole = 0
        for h in hashes:
            whole ^= h
        add(whole, fact.key)
        if len(words) >= 3:
            for h in hashes:
                add(whole ^ h, fact.key)
    groups = {tuple(sorted(set(keys))) for keys in by_sig.values() if isinstance(keys, list)}
    return sorted(g for g in groups if len(g) > 1)


def fold(
    entries: list[tuple[str, Entry]],
    *,
    agents: list[str],
    date: dt.date,
    ref_exists: Callable[[str], bool],
    config: Config,
    report_near: bool = True,
    lineage: Callable[[], Lineage] | None = None,
    files: Callable[[Iterable[str]], int] | None = None,
    kept: Callable[[], Kept | None] | None = None,
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
    (`replay.resume`).
    """
    result = Fold()
    read: list[Lineage] = []

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
    if since is not None and since.ruled is not None:  # gone on with lazily: so the rules
        ruled = since.ruled
        redo = go_on(ruled, replay, new, ref_exists)
        if redo is None:
            replay.materialize()
    if redo is None or since is None or since.facts is None:
        live, ruled = apply(replay.accs, date, ttl, drop_stale, ref_exists)
        result.facts = {key: _to_fact(live[key]) for key in sorted(live)}
        order = {key: acc.seq for key, acc in live.items()}
        del live
    else:
        order = _facts_since(result, since.facts, redo, since.rows)
        result.rejudged = len(redo)
    del replay, since, redo  # every key's replay state: ~40 MB at 100k lessons
    result.removed.update(ruled.removals())
    result.flagged = dict(sorted(ruled.flagged.items()))
    result.merged = dict(ruled.merged)
    result.ruled = ruled
    if report_near:
        said = {acc.entry.key: _to_fact(acc) for acc in retractions
                if acc.entry.key not in result.facts}
        order.update((acc.entry.key, acc.seq) for acc in retractions if acc.entry.key in said)
        facts = result.facts.values()
        # two reports over every fact, each on its own: the near-duplicates in a child
        # while the corrections are judged here, once a fork costs less than it saves
        near = (in_child(lambda: near_duplicates(facts)) if len(facts) >= NEAR_FORK_AT
                else lambda: near_duplicates(facts))
        try:
            result.conflicts = conflicts(facts, date, order,
                                         newer=lambda new, old: _committed_after(
                                             git_history, new.path, old.path),
                                         correctors=said.values(),
                                         place=lambda fact: _depth(git_history, fact.path,
                                                                   order.get(fact.key, 0)))
        finally:
            result.near_duplicates = near()
        used = {new for _, new in result.conflicts}
        result.retractions = {key: fact for key, fact in said.items() if key in used}
    return result


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
    went_on = resume(since, entries, agents, files, lazy=lazy) if since and files else None
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
    keys = facts.keys() - redo.keys()
    keys.update(key for key, acc in redo.items() if acc is not None)
    out: dict[str, Fact] = {}
    order: dict[str, int] = {}
    for key in sorted(keys):
        acc = redo.get(key)
        if acc is None:
            out[key] = _make_fact(*facts[key])
            order[key] = rows[key][3]
        else:
            out[key] = _to_fact(acc)
            order[key] = acc.seq
    result.facts = out
    return order


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


def today() -> dt.date:
    """The distill date: today, in UTC."""
    return dt.datetime.now(dt.UTC).date()
