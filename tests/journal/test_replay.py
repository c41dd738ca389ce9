"""A fold that goes on from a kept replay gives what a fold of every entry gives
(`journal/replay.py`): a property over random journals and random split points, and
each reason it must replay everything instead."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from journal_mem.gitops.lineage import History
from journal_mem.journal import order, similar
from journal_mem.journal.cache import (
    FoldCache,
    NearStore,
    ReplayCache,
    RulesStore,
    dump,
    load,
    rules_path,
)
from journal_mem.journal.entry import Entry
from journal_mem.journal.fold import Fold, fact_row, fold
from journal_mem.journal.near import Signatures
from journal_mem.journal.replay import Kept, Ruled, digest, files_digest
from journal_mem.schema import Config

DAY = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)
DATE = DAY.date()
AGENTS = ["api", "web", "docs"]
KEYS = [f"k{i}" for i in range(8)]
Item = tuple[str, Entry]


def entry(agent: str, key: str, minutes: int = 0, **kw: Any) -> Entry:
    kw.setdefault("title", f"Fact {key}")
    kw.setdefault("topic", "general")
    return Entry(agent=agent, key=key, created=DAY + dt.timedelta(minutes=minutes),
                 applies_to=kw.pop("applies_to", (agent,)), **kw)


def files_of(items: Iterable[Item]) -> Any:
    """The digest of entry files as the reader gives it (`files_digest` of its cache items,
    with the digest of them all that the read kept): each file's bytes and path."""
    cached = {p: (0, 0, 0, hashlib.blake2b(f"{p}\0{e!r}".encode(), digest_size=16).digest(),
                  e, False) for p, e in items}
    return files_digest(cached, digest(item[3] for item in cached.values()))


class Store:
    """Replays kept as the distiller keeps them: `cache.ReplayCache` in a folder, with
    the decisions of the rules after them, the facts they made and the signatures of
    their titles (`cache.RulesStore`, `cache.FoldCache`, `cache.NearStore`) unless
    `rules` is False."""

    def __init__(self, folder: str, rules: bool = True) -> None:
        self.folder = folder
        self.rules = rules
        self.cache: ReplayCache | None = None
        self.decided = RulesStore(folder)
        self.near = NearStore(folder)

    def load(self) -> Kept | None:
        self.cache = ReplayCache(self.folder, "key")
        self.cache.load()
        token = self.cache.token
        fields = self.cache.fields()
        if fields is None:
            return None
        kept = Kept.of(fields)
        self.decided = RulesStore(self.folder)  # one per distill, as folding.fold_step has
        kept_rules = self.decided.load(token)
        if self.rules and kept_rules is not None:
            rows = FoldCache(self.folder).rows_of(kept_rules["fold"])
            assert rows is not None
            kept.ruled, kept.facts = Ruled.of(kept_rules["ruled"]), rows
            self.near = NearStore(self.folder)
            found = self.near.load(token)
            kept.near = Signatures.unpacked(found[1], found[0]) if found else None
        return kept

    def save(self, result: Fold) -> None:
        """As the distiller saves it: through the cache it went on from, if any."""
        assert result.kept is not None and result.ruled is not None
        cache = self.cache or ReplayCache(self.folder, "key")
        replay = cache.save(result.kept.fields())
        assert replay
        rows = {key: fact_row(fact) for key, fact in result.facts.items()}
        fold_token = FoldCache(self.folder).save("signature", rows)
        self.decided.save(result.ruled.fields(), replay, fold_token, {})
        self.decided = RulesStore(self.folder)
        if result.signatures is not None:
            self.near.save(result.signatures, replay)
        self.cache = None


def run(items: list[Item], store: Store | None = None, date: dt.date = DATE,
        exists: Callable[[str], bool] = lambda p: True, config: Config | None = None) -> Fold:
    """Fold `items`; with `store`, going on from the replay it keeps, and keeping this
    one there. `exists`: which ref paths the tree has."""
    result = fold(list(items), agents=AGENTS, date=date, ref_exists=exists,
                  config=config or Config(), files=files_of(items),
                  kept=store.load if store is not None else None,
                  keep_near=store is not None)
    if store is not None:
        store.save(result)
    return result


