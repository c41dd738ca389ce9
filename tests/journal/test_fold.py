"""fold(): live facts from journal entries — pure, no disk, no git."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures import six_agents
from journal_mem.journal import fold as fold_module
from journal_mem.journal import forked
from journal_mem.journal.entry import Entry
from journal_mem.journal.fold import Fact, fold
from journal_mem.journal.near import Signatures, near_duplicates, signatures
from journal_mem.journal.similar import normalise_title
from journal_mem.schema import Config, Distill

DAY = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)
DATE = DAY.date()
AGENTS = ["api", "web", "docs"]


def entry(agent: str, key: str, minutes: int = 0, **kw: Any) -> Entry:
    kw.setdefault("title", f"Fact {key}")
    kw.setdefault("topic", "general")
    return Entry(agent=agent, key=key, created=DAY + dt.timedelta(minutes=minutes),
                 applies_to=kw.pop("applies_to", (agent,)), **kw)


def run(*items: tuple[str, Entry], config: Config | None = None, date: dt.date = DATE,
        gone: frozenset[str] = frozenset()) -> Any:
    return fold(list(items), agents=AGENTS, date=date, ref_exists=lambda p: p not in gone,
                config=config or Config())


def test_newest_entry_of_a_key_wins_for_every_holder() -> None:
    result = run(("api/journal/a.md", entry("api", "k", 0, title="Old")),
                 ("web/journal/b.md", entry("web", "k", 5, title="New")))
    fact = result.facts["k"]
    assert fact.title == "New"
    assert fact.holders == ("api", "web")
    assert fact.path == "web/journal/b.md"


def test_created_ties_are_broken_by_path() -> None:
    result = run(("web/journal/b.md", entry("web", "k", 0, title="B")),
                 ("api/journal/a.md", entry("api", "k", 0, title="A")))
    assert result.facts["k"].title == "B"


def test_applies_to_all_reaches_every_agent() -> None:
    result = run(("api/journal/a.md", entry("api", "k", applies_to=("all",))))
    assert result.facts["k"].holders == tuple(sorted(AGENTS))


def test_supersedes_removes_the_old_key_and_carries_its_holders() -> None:
    result = run(("api/journal/a.md", entry("api", "old", 0, applies_to=("api", "web"))),
                 ("docs/journal/b.md", entry("docs", "new", 5, supersedes=("old",))))
    assert "old" not in result.facts
    assert result.removed["old"] == "superseded by new (docs/journal/b.md)"
    assert result.facts["new"].holders == ("api", "docs", "web")


def test_retracts_removes_with_no_replacement() -> None:
    result = run(("api/journal/a.md", entry("api", "old", 0)),
                 ("web/journal/b.md", entry("web", "note", 5, retracts=("old",))))
    assert result.removed["old"] == "retracted by web/journal/b.md"


def test_a_pure_retraction_states_no_fact() -> None:
    result = run(("api/journal/a.md", entry("api", "old", 0)),
                 ("web/journal/b.md", entry("web", "retract-old", 5, title="Retract old",
                                            retracts=("old",))))
    assert result.facts == {}
    assert result.removed["retract-old"] == "a retraction only (web/journal/b.md)"


def test_a_retraction_that_also_supersedes_is_a_fact() -> None:
    result = run(("api/journal/a.md", entry("api", "old", 0)),
                 ("web/journal/b.md", entry("web", "new", 5, supersedes=("old",),
                                            retracts=("other",))))
    assert list(result.facts) == ["new"]


def test_episodic_records_with_the_same_title_stay_one_per_run() -> None:
    from journal_mem.journal.entry import parse, render

    runs = []
    for day in range(3):
        written = Entry(agent="ci", topic="runs", title="Nightly build failed", type="episodic",
                        confidence=1.0, created=DAY + dt.timedelta(days=day),
                        body=f"Run {day}: the cache was cold.")
        text = render(written).replace("key: \n", "")
        runs.append((f"ci/journal/{day}.md", parse(text.encode())))
    hand = "---\nagent: ci\ntopic: runs\ntype: episodic\ncreated: 2026-05-04T12:00:00Z\n---\n"
    runs.append(("ci/journal/h.md", parse((hand + "# Nightly build failed\n").encode())))
    result = run(*runs, date=DATE + dt.timedelta(days=4))
    assert len(result.facts) == 4
    assert result.near_duplicates == []


def test_a_newer_entry_asserting_a_removed_key_brings_it_back() -> None:
    result = run(("api/journal/a.md", entry("api", "k", 0, title="first")),
                 ("web/journal/b.md", entry("web", "x", 5, retracts=("k",))),
                 ("docs/journal/c.md", entry("docs", "k", 9, title="again")))
    assert result.facts["k"].title == "again"
    assert result.facts["k"].holders == ("api", "docs")
    assert "k" not in result.removed


def test_an_older_entry_cannot_resurrect_a_retracted_key() -> None:
    result = run(("web/journal/b.md", entry("web", "x", 5, retracts=("k",))),
                 ("api/journal/a.md", entry("api", "k", 0)))
    assert "k" not in result.facts


def test_valid_until_before_the_distill_date_expires() -> None:
    result = run(("api/journal/a.md", entry("api", "k", valid_until=DATE)),
                 ("api/journal/b.md", entry("api", "gone", valid_until=DATE - dt.timedelta(1))))
    assert "k" in result.facts
    assert result.removed["gone"] == f"expired {DATE - dt.timedelta(1)}"


def test_refs_all_gone_drop_or_flag() -> None:
    item = ("api/journal/a.md", entry("api", "k", refs=("src/a.py", "src/b.py")))
    gone = frozenset({"src/a.py", "src/b.py"})
    assert run(item, gone=frozenset({"src/a.py"})).facts.get("k") is not None
    assert run(item, gone=gone).removed["k"] == "refs gone: src/a.py, src/b.py"
    flag = Config(distill=Distill(stale_refs="flag"))
    result = run(item, gone=gone, config=flag)
    assert "k" in result.facts and result.flagged["k"] == "refs gone: src/a.py, src/b.py"


def test_old_episodic_facts_are_dropped() -> None:
    item = ("api/journal/a.md", entry("api", "k", type="episodic", confidence=1.0))
    assert "k" in run(item, date=DATE + dt.timedelta(days=90)).facts
    later = run(item, date=DATE + dt.timedelta(days=91))
    assert later.removed["k"] == "episodic older than 90 days"


def test_one_writers_same_title_under_different_keys_is_merged_into_the_newest() -> None:
    result = run(("api/journal/a.md", entry("api", "a", 0, title="Use  the API, always!",
                                             applies_to=("api", "web"))),
                 ("api/journal/b.md", entry("api", "b", 5, title="use the api always")))
    assert list(result.facts) == ["b"]
    assert result.facts["b"].holders == ("api", "web")
    assert result.removed["a"] == "merged into b (same title)"


def test_another_writers_same_title_replaces_nothing() -> None:
    """Merging across writers let one agent rewrite another's fact without naming it:
    "never against prod" became "directly against prod" for every holder."""
    result = run(("web/journal/a.md", entry("web", "a", 0, title="Run migrations: never "
                                             "against prod", body="Never run them on prod.")),
                 ("api/journal/b.md", entry("api", "b", 5, title="Run migrations never "
                                             "against prod!", body="Run them directly.")))
    assert set(result.facts) == {"a", "b"}
    assert result.facts["a"].holders == ("web",) and result.facts["b"].holders == ("api",)


def test_near_duplicates_are_reported_not_merged() -> None:
    result = run(("api/journal/a.md", entry("api", "a", 0, title="Use the cache layer")),
                 ("web/journal/b.md", entry("web", "b", 5, title="Never use the cache layer")))
    assert set(result.facts) == {"a", "b"}
    assert ("a", "b") in result.near_duplicates


def test_near_duplicates_found_in_a_child_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `NEAR_FORK_AT` facts a forked child finds them (`forked.in_child`)."""
    items = [("api/journal/a.md", entry("api", "a", 0, title="Use the cache layer")),
             ("web/journal/b.md", entry("web", "b", 5, title="Never use the cache layer")),
             ("web/journal/c.md", entry("web", "c", 9, title="Pin the node version"))]
    here = run(*items)
    monkeypatch.setattr(fold_module, "NEAR_FORK_AT", 1)
    monkeypatch.setattr(forked, "children", lambda: 1)
    spawned: list[int] = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: spawned.append(1) or fork())
    there = run(*items)
    assert spawned and there.near_duplicates == here.near_duplicates == [("a", "b")]
    assert there == here


