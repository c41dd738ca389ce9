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
are merged into the latest. Near-duplicate titles are only reported (found in a
forked child past `NEAR_FORK_AT` facts, while the corrections are judged here).
"""

from __future__ import annotations

import datetime as dt
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from journal_mem.journal.anchor import CodeChange
from journal_mem.journal.anchor import split as split_ref
from journal_mem.journal.cache import builder
from journal_mem.journal.entry import IMPORTANCE, Entry
from journal_mem.journal.forked import in_child
from journal_mem.journal.order import history_edges, related_entries
from journal_mem.journal.replay import Kept, KeyState, Replay, keep, replay_all, resume
from journal_mem.journal.similar import conflicts, normalise_title
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
    resumed: int = field(default=-1, compare=False)  # new entries it went on with; -1: none

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


def _utc_date(value: dt.date | dt.datetime) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).date()
    return value


def _dated_rule(entry: Entry, date: dt.date, ttl_days: int) -> str | None:
    """Why the distill date drops this fact, or None."""
    if entry.valid_until is not None and _utc_date(entry.valid_until) < date:
        return f"expired {entry.valid_until.isoformat()}"
    if entry.type == "episodic" and (date - _utc_date(entry.created)).days > ttl_days:
        return f"episodic older than {ttl_days} days"
    return None


def _to_fact(acc: KeyState) -> Fact:
    e = acc.entry
    return _make_fact(e.key, e.title, e.body, e.topic, e.type, e.confidence, e.importance,
                      e.created, tuple(sorted(acc.holders)), acc.path, e.tags, e.refs,
                      e.source, tuple(sorted(acc.writers)), e.cited)


def _merge_same_titles(live: dict[str, KeyState], removed: dict[str, str],
                       merged: dict[str, str]) -> None:
    """Different keys, same normalised title, one writer: the latest wins and takes the
    holders (an agent that wrote its lesson twice under two keys).

    Across writers a same title is no proof of the same fact ("never against
    prod" and "directly against prod" fold to one title once punctuation
    goes): one agent must not replace another's fact without naming it, so
    the pair stays and is reported as a probable correction. Episodic records
    are events, not facts: one per run, never merged.
    """
    groups: dict[tuple[str, str], list[KeyState]] = {}
    for acc in live.values():
        if acc.entry.type == "episodic":
            continue  # one record per run, whatever its title
        norm = normalise_title(acc.entry.title)
        if norm:
            groups.setdefault((acc.entry.agent, norm), []).append(acc)
    for group in groups.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda a: a.seq)
        winner = group[-1]
        for loser in group[:-1]:
            winner.holders |= loser.holders
            removed[loser.entry.key] = f"merged into {winner.entry.key} (same title)"
            merged[loser.entry.key] = winner.entry.key
            del live[loser.entry.key]


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

    replay = _replayed(result, entries, sorted(set(agents)), files, kept, git_history)
    accs, retractions = replay.accs, replay.retractions
    result.removed, result.cycles = replay.removed, replay.cycles
    del replay  # every key's replay state (`accs`): freed once the reports are made
    live = {key: acc for key, acc in accs.items() if acc.live}
    ttl = config.distill.episodic_ttl_days
    drop_stale = config.distill.stale_refs == "drop"
    for key, acc in list(live.items()):
        reason = _dated_rule(acc.entry, date, ttl)
        refs = acc.entry.refs
        # refs recorded at filing are judged with their history (`journal.citations`)
        if (reason is None and refs and not acc.entry.cited
                and not any(ref_exists(split_ref(r)[0]) for r in refs)):
            if drop_stale:
                reason = "refs gone: " + ", ".join(refs)
            else:
                result.flagged[key] = "refs gone: " + ", ".join(refs)
        if reason is not None:
            result.removed[key] = reason
            del live[key]
    _merge_same_titles(live, result.removed, result.merged)
    result.facts = {key: _to_fact(live[key]) for key in sorted(live)}
    if report_near:
        said = {acc.entry.key: _to_fact(acc) for acc in retractions
                if acc.entry.key not in live}
        order = {key: acc.seq for key, acc in live.items()}
        order.update((acc.entry.key, acc.seq) for acc in retractions if acc.entry.key in said)
        del accs, live  # every key's replay state: ~40 MB at 100k lessons, not needed now
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
              history: Callable[[], Lineage | None]) -> Replay:
    """The replay of `entries`: gone on with from the replay `kept()` gives when that
    gives the same (`replay.resume`), else from nothing; kept in `result` when `files`
    is given. The kept replay is let go of here: 100k keys' rows at 100k lessons."""
    since = kept() if kept is not None and files is not None else None
    went_on = resume(since, entries, agents, files) if since and files else None
    if went_on is None:
        known = history() if related_entries(entries) else None
        replay = replay_all(entries, agents,
                            history_edges(entries, known) if known is not None else None)
        if files is not None:
            result.kept = keep(replay, entries, files(p for p, _ in entries))
        return replay
    replay, new = went_on
    result.resumed = len(new)
    assert since is not None and files is not None
    result.kept = keep(replay, new, since.files ^ files(p for p, _ in new), since=since)
    return replay


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
        result.facts.pop(key, None)
        result.removed[key] = why
        result.conflicts = [c for c in result.conflicts if key not in c]
        result.near_duplicates = [g for g in result.near_duplicates if key not in g]


def today() -> dt.date:
    """The distill date: today, in UTC."""
    return dt.datetime.now(dt.UTC).date()