def kept_fields(kept: Kept | None) -> dict[str, Any]:
    assert kept is not None
    return {name: getattr(kept, name) for name in Kept.FIELDS if name != "whole"}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text("abc/", min_size=1, max_size=4), st.binary(min_size=16,
                                                                          max_size=16)),
       st.sets(st.text("abc/", min_size=1, max_size=4)), st.booleans())
def test_most_of_the_files_weighed_by_those_they_lack_is_their_digest(
        digests: dict[str, bytes], paths: set[str], wrong: bool) -> None:
    """`files_digest` with the digest of all the items gives a set of paths that is most of
    them as the XOR of the paths' own digests does; a path it lacks raises as there; a
    wrong total gives a wrong digest, never the paths' own."""
    items = {p: (0, 0, 0, d, None, False) for p, d in digests.items()}
    total = digest(digests.values()) ^ (1 << 7 if wrong else 0)
    weighed = files_digest(items, total)
    for chosen in (paths, paths & items.keys(), set(items), set(list(items)[1:])):
        if not chosen <= items.keys():
            with pytest.raises(KeyError):
                weighed(chosen)
            continue
        own = digest(digests[p] for p in chosen)
        if wrong and 2 * len(chosen) > len(items):
            assert weighed(chosen) == own ^ (1 << 7)
        else:
            assert weighed(chosen) == own


@st.composite
def journals(draw: st.DrawFn) -> list[Item]:
    out: list[Item] = []
    for i in range(draw(st.integers(1, 30))):
        agent = draw(st.sampled_from(AGENTS))
        kind = draw(st.sampled_from(["semantic", "semantic", "episodic", "principle"]))
        names = st.lists(st.sampled_from(KEYS), max_size=1)
        rare = st.one_of(st.just(()), st.just(()), st.just(()), names.map(tuple))
        earlier = [p for p, _ in out]
        knew = tuple(sorted(set(draw(st.lists(st.sampled_from(earlier), max_size=2)))
                            if earlier and draw(st.integers(0, 3)) == 0 else ()))
        out.append((f"{agent}/journal/{i:03d}.md", entry(
            agent, draw(st.sampled_from(KEYS)), draw(st.integers(0, 400)), type=kind,
            title=draw(st.sampled_from(["Alpha one", "Beta two", "alpha ONE", "Gamma ray",
                                        "never use alpha one", "use alpha one"])),
            supersedes=draw(rare), retracts=draw(rare), drops=draw(rare), knew=knew,
            applies_to=tuple(draw(st.lists(st.sampled_from([*AGENTS, "all"]), max_size=2)))
            or (agent,),
            valid_until=draw(st.sampled_from([None, DATE, DATE + dt.timedelta(30)])),
        )))
    return out


def split(items: list[Item], cuts: list[int], skewed: bool) -> list[list[Item]]:
    """Growing journals: each a prefix of the last; by clock (as entries are written),
    or in the order drawn (clocks that disagree)."""
    ordered = items if skewed else sorted(items, key=lambda pe: (pe[1].created, pe[0]))
    return [ordered[:cut] for cut in sorted(cuts)] + [ordered]


@settings(max_examples=400, deadline=None)
@given(journals(), st.lists(st.integers(0, 30), min_size=1, max_size=3), st.booleans(),
       st.integers(0, 60))
def test_a_fold_that_goes_on_from_a_kept_replay_equals_a_fold_of_everything(
        items: list[Item], cuts: list[int], skewed: bool, days: int) -> None:
    date = DATE + dt.timedelta(days)
    with tempfile.TemporaryDirectory() as folder:
        kept = Store(folder)
        for journal in split(items, cuts, skewed):
            went_on = run(journal, kept, date=date)
            whole = run(journal, date=date)
            assert went_on == whole
            assert went_on.facts == whole.facts and went_on.removed == whole.removed
            # what the next fold goes on from is what a replay of everything keeps
            assert kept_fields(kept.load()) == kept_fields(whole.kept)