def test_normalise_title() -> None:
    assert normalise_title("  Hello,   World!! ") == "hello world"


def test_six_agents_get_the_correction_and_none_keeps_the_wrong_fact() -> None:
    items = [(f"{a}/journal/w.md", six_agents.wrong(a)) for a in six_agents.AGENTS]
    items += [(f"{e.agent}/journal/c{i}.md", e) for i, e in enumerate(six_agents.corrections())]
    result = fold(items, agents=list(six_agents.AGENTS), date=six_agents.DISTILL_DATE,
                  ref_exists=lambda p: True, config=Config())
    assert six_agents.WRONG_KEY not in result.facts
    right = result.facts[six_agents.RIGHT_KEY]
    assert right.holders == tuple(sorted(six_agents.AGENTS))
    assert all(f.title != six_agents.WRONG for f in result.facts.values())


# --- properties --------------------------------------------------------------

KEYS = st.sampled_from(["k1", "k2", "k3", "k4", "k5"])


@st.composite
def journals(draw: st.DrawFn) -> list[tuple[str, Entry]]:
    out = []
    for i in range(draw(st.integers(0, 25))):
        agent = draw(st.sampled_from(AGENTS))
        kind = draw(st.sampled_from(["semantic", "episodic", "principle"]))
        out.append((f"{agent}/journal/{i:03d}.md", entry(
            agent, draw(KEYS), draw(st.integers(0, 200)), type=kind,
            confidence=0.8 if kind == "semantic" else 1.0,
            title=draw(st.sampled_from(["Alpha one", "Beta two", "alpha ONE", "Gamma"]))
            + str(i % 3),
            supersedes=tuple(draw(st.lists(KEYS, max_size=1))),
            retracts=tuple(draw(st.lists(KEYS, max_size=1))),
            applies_to=tuple(draw(st.lists(st.sampled_from([*AGENTS, "all"]), max_size=2)))
            or (agent,),
            valid_until=draw(st.sampled_from([None, DATE, DATE + dt.timedelta(30)])),
        )))
    return out


