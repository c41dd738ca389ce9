"""The change report compares fact rows: what each agent gained, whose fact changed and
what it lost, as a plain per-agent comparison of the two folds says."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from journal_mem import repo as repo_module
from journal_mem.distill.changes import diff
from journal_mem.distill.folding import fold_signature
from journal_mem.journal.fold import Fact, FactRow, fact_of, fact_row
from journal_mem.journal.foldstate import FoldState

AGENTS = ("api", "web", "ops")
KEYS = tuple(f"k{i}" for i in range(8))


def _fact(key: str, holders: tuple[str, ...], title: str) -> FactRow:
    return fact_row(Fact(key=key, title=title, body="b", topic="t", type="semantic",
                         confidence=0.8, importance="medium",
                         created=dt.datetime(2026, 5, 1, tzinfo=dt.UTC),
                         holders=tuple(sorted(holders)), path=f"api/journal/{key}.md"))


def folds() -> st.SearchStrategy[dict[str, FactRow]]:
    holders = st.sets(st.sampled_from(AGENTS), min_size=1).map(tuple)
    return st.dictionaries(st.sampled_from(KEYS), st.tuples(holders, st.sampled_from("AB")),
                           max_size=len(KEYS)).map(
        lambda d: {key: _fact(key, h, title) for key, (h, title) in d.items()})


def _plain(before: dict[str, FactRow], after: dict[str, FactRow],
           removed: dict[str, str]) -> dict[str, tuple[list[str], list[str], dict[str, str]]]:
    """Every agent's held facts before and after, compared one agent at a time."""
    def held(rows: dict[str, FactRow], agent: str) -> dict[str, object]:
        return {key: fact_of(row) for key, row in rows.items()
                if agent in fact_of(row).holders}
    out = {}
    for agent in AGENTS:
        was, now = held(before, agent), held(after, agent)
        added = sorted(now.keys() - was.keys())
        changed = sorted(k for k in now.keys() & was.keys() if now[k] != was[k])
        lost = {k: removed.get(k, f"no longer held by {agent}")
                for k in sorted(was.keys() - now.keys())}
        if added or changed or lost:
            out[agent] = (added, changed, lost)
    return out


@settings(max_examples=300, deadline=None)
@given(folds(), folds(), st.dictionaries(st.sampled_from(KEYS), st.just("retracted by x")))
def test_the_report_is_each_agents_own_comparison(before: dict[str, FactRow],
                                                  after: dict[str, FactRow],
                                                  removed: dict[str, str]) -> None:
    got = diff(before, after, removed)
    assert list(got) == sorted(got)
    assert {a: (c.added, c.changed, c.removed) for a, c in got.items()} == _plain(
        before, after, removed)
    assert all(list(c.removed) == sorted(c.removed) for c in got.values())


def test_a_fold_signature_names_its_date_agents_and_folded_set(repo: Path) -> None:
    """The fold cache's key: equal for the same inputs in any order, different when the
    date, the agents or any folded path differs (a path is never read as two)."""
    ctx = repo_module.open_context(str(repo))
    day = dt.date(2026, 5, 1)

    def sig(folded: tuple[str, ...], date: dt.date = day, agents: tuple[str, ...] = ("api",),
            ) -> str:
        return fold_signature(FoldState(date, folded), list(agents), ctx)

    one = sig(("api/journal/a.md", "web/journal/b.md"))
    assert one == sig(("web/journal/b.md", "api/journal/a.md"))
    others = [sig(("api/journal/a.md",)), sig(("api/journal/a.md", "web/journal/b.m")),
              sig(("api/journal/a.mdweb/journal/b.md",)),
              sig(("api/journal/a.md", "web/journal/b.md"), day + dt.timedelta(1)),
              sig(("api/journal/a.md", "web/journal/b.md"), agents=("api", "web")), sig(())]
    assert len({one, *others}) == len(others) + 1