class Chain:
    """A line of commits as `gitops.lineage` reads it: the commit that added each entry,
    and how many commits there were when the replay was kept (`lineage.added_since`
    gives the entries the commits since added)."""

    def __init__(self) -> None:
        self.added: dict[str, str] = {}
        self.commits: list[str] = []
        self.kept_at = 0

    def commit(self, paths: Iterable[str]) -> None:
        fresh = [path for path in paths if path not in self.added]
        if fresh:  # a commit that adds no entry is no journal commit
            self.commits.append(f"c{len(self.commits)}")
            self.added.update((path, self.commits[-1]) for path in fresh)

    def history(self) -> History:
        parents = {c: (self.commits[i - 1],) if i else () for i, c in enumerate(self.commits)}
        return History(dict(self.added), dict(reversed(parents.items())))  # newest first

    def since(self) -> frozenset[str]:
        later = set(self.commits[self.kept_at:])
        return frozenset(path for path, commit in self.added.items() if commit in later)


def run_on(items: list[Item], store: Store | None, chain: Chain) -> Fold:
    """`run` with git history: `chain`'s, and the entries it committed since the kept
    replay given with it."""
    def load() -> Kept | None:
        assert store is not None
        kept = store.load()
        if kept is not None:
            kept.committed = chain.since()
        return kept

    result = fold(list(items), agents=AGENTS, date=DATE, ref_exists=lambda p: True,
                  config=Config(), files=files_of(items), lineage=chain.history,
                  kept=load if store is not None else None, keep_near=store is not None)
    if store is not None:
        store.save(result)
    return result


@settings(max_examples=400, deadline=None)
@given(journals(), st.lists(st.integers(0, 30), min_size=1, max_size=3), st.booleans(),
       st.booleans(), st.data())
def test_entries_committed_since_the_kept_replay_go_on_as_their_commits_order_them(
        items: list[Item], cuts: list[int], skewed: bool, short: bool,
        data: st.DataObject) -> None:
    """Between folds, pending entries are committed by hand, a few at a time (new ones
    only, or kept ones too); after a fold, the distill commits every pending one, or
    not. `short`: a key's entries are ordered along their chain past two of them
    (`order.GROUP_LIMIT`), so that a new commit can change how the kept ones are
    ordered."""
    chain = Chain()
    folded: set[str] = set()
    with tempfile.TemporaryDirectory() as folder, mock.patch.object(
            order, "GROUP_LIMIT", 2 if short else order.GROUP_LIMIT):
        kept = Store(folder)
        for journal in split(items, cuts, skewed):
            present = [path for path, _ in journal]
            for _ in range(data.draw(st.integers(0, 2))):
                pending = [path for path in present if path not in chain.added
                           and (path not in folded or data.draw(st.booleans()))]
                if pending:
                    chain.commit(data.draw(st.lists(st.sampled_from(pending), min_size=1,
                                                    unique=True)))
            fresh = chain.since() & (set(present) - folded)
            went_on = run_on(journal, kept, chain)
            whole = run_on(journal, None, chain)
            event(f"went on past entries committed since: {went_on.resumed > 0 and bool(fresh)}")
            folded = set(present)
            assert went_on == whole
            assert went_on.facts == whole.facts and went_on.removed == whole.removed
            assert kept_fields(kept.load()) == kept_fields(whole.kept)
            if data.draw(st.booleans()):  # the distill commits what is pending
                chain.commit(present)
            chain.kept_at = len(chain.commits)


def test_new_lessons_written_after_the_kept_ones_go_on_from_it(store: Store) -> None:
    old = [(f"api/journal/{i}.md", entry("api", f"k{i}", i)) for i in range(5)]
    run(old, store)
    new = [("web/journal/a.md", entry("web", "k9", 10, supersedes=("k1",))),
           ("web/journal/b.md", entry("web", "k2", 11, applies_to=("all",)))]
    later = run(old + new, store)
    assert later.resumed == 2
    assert later == run(old + new)
    assert later.kept is not None and not later.kept.whole
    assert set(later.kept.rows) == {"k1", "k2", "k9"}
    assert later.kept.paths == {"web/journal/a.md", "web/journal/b.md"}
    assert later.facts["k9"].holders == ("api", "web")
    assert later.facts["k2"].holders == ("api", "docs", "web")