@settings(max_examples=150, deadline=None)
@given(journals(), st.integers(0, 120))
def test_every_key_is_live_or_removed_by_a_named_rule(items: list[tuple[str, Entry]],
                                                      days: int) -> None:
    result = run(*items, date=DATE + dt.timedelta(days))
    keys = {e.key for _, e in items}
    assert set(result.facts) | set(result.removed) == keys
    assert not set(result.facts) & set(result.removed)
    assert all(result.removed[k] for k in result.removed)


@settings(max_examples=100, deadline=None)
@given(journals(), st.randoms())
def test_order_of_the_input_does_not_matter(items: list[tuple[str, Entry]], rnd: Any) -> None:
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert run(*items).facts == run(*shuffled).facts


def test_near_duplicates_is_linear_in_shape() -> None:
    facts = run(*[(f"api/journal/{i}.md", entry("api", f"k{i}", i, title=f"word{i} alpha beta"))
                  for i in range(50)]).facts.values()
    assert near_duplicates(facts)  # every title shares "alpha beta"


def _near_by_sets(facts: list[Fact]) -> list[tuple[str, ...]]:
    """What `near_duplicates` means, by word sets themselves (no hashes): keys that share
    a title's word set or that set less one word, of at least two words."""
    by: dict[frozenset[str], set[str]] = {}
    for fact in facts:
        words = frozenset(re.findall(r"\w+", fact.title.casefold()))
        if fact.type == "episodic" or not 2 <= len(words) <= 24:
            continue
        sigs = [words, *(words - {w} for w in words)] if len(words) >= 3 else [words]
        for sig in sigs:
            by.setdefault(sig, set()).add(fact.key)
    return sorted({tuple(sorted(keys)) for keys in by.values() if len(keys) > 1})


WORDS = st.sampled_from(["use", "never", "the", "cache", "layer", "Cache", "prod", "ß",
                         "über", "run", "x1"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(WORDS, max_size=6), st.sampled_from(
    ["semantic", "semantic", "episodic"])), max_size=30))
