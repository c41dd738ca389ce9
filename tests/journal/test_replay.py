"""A fold that goes on from a kept replay gives what a fold of every entry gives
(`journal/replay.py`): a property over random journals and random split points, and
each reason it must replay everything instead."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journal_mem.journal.cache import ReplayCache
from journal_mem.journal.entry import Entry
from journal_mem.journal.fold import Fold, fold
from journal_mem.journal.replay import Kept, digest
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
    """The digest of entry files as the reader gives it: each file's bytes and path."""
    by_path = dict(items)
    return lambda paths: digest(
        hashlib.blake2b(f"{p}\0{by_path[p]!r}".encode(), digest_size=16).digest()
        for p in paths)


class Store:
    """Replays kept as the distiller keeps them: `cache.ReplayCache` in a folder."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.cache: ReplayCache | None = None

    def load(self) -> Kept | None:
        self.cache = ReplayCache(self.folder, "key")
        self.cache.load()
        fields = self.cache.fields()
        return Kept.of(fields) if fields is not None else None

    def save(self, kept: Kept | None) -> None:
        """As the distiller saves it: through the cache it went on from, if any."""
        assert kept is not None
        cache = self.cache or ReplayCache(self.folder, "key")
        assert cache.save(kept.fields())
        self.cache = None


def run(items: list[Item], store: Store | None = None, date: dt.date = DATE) -> Fold:
    """Fold `items`; with `store`, going on from the replay it keeps, and keeping this
    one there."""
    result = fold(list(items), agents=AGENTS, date=date, ref_exists=lambda p: True,
                  config=Config(), files=files_of(items),
                  kept=store.load if store is not None else None)
    if store is not None:
        store.save(result.kept)
    return result


def kept_fields(kept: Kept | None) -> dict[str, Any]:
    assert kept is not None
    return {name: getattr(kept, name) for name in Kept.__slots__ if name != "whole"}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path))


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
                                        "never use alpha one"])),
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
    edited = [OLD[0], (OLD[1][0], dataclasses.replace(OLD[1][1], title="Other"))]
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