def test_nothing_new_goes_on_with_nothing(store: Store) -> None:
    old = [(f"api/journal/{i}.md", entry("api", f"k{i}", i)) for i in range(3)]
    run(old, store)
    assert run(old, store).resumed == 0


def _falls_back(store: Store, old: list[Item], new: list[Item],
                old_now: list[Item] | None = None) -> None:
    run(old, store)
    journal = (old_now if old_now is not None else old) + new
    result = run(journal, store)
    assert result.resumed == -1
    assert result == run(journal)


OLD = [("api/journal/a.md", entry("api", "k1", 10)),
       ("api/journal/b.md", entry("api", "k2", 20, retracts=("k7",)))]


def test_an_entry_whose_clock_is_behind_the_kept_ones_replays_everything(store: Store) -> None:
    _falls_back(store, OLD, [("web/journal/c.md", entry("web", "k3", 15))])


def test_an_equal_clock_sorts_by_path(store: Store) -> None:
    _falls_back(store, OLD, [("api/journal/0.md", entry("api", "k3", 20))])
    other = Store(store.folder + "/other")
    run(OLD, other)
    assert run([*OLD, ("api/journal/c.md", entry("api", "k3", 20))], other).resumed == 1


def test_a_kept_entry_that_changed_or_went_replays_everything(store: Store) -> None:
    edited = [OLD[0], (OLD[1][0], OLD[1][1].replace(title="Other"))]
    _falls_back(store, OLD, [("api/journal/c.md", entry("api", "k3", 30))], edited)
    _falls_back(store, OLD, [("api/journal/c.md", entry("api", "k3", 30))], OLD[:1])


def test_a_new_entry_of_a_key_only_a_retraction_named_replays_everything(store: Store) -> None:
    # it would be the earliest entry of k7, and the retraction comes after it
    _falls_back(store, OLD, [("api/journal/c.md", entry("api", "k7", 30))])
    # once another entry of k7 is kept, the retraction came after that one
    old = [*OLD, ("web/journal/k7.md", entry("web", "k7", 25))]
    other = Store(store.folder + "/other")
    run(old, other)
    assert run([*old, ("api/journal/c.md", entry("api", "k7", 30))], other).resumed == 1


def test_a_new_entry_of_a_key_only_its_own_correction_named_replays_everything(
        store: Store) -> None:
    # the one entry of k5 supersedes k5 itself: a new entry of k5 is the earliest other
    # entry of the key it names, so the full order puts the kept one after it
    old = [("api/journal/a.md", entry("api", "k5", 10, title="Mine", supersedes=("k5",)))]
    _falls_back(store, old, [("web/journal/c.md", entry("web", "k5", 30, title="Theirs"))])


def test_a_kept_entry_that_knew_a_new_path_replays_everything(store: Store) -> None:
    old = [("api/journal/a.md", entry("api", "k1", 10, knew=("web/journal/z.md",)))]
    _falls_back(store, old, [("web/journal/z.md", entry("web", "k2", 30))])


def test_a_broken_cycle_among_the_kept_entries_replays_everything(store: Store) -> None:
    old = [("api/journal/a.md", entry("api", "k1", 10, knew=("api/journal/b.md",))),
           ("api/journal/b.md", entry("api", "k2", 20, knew=("api/journal/a.md",)))]
    assert run(old).cycles
    _falls_back(store, old, [("web/journal/c.md", entry("web", "k3", 30))])


def test_a_new_correction_of_a_key_only_a_kept_retraction_has_orders_nothing(store: Store) -> None:
    """The earliest entry of `r` is the kept retraction: the new correction of `r` comes
    after it, not after the new entry of `r` its clock puts later."""
    old = [("api/journal/a.md", entry("api", "k1", 5)),
           ("api/journal/r.md", entry("api", "r", 10, retracts=("k1",)))]
    new = [("web/journal/n1.md", entry("web", "x", 20, supersedes=("r",))),
           ("web/journal/n2.md", entry("web", "r", 30, title="R again"))]
    run(old, store)
    later = run(old + new, store)
    assert later.resumed == 2
    assert later == run(old + new)
    assert "r" in later.facts


# --- the rules after the replay, going on from the last fold's (`journal/rules.py`) ------