def test_near_duplicates_are_the_titles_one_word_apart(titles: list[tuple[list[str], str]],
                                                       ) -> None:
    facts = [Fact(key=f"k{i}", title=" ".join(words) + "!", body="b", topic="t", type=kind,
                  confidence=0.8, importance="medium", created=DAY, holders=("api",),
                  path=f"api/journal/{i}.md") for i, (words, kind) in enumerate(titles)]
    assert near_duplicates(facts) == _near_by_sets(facts)
    assert near_duplicates(reversed(facts)) == _near_by_sets(facts)


def _titled(i: int, words: list[str], kind: str, key: str = "") -> Fact:
    return Fact(key=key or f"k{i}", title=" ".join(words) + "!", body="b", topic="t",
                type=kind, confidence=0.8, importance="medium", created=DAY,
                holders=("api",), path=f"api/journal/{i}.md")


_TITLES = st.tuples(st.lists(WORDS, max_size=6), st.sampled_from(["semantic", "semantic",
                                                                  "episodic"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_TITLES, max_size=30),
       st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 40), st.none() | _TITLES),
                                   max_size=8), st.booleans()), min_size=1, max_size=5))
def test_near_duplicates_going_on_from_kept_signatures_are_those_of_every_fact(
        titles: list[tuple[list[str], str]],
        steps: list[tuple[list[tuple[int, tuple[list[str], str] | None]], bool]]) -> None:
    """Signatures kept (packed, or as made) and told which facts were made again (added,
    dropped, retitled, made episodic) give the groups of every fact now."""
    facts = {f.key: f for f in (_titled(i, w, k) for i, (w, k) in enumerate(titles))}
    sigs = Signatures.of(facts.values())
    for changes, pack in steps:
        if pack:
            sigs = Signatures.unpacked(sigs.packed(), "base")
        old = {key: (fact.title, fact.type) for key, fact in facts.items()}
        keys = set()
        for number, title in changes:
            key = f"k{number}"
            keys.add(key)
            if title is None:
                facts.pop(key, None)
            else:
                facts[key] = _titled(number, *title, key=key)
        sigs.go_on({k: old[k] for k in keys if k in old}, facts, keys)
        assert sigs.groups() == near_duplicates(facts.values()) == _near_by_sets(
            list(facts.values()))


def test_a_title_has_the_same_signatures_in_every_process() -> None:
    """Kept signatures are read by later processes: a word's hash is no `hash()`, which
    changes with each process's seed."""
    code = ("from journal_mem.journal.near import signatures; "
            "print(sorted(signatures('Never use the cache in prod', 'semantic')))")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2", "random")}
    here = sorted(signatures("Never use the cache in prod", "semantic"))
    assert seen == {f"{here}\n"} and len(here) == 7


def test_a_correction_that_knew_the_fact_beats_it_whatever_its_clock() -> None:
    fact = ("api/journal/2026-05-01-a.md", entry("api", "k", 10, title="Old",
                                                 applies_to=("api", "docs")))
    fix = ("web/journal/2026-05-01-b.md", entry("web", "new", -3 * 24 * 60, supersedes=("k",),
                                                knew=(fact[0],)))
    result = run(fact, fix)
    assert "k" not in result.facts and result.facts["new"].holders == ("api", "docs", "web")
    # no `knew` (by hand, another tool): naming `k` is proof it saw an entry of `k`
    stranger = ("web/journal/2026-05-01-c.md", entry("web", "new", -3 * 24 * 60,
                                                     supersedes=("k",)))
    assert "k" not in run(fact, stranger).facts
    retraction = ("web/journal/2026-05-01-d.md", entry("web", "gone", -2, retracts=("k",)))
    assert "k" not in run(fact, retraction).facts


def test_naming_a_key_proves_only_its_earliest_entry_was_seen() -> None:
    """A hand retraction with no `knew` comes after the first entry of the key it names;
    a restatement that its clock puts after the retraction still brings the key back."""
    first = ("api/journal/2026-05-01-a.md", entry("api", "k", 10, title="first"))
    gone = ("web/journal/2026-05-01-b.md", entry("web", "x", -60, retracts=("k",)))
    assert "k" not in run(first, gone).facts
    again = ("docs/journal/2026-05-01-c.md", entry("docs", "k", 30, title="again"))
    assert run(first, gone, again).facts["k"].title == "again"