PATHS = ["src/a.py", "src/b.py", "docs/c.md"]


def ruled_fields(result: Fold) -> dict[str, Any]:
    """The decisions of a fold's rules, a group's keys as a set (their order is the
    order the keys were judged in), and so the facts of a stem in the index of
    probable corrections."""
    assert result.ruled is not None
    fields = result.ruled.fields()
    fields["groups"] = {g: set(keys) for g, keys in result.ruled.groups.items()}
    index = fields["index"]
    if isinstance(index, dict):  # a stem's facts in the order they came in
        fields["index"] = {**index, "posts": {s: set(k) for s, k in index["posts"].items()}}
    return fields


@st.composite
def cited_journals(draw: st.DrawFn) -> list[Item]:
    """Journals whose entries cite paths, with titles one writer repeats."""
    items = draw(journals())
    out = []
    for path, item in items:
        refs = tuple(draw(st.lists(st.sampled_from(PATHS), max_size=2, unique=True)))
        out.append((path, item.replace(refs=refs)))
    return out


@settings(max_examples=400, deadline=None)
@given(cited_journals(), st.lists(st.integers(0, 30), min_size=1, max_size=4),
       st.lists(st.sets(st.sampled_from(PATHS)), min_size=5, max_size=5),
       st.sampled_from(["drop", "flag"]), st.integers(0, 60),
       st.lists(st.integers(0, 40), min_size=5, max_size=5))
def test_a_fold_that_goes_on_from_the_last_rules_equals_a_fold_of_everything(
        items: list[Item], cuts: list[int], trees: list[set[str]], stale: str,
        days: int, later: list[int]) -> None:
    """Growing journals by clock, each folded on a tree that has some of the cited paths
    (a code commit between two distills removes or brings back a ref), on the same date
    or a later one (expiry and the episodic time pass between two distills)."""
    config = Config()._replace(distill=Config().distill._replace(
        stale_refs="drop" if stale == "drop" else "flag", episodic_ttl_days=days % 7 + 1))
    dates = [DATE + dt.timedelta(days + d) for d in sorted(later)]
    with tempfile.TemporaryDirectory() as folder:
        kept = Store(folder)
        for journal, tree, date in zip(split(items, cuts, False), trees, dates, strict=False):
            went_on = run(journal, kept, date=date, exists=tree.__contains__, config=config)
            whole = run(journal, date=date, exists=tree.__contains__, config=config)
            assert went_on == whole
            assert went_on.facts == whole.facts and went_on.removed == whole.removed
            assert list(went_on.facts) == list(whole.facts)  # in key order, as a whole fold
            assert list(went_on.flagged.items()) == list(whole.flagged.items())
            assert ruled_fields(went_on) == ruled_fields(whole)
            event("judged again" if went_on.rejudged >= 0 else "judged whole")
            if went_on.signatures is not None and went_on.signatures.base:
                event("near-duplicates gone on with from the kept signatures"
                      + (", some found" if went_on.near_duplicates else ""))
            if went_on.rejudged >= 0 and date > dates[0]:
                event("judged again on a later date")


def _rejudged(old: list[Item], new: list[Item], store: Store, **kw: Any) -> Fold:
    run(old, store, **kw)
    later = run(old + new, store, **kw)
    assert later == run(old + new, **kw)
    return later


def test_a_new_lesson_under_an_old_title_merges_going_on_from_the_last_rules(
        store: Store) -> None:
    old = [(f"api/journal/{i}.md", entry("api", f"k{i}", i, title=f"Fact {i}"))
           for i in range(6)]
    new = [("api/journal/n.md", entry("api", "n1", 10, title="fact   3!"))]
    later = _rejudged(old, new, store)
    assert 0 <= later.rejudged <= 3  # the new key and its group, not all six
    assert later.merged == {"k3": "n1"} and "k3" not in later.facts
    # the winner is corrected away: the loser is a fact again
    again = run([*old, *new, ("web/journal/r.md", entry("web", "r", 20, retracts=("n1",)))],
                store)
    assert "k3" in again.facts and again.rejudged >= 0 and not again.merged


def test_a_ref_gone_from_the_tree_drops_an_untouched_fact_and_brings_it_back(
        store: Store) -> None:
    old = [("api/journal/a.md", entry("api", "k1", 1, refs=("src/a.py",))),
           ("api/journal/b.md", entry("api", "k2", 2))]
    both, gone = {"src/a.py"}.__contains__, set().__contains__
    run(old, store, exists=both)
    new = [("web/journal/c.md", entry("web", "k3", 10))]
    later = run(old + new, store, exists=gone)
    assert later.rejudged >= 0 and later == run(old + new, exists=gone)
    assert "k1" not in later.facts and later.removed["k1"] == "refs gone: src/a.py"
    back = old + new + [("web/journal/d.md", entry("web", "k4", 11))]
    again = run(back, store, exists=both)
    assert again.rejudged >= 0 and "k1" in again.facts and again == run(back, exists=both)


def test_a_later_date_judges_again_only_what_expired_since(store: Store) -> None:
    old = [(f"api/journal/{i}.md", entry("api", f"k{i}", i)) for i in range(6)]
    old += [("api/journal/u.md", entry("api", "until", 7, valid_until=DATE + dt.timedelta(2))),
            ("api/journal/e.md", entry("api", "event", 8, type="episodic"))]
    ttl = Config().distill.episodic_ttl_days
    run(old, store)
    new = [("api/journal/n.md", entry("api", "n", 10))]
    later = run(old + new, store, date=DATE + dt.timedelta(3))  # "until" expired
    assert later.resumed == 1 and later.rejudged == 2  # the new key and "until"
    assert "until" not in later.facts and later.removed["until"].startswith("expired")
    assert later == run(old + new, date=DATE + dt.timedelta(3))
    past = DATE + dt.timedelta(ttl + 1)  # the episodic record is past its time
    newer = [*old, *new, ("web/journal/m.md", entry("web", "m", 11))]
    gone = run(newer, store, date=past)
    assert gone.rejudged == 2 and "event" not in gone.facts and gone == run(newer, date=past)


def test_an_earlier_date_judges_every_key(store: Store) -> None:
    old = [(f"api/journal/{i}.md", entry("api", f"k{i}", i)) for i in range(3)]
    old += [("api/journal/u.md", entry("api", "until", 7, valid_until=DATE))]
    run(old, store, date=DATE + dt.timedelta(1))
    new = [("api/journal/n.md", entry("api", "n", 10))]
    earlier = run(old + new, store)
    assert earlier.resumed == 1 and earlier.rejudged == -1 and "until" in earlier.facts


def test_without_the_last_rules_every_key_is_judged(tmp_path: Path) -> None:
    store = Store(str(tmp_path), rules=False)
    old = [(f"api/journal/{i}.md", entry("api", f"k{i}", i)) for i in range(3)]
    run(old, store)
    later = run([*old, ("api/journal/n.md", entry("api", "n", 10))], store)
    assert later.resumed == 1 and later.rejudged == -1


# --- probable corrections, going on from the last fold's (`journal/corrections.py`) -----

SUBJECTS = ["retry limit", "batch size", "cache ttl", "deploy window", "port"]
VALUES = ["3", "5", "40", "InfluxDB", "Redis", "uPlot"]


@st.composite
def correcting_journals(draw: st.DrawFn) -> list[Item]:
    """Lessons on a few subjects that restate, correct, supersede and retract each other,
    some dated out of the window of the distill date."""
    out: list[Item] = []
    for i in range(draw(st.integers(1, 30))):
        agent = draw(st.sampled_from(AGENTS))
        subject = draw(st.sampled_from(SUBJECTS))
        value = draw(st.sampled_from(VALUES))
        cue = draw(st.sampled_from(["", "", "now ", "no longer ", "was changed to "]))
        topic = draw(st.sampled_from(["ops", "api", subject.split()[0]]))
        title = f"The {subject} is {cue}{value}"
        rare = st.one_of(st.just(()), st.just(()), st.just(()),
                         st.lists(st.sampled_from(KEYS), max_size=1).map(tuple))
        out.append((f"{agent}/journal/{i:03d}.md", entry(
            agent, draw(st.sampled_from(KEYS)), draw(st.integers(-100 * 1440, 400)),
            title=title, topic=topic, body=draw(st.sampled_from(["", f"Set in {topic}."])),
            supersedes=draw(rare), retracts=draw(rare),
            applies_to=tuple(draw(st.lists(st.sampled_from([*AGENTS, "all"]), max_size=2)))
            or (agent,))))
    return out