def test_knowing_the_newest_entry_of_a_key_is_knowing_every_older_one() -> None:
    """The writer named only the latest restatement; an older one with a clock far ahead
    sorts before it for the writer, so it does for the distiller too."""
    older = ("api/journal/2026-05-01-a.md", entry("api", "k", 60, title="A"))
    newest = ("api/journal/2026-05-01-b.md", entry("api", "k", 90, title="B",
                                                   knew=(older[0],)))
    fix = ("web/journal/2026-05-01-c.md", entry("web", "gone-k", -60, retracts=("k",),
                                                title="Gone", knew=(newest[0],)))
    result = run(older, newest, fix)
    assert "k" not in result.facts
    again = ("docs/journal/2026-05-01-d.md", entry("docs", "k", -120, title="Back",
                                                   knew=(fix[0],)))
    assert run(older, newest, fix, again).facts["k"].title == "Back"


def test_a_hand_made_cycle_is_broken_by_the_clock_and_stays_deterministic() -> None:
    a = ("api/journal/2026-05-01-a.md", entry("api", "k", 0, title="A",
                                              knew=("api/journal/2026-05-01-b.md",)))
    b = ("api/journal/2026-05-01-b.md", entry("api", "k", 5, title="B", knew=(a[0],)))
    assert run(a, b).facts["k"].title == run(b, a).facts["k"].title == "B"


def test_dropping_a_key_removes_only_its_writer_from_the_holders() -> None:
    fact = ("web/journal/2026-05-01-a.md", entry("web", "k", 0, applies_to=("api", "web")))
    drop = ("api/journal/2026-05-01-b.md", entry("api", "drop-k", 5, drops=("k",),
                                                 knew=(fact[0],)))
    assert run(fact, drop).facts["k"].holders == ("web",)
    last = ("web/journal/2026-05-01-c.md", entry("web", "drop-k2", 6, drops=("k",)))
    assert "k" not in run(fact, drop, last).facts


def test_a_fact_takes_each_field_from_its_entry() -> None:
    """Every field of a fact comes from its own field of the entry (the fold builds facts
    positionally, `fold._make_fact`)."""
    one = entry("api", "k1", title="The title", body="The body", topic="topic-x",
                confidence=0.7, importance="high", tags=("t1",), refs=("src/a.py",),
                source="native:api/x.md", applies_to=("web",))
    fact = run(("api/journal/one.md", one), config=Config(
        distill=Distill(stale_refs="flag"))).facts["k1"]
    assert (fact.key, fact.title, fact.body, fact.topic, fact.type) == (
        "k1", "The title", "The body", "topic-x", one.type)
    assert (fact.confidence, fact.importance, fact.created) == (0.7, "high", one.created)
    assert (fact.holders, fact.path, fact.writers) == (("api", "web"), "api/journal/one.md",
                                                        ("api",))
    assert (fact.tags, fact.refs, fact.source, fact.cited) == (
        ("t1",), ("src/a.py",), "native:api/x.md", one.cited)


@pytest.mark.parametrize("in_a_child", [False, True])
def test_near_duplicates_are_those_of_the_facts_before_their_citations_were_judged(
        monkeypatch: pytest.MonkeyPatch, in_a_child: bool) -> None:
    """A fold left unsettled (`fold(settle=False)`, as a distill folds) finds its
    near-duplicates among its facts as they were when it started finding them; a group
    with a fact its citations then removed (`stale`) is left out whole, in a child or
    not, as a settled fold leaves it out."""
    if in_a_child:
        monkeypatch.setattr(fold_module, "NEAR_FORK_AT", 1)
        monkeypatch.setattr(forked, "children", lambda: 1)
    items = [(f"api/journal/{k}.md", entry("api", k, i, title=title)) for i, (k, title) in
             enumerate([("a", "Use the cache layer"), ("b", "Never use the cache layer"),
                        ("c", "Always use the cache layer")])]
    result = fold([*items], agents=AGENTS, date=DATE, ref_exists=lambda p: True,
                  config=Config(), settle=False)
    assert result.waiting
    result.start()
    fold_module.stale(result, {"c": ["src/gone.py"]}, Config())
    result.settle()
    assert "c" not in result.facts and result.near_duplicates == []
    assert run(*items).near_duplicates == [("a", "b", "c")]