# A word in more than `KEEP_DF` titles (4 with `MAX_DF` 2) whose facts were let go, back
# in `KEEP_DF` titles, but more than `MAX_DF` + 1, once one of them says another value:
# found by a random seed
_FELL_BACK = [(f"api/journal/{i:03d}.md", entry("api", key, i, title=title))
              for i, (key, title) in enumerate([
                  ("k0", "The retry limit is InfluxDB"), ("k1", "The batch size is InfluxDB"),
                  ("k2", "The cache ttl is InfluxDB"), ("k3", "The port is InfluxDB"),
                  ("k4", "The deploy window is InfluxDB"), ("k0", "The retry limit is 3")])]


@settings(max_examples=400, deadline=None)
@given(correcting_journals(), st.lists(st.integers(0, 30), min_size=1, max_size=4),
       st.integers(1, 3), st.lists(st.integers(0, 80), min_size=5, max_size=5))
@example(_FELL_BACK, [5], 2, [0] * 5)
def test_corrections_judged_going_on_from_the_last_fold_equal_those_of_everything(
        items: list[Item], cuts: list[int], max_df: int, later: list[int]) -> None:
    """With words in few titles (`MAX_DF` 1-3, kept up to twice that), a word's facts are
    paired, unpaired, weighed anew and dropped from the index as the journal grows; on
    the same date or a later one, facts leave the window of the date."""
    dates = [DATE + dt.timedelta(d) for d in sorted(later)]
    with mock.patch.object(similar, "MAX_DF", max_df), \
            mock.patch.object(similar, "KEEP_DF", 2 * max_df), \
            tempfile.TemporaryDirectory() as folder:
        kept = Store(folder)
        for journal, date in zip(split(items, cuts, False), dates, strict=False):
            went_on = run(journal, kept, date=date)
            whole = run(journal, date=date)
            assert went_on.conflicts == whole.conflicts
            assert went_on.retractions == whole.retractions
            assert went_on == whole
            assert ruled_fields(went_on) == ruled_fields(whole)
            event("went on" if went_on.went_on else "judged all")
            event(f"pairs {min(len(whole.conflicts), 3)}")
            if went_on.went_on and date > dates[0]:
                event("went on on a later date")


def test_a_retraction_restated_in_other_words_is_judged_again_going_on(
        store: Store) -> None:
    """A retraction lesson (its key no fact) agreeing with a fact is restated under its
    key with a change word: it now probably corrects the fact. Its title's stems are
    the same as before, so only its key among the changed ones says to judge again
    (found by the property above, with words in one title at most)."""
    with mock.patch.object(similar, "MAX_DF", 1), mock.patch.object(similar, "KEEP_DF", 2):
        old = [("api/journal/a.md", entry("api", "k2", 0, title="The retry limit is 3")),
               ("api/journal/b.md", entry("api", "k1", 0, title="The retry limit is 3",
                                          retracts=("k0",)))]
        assert run(old, store).conflicts == []
        new = [("api/journal/c.md", entry("api", "k1", 1, title="The retry limit is now 3",
                                          retracts=("k0",)))]
        later = run(old + new, store)
        assert later.went_on and later.conflicts == [("k2", "k1")]
        assert later == run(old + new)


def test_a_word_s_facts_are_kept_when_a_title_comes_in_as_another_leaves(
        store: Store) -> None:
    """A fact merges into a new one of the same title: "retry" stays in `KEEP_DF` titles,
    and the index still keeps its facts (it lost them when the new title came in first,
    at one title past `KEEP_DF`)."""
    with mock.patch.object(similar, "MAX_DF", 2), mock.patch.object(similar, "KEEP_DF", 4):
        old = [(f"api/journal/{n:03d}.md", entry("api", key, 0, topic="ops",
                                                   title=f"The retry limit is {v}"))
               for n, key, v in [(2, "k2", "now 3"), (3, "k4", "40"), (5, "k1", "5"),
                                 (15, "k3", "3")]]
        run(old, store)
        new = [("api/journal/017.md", entry("api", "k0", 0, topic="ops",
                                            title="The retry limit is 3"))]
        later = run(old + new, store)
        whole = run(old + new)
        assert "k3" not in later.facts and later.went_on
        assert ruled_fields(later) == ruled_fields(whole)
        assert ruled_fields(later)["index"]["posts"]["retry"] == {"k0", "k1", "k2", "k4"}


def test_a_new_correction_is_judged_going_on_from_the_last_fold(store: Store) -> None:
    old = [("api/journal/a.md", entry("api", "k1", 1, title="The retry limit is 3")),
           ("api/journal/b.md", entry("api", "k2", 2, title="The batch size is 40"))]
    run(old, store)
    new = [("web/journal/c.md", entry("web", "k3", 10, title="The retry limit is now 5"))]
    later = run(old + new, store)
    assert later.went_on and later.conflicts == [("k1", "k3")]
    assert later == run(old + new)


@pytest.mark.parametrize("damage", ["groups", "posts", "index-field", "said"])
def test_kept_decisions_that_do_not_hold_the_last_fold_are_not_gone_on_from(
        store: Store, damage: str) -> None:
    """A damaged `rules.pickle` (it is a disposable cache) makes the fold judge every key
    and fact again: it still equals a fold of everything."""
    old = [("api/journal/a.md", entry("api", "k1", 1, title="The retry limit is 3")),
           ("api/journal/b.md", entry("api", "k2", 2, title="the retry limit is 3!")),
           ("web/journal/c.md", entry("web", "k3", 3, title="The batch size is 40"))]
    run(old, store)
    path = rules_path(store.folder)
    gen, items = load(path, ("rules", 4))
    ruled = items["ruled"]
    if damage == "groups":
        ruled["groups"] = {}
    elif damage == "posts":
        ruled["index"]["posts"] = {}
    elif damage == "index-field":
        del ruled["index"]["recent"]
    else:
        ruled["index"]["said"] = {"nothing": ("gone",)}
    dump(path, gen, ("rules", 4), items, entries=False)
    new = [("web/journal/d.md", entry("web", "k4", 10, title="The retry limit is now 5",
                                      supersedes=("k2",)))]
    later = run(old + new, store)
    assert later == run(old + new)
    assert later.conflicts == [("k1", "k4")] and "k1" in later.facts
    if damage == "groups":
        assert later.rejudged == -1
    elif damage != "said":  # a retraction said to have gone changes no pair here
        assert later.rejudged >= 0 and not later.went_on


# a key that joins the same-title group of another, then one that leaves it
_JOINED = [(f"api/journal/{i:03d}.md", entry("api", key, i, title=title))
           for i, (key, title) in enumerate([
               ("k1", "The retry limit is 3"), ("k5", "The port is 3"),
               ("k2", "The retry limit is 3"), ("k1", "The retry limit is 5")])]


@settings(max_examples=100, deadline=None)
@given(correcting_journals(), st.lists(st.integers(0, 30), min_size=2, max_size=4))
@example(_JOINED, [2, 3])
@example(_JOINED, [3, 3])
def test_kept_decisions_read_back_as_they_were_kept(items: list[Item], cuts: list[int]) -> None:
    """The decisions kept after a fold that went on are written as a delta of the groups
    it changed over the base (`cache.RulesStore`), and read back as the very decisions
    the fold made: the groups it replaced, added and emptied among them."""
    with tempfile.TemporaryDirectory() as folder:
        kept = Store(folder)
        base = None
        for journal in split(items, cuts, False):
            result = run(journal, kept)
            cache = ReplayCache(folder, "key")
            cache.load()
            got = RulesStore(folder).load(cache.token)
            assert got is not None and result.ruled is not None
            assert got["ruled"] == result.ruled.fields()
            with open(rules_path(folder), "rb") as fh:
                now = fh.read()
            if base is not None and result.went_on and os.path.exists(
                    rules_path(folder) + ".delta"):
                assert now == base  # the base file stays: the delta holds what changed
                event("delta")
            base = now
