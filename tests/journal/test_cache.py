"""The cache's own constructors: an entry built from its cached field values, and a fact
kept as its field values, are the very objects a parse and a fold make."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fold import journals, run

from journal_mem.journal import cache
from journal_mem.journal import lazy as lazy_module
from journal_mem.journal.entry import SLOTS, Entry, FrozenEntryError
from journal_mem.journal.fold import FACT_FIELDS, Fact, fact_of, fact_row
from journal_mem.journal.lazy import LazyEntry, row_of

HOLDERS = FACT_FIELDS.index("holders")


def _values(entry: Entry) -> list[object]:
    return [getattr(entry, name) for name in SLOTS]


@settings(max_examples=60, deadline=None)
@given(journals())
def test_a_cached_entry_is_the_entry_its_fields_make(items: list[tuple[str, Entry]]) -> None:
    for _, entry in items:
        built = cache.shared_entry(*_values(entry))
        assert type(built) is Entry
        assert built == entry and hash(built) == hash(entry)
        assert _values(built) == _values(entry)
        assert cache.share(entry) == entry


def test_a_cached_entry_shares_its_repetitive_fields_and_stays_frozen() -> None:
    day = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
    one = cache.shared_entry(*_values(Entry(agent="api", key="k1", title="One", topic="x",
                                            created=day, applies_to=("api", "web"))))
    two = cache.shared_entry(*_values(Entry(agent="api", key="k2", title="Two", topic="x",
                                            created=day, applies_to=("api", "web"))))
    assert one.applies_to is two.applies_to and one.topic is two.topic
    try:
        one.title = "changed"  # type: ignore[misc]
    except FrozenEntryError:
        pass
    else:
        raise AssertionError("a cached entry must stay frozen")


def test_a_class_with_post_init_is_built_by_its_own_init() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        agent: str
        size: int

        def __post_init__(self) -> None:
            if self.size < 0:
                raise ValueError("negative")

    build = cache.builder(Checked, ["agent", "size"], frozenset({"agent"}))
    assert build("api", 3) == Checked("api", 3)
    try:
        build("api", -1)
    except ValueError:
        pass
    else:
        raise AssertionError("the builder skipped __post_init__")


def test_entries_come_back_from_a_cache_file_whole(tmp_path: object) -> None:
    items = {f"a/{i}": (1, 2, 3, b"d", e, False) for i, (_, e) in enumerate(
        [("p", Entry(agent="api", key=f"k{i}", title=f"T {i}", topic="t",
                     created=dt.datetime(2026, 5, 1, i, tzinfo=dt.UTC),
                     supersedes=("old",), tags=("a", "b"))) for i in range(5)])}
    path = f"{tmp_path}/entries.pickle"
    cache.dump(path, "g1", ("key",), items, entries=True)
    assert cache.load(path, ("key",)) == ("g1", items)
    assert cache.load(path, ("other",)) == ("", {})


@settings(max_examples=60, deadline=None)
@given(journals())
def test_a_kept_fact_is_the_fact(items: list[tuple[str, Entry]]) -> None:
    for fact in run(*items).facts.values():
        row = fact_row(fact)
        assert row == tuple(getattr(fact, name) for name in Fact._fields)
        assert type(row) is tuple  # kept without its class
        back = fact_of(pickle.loads(pickle.dumps(row)))
        assert back == fact and type(back) is Fact


def test_the_last_fold_is_kept_under_its_signature(tmp_path: object) -> None:
    fact = Fact(key="k", title="T", body="b", topic="t", type="semantic", confidence=0.8,
                importance="medium", created=dt.datetime(2026, 5, 1, tzinfo=dt.UTC),
                holders=("api",), path="api/journal/x.md", refs=("src/a.py",))
    cache.FoldCache(str(tmp_path)).save("sig", {"k": fact_row(fact)})
    kept = cache.FoldCache(str(tmp_path)).facts("sig")
    assert kept is not None and fact_of(kept["k"]) == fact
    assert cache.FoldCache(str(tmp_path)).facts("other") is None


def _row(key: str, holders: tuple[str, ...], title: str = "T") -> tuple[object, ...]:
    return fact_row(Fact(key=key, title=title, body="b", topic="t", type="semantic",
                         confidence=0.8, importance="medium",
                         created=dt.datetime(2026, 5, 1, tzinfo=dt.UTC), holders=holders,
                         path=f"api/journal/{key}.md"))


def test_the_fold_cache_keeps_a_small_change_as_a_delta_of_its_base(tmp_path: object) -> None:
    state = str(tmp_path)
    base = {f"k{i}": _row(f"k{i}", ("api",)) for i in range(2000)}
    cache.FoldCache(state).save("one", base)
    after = dict(base)
    after["k1"] = _row("k1", ("api", "web"))
    after["new"] = _row("new", ("web",))
    del after["k2"]
    cache.FoldCache(state).save("two", after)
    assert os.path.exists(cache.fold_path(state) + ".delta")
    kept = cache.FoldCache(state)
    assert kept.gen == "one" and kept.facts("one") == base
    assert kept.facts("two") == after
    # the same signature saved again (HEAD moved, nothing new folded): the newest wins
    again = dict(after)
    del again["k3"]
    cache.FoldCache(state).save("two", again)
    assert cache.FoldCache(state).facts("two") == again
    assert cache.FoldCache(state).facts("three") is None
    # a delta under its base's own signature: the distill after a commit that removed
    # cited code folds the same lessons on the same date to fewer facts
    cache.FoldCache(state).save("one", after)
    assert cache.FoldCache(state).facts("one") == after


def test_the_fold_cache_rewrites_its_base_when_the_change_is_large(tmp_path: object) -> None:
    state = str(tmp_path)
    cache.FoldCache(state).save("one", {f"k{i}": _row(f"k{i}", ("api",)) for i in range(5)})
    cache.FoldCache(state).save("two", {"k0": _row("k0", ("api",))})
    assert os.path.exists(cache.fold_path(state) + ".delta")
    big = {f"n{i}": _row(f"n{i}", ("web",)) for i in range(1200)}
    cache.FoldCache(state).save("three", big)
    assert not os.path.exists(cache.fold_path(state) + ".delta")
    kept = cache.FoldCache(state)
    assert kept.gen == "three" and kept.facts("three") == big and kept.facts("two") is None


def test_a_delta_of_another_base_is_never_applied(tmp_path: object) -> None:
    state = str(tmp_path)
    cache.FoldCache(state).save("one", {"a": _row("a", ("api",))})
    cache.FoldCache(state).save("two", {"a": _row("a", ("web",))})
    delta = cache.fold_path(state) + ".delta"
    with open(delta, "rb") as fh:
        kept_delta = fh.read()
    other = {"rows": {"b": _row("b", ("api",))}, "token": "t-other"}
    cache.dump(cache.fold_path(state), "other", cache._FOLD, other, entries=False)
    with open(delta, "wb") as fh:  # left by a distill killed between the two writes
        fh.write(kept_delta)
    kept = cache.FoldCache(state)
    assert kept.facts("two") is None and kept.facts("other") == {"b": _row("b", ("api",))}


def test_each_save_of_the_fold_gets_a_token_naming_those_rows_only(tmp_path: object) -> None:
    """Renderings name the fold they came from by its token: one signature saved twice
    (the same lessons after a commit removed the code they cite) gets two tokens, and a
    token gives back exactly the rows saved with it, or nothing once they are gone."""
    state = str(tmp_path)
    base = {f"k{i}": _row(f"k{i}", ("api",)) for i in range(2000)}
    first = cache.FoldCache(state).save("one", base)
    fewer = {k: v for k, v in base.items() if k != "k7"}
    second = cache.FoldCache(state).save("one", fewer)  # a delta under the same signature
    assert first and second and first != second
    kept = cache.FoldCache(state)
    assert kept.rows_of(first) == base and kept.rows_of(second) == fewer
    assert kept.rows_of("") is None and kept.rows_of("unknown") is None
    third = kept.save("two", {"n": _row("n", ("web",))})  # a large change: a new base
    kept = cache.FoldCache(state)
    assert kept.rows_of(third) == {"n": _row("n", ("web",))}
    assert kept.rows_of(first) is None and kept.rows_of(second) is None


def test_a_fold_that_cannot_be_kept_gives_no_token(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "cache").write_text("a file where the cache directory would be")
    assert cache.FoldCache(str(state)).save("one", {"a": _row("a", ("api",))}) == ""


_ZONES = st.sampled_from([dt.UTC, None, dt.timezone(dt.timedelta(hours=2)),
                          dt.timezone(dt.timedelta(hours=-5, minutes=-30), "EST-ish")])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.datetimes(min_value=dt.datetime(1, 1, 2),
                                       max_value=dt.datetime(9999, 12, 30)), _ZONES,
                          st.sampled_from([0, 1])), max_size=20))
def test_a_cached_datetime_comes_back_as_it_was(tmp_path_factory: Any,
                                                values: list[tuple[dt.datetime, Any, int]]) -> None:
    """A UTC datetime is cached as its state alone (`_datetime_reduce`); every datetime,
    UTC, naive or at another offset, with either `fold`, comes back equal, with the same
    offset, the same text and the same fold, and a UTC one on the shared `UTC`."""
    path = str(tmp_path_factory.mktemp("dates") / "dates.pickle")
    dates = [d.replace(tzinfo=zone, fold=fold) for d, zone, fold in values]
    cache.dump(path, "gen", ("dates",), {"dates": dates}, entries=False)
    back = cache.load(path, ("dates",))[1]["dates"]
    for was, now in zip(dates, back, strict=True):
        assert now == was and now.isoformat() == was.isoformat() and now.fold == was.fold
        assert now.utcoffset() == was.utcoffset() and now.tzname() == was.tzname()
        assert (now.tzinfo is dt.UTC) == (was.tzinfo is dt.UTC)


def test_utc_dates_are_cached_without_their_timezone(tmp_path: Path) -> None:
    """100k `created` dates each pickled with its own `timezone` took 210 ms to load and
    8.8 MB; as their state alone, 90 ms and 3 MB."""
    path = str(tmp_path / "dates.pickle")
    dates = [dt.datetime(2026, 5, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=i) for i in range(50)]
    cache.dump(path, "gen", ("dates",), {"dates": dates}, entries=False)
    data = (tmp_path / "dates.pickle").read_bytes()
    assert globals_named(data) == {("ext", cache.EXTENSIONS["_at_utc"]): 50}
    assert b"timezone" not in data
    assert cache.load(path, ("dates",))[1]["dates"] == dates


def globals_named(data: bytes) -> dict[tuple[str, object], int]:
    """How often a pickle names each global: by module and name, or by extension code."""
    import pickletools

    named: dict[tuple[str, object], int] = {}
    strings: list[str] = []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE"):
            strings = [*strings[-1:], str(arg)]
        found = (("name", tuple(strings)) if op.name == "STACK_GLOBAL" else
                 ("ext", arg) if op.name.startswith("EXT") else None)
        if found is not None:
            named[found] = named.get(found, 0) + 1
    return named


def test_an_entry_cache_names_lazy_entry_by_its_extension_code_and_reads_older_ones(
        tmp_path: Path) -> None:
    """Each entry names the function that makes it again: by a two-byte extension code,
    looked up once per load, not by module and name, looked up per entry. A cache written
    with the names (before) loads alike."""
    items = {f"a/{i}": (1, 2, 3, b"d", Entry(agent="api", key=f"k{i}", title=f"T {i}",
                                             topic="t", created=dt.datetime(
                                                 2026, 5, 1, i, tzinfo=dt.UTC)), False)
             for i in range(6)}
    path = str(tmp_path / "entries.pickle")
    cache.dump(path, "g", ("key",), items, entries=True)
    assert globals_named(Path(path).read_bytes()) == {("ext", 241): 6}
    assert cache.load(path, ("key",)) == ("g", items)
    import copyreg

    older = str(tmp_path / "older.pickle")
    for name, code in cache.EXTENSIONS.items():
        copyreg.remove_extension(cache.__name__, name, code)
    try:
        cache.dump(older, "g", ("key",), items, entries=True)
    finally:
        for name, code in cache.EXTENSIONS.items():
            copyreg.add_extension(cache.__name__, name, code)
    assert globals_named(Path(older).read_bytes()) == {
        ("name", ("journal_mem.journal.cache", "lazy_entry")): 6}
    assert cache.load(older, ("key",)) == ("g", items)


@st.composite
def fold_rows(draw: st.DrawFn) -> dict[str, tuple[Any, ...]]:
    """Rows of a fold over a few keys: each key missing, or held by some agents."""
    rows = {}
    for key in ("k1", "k2", "k3", "k4", "k5", "k6"):
        holders = draw(st.sampled_from([None, ("api",), ("web",), ("api", "web")]))
        if holders is not None:
            rows[key] = _row(key, holders)
    return rows


@settings(max_examples=200, deadline=None)
@given(st.lists(fold_rows(), min_size=2, max_size=6), st.lists(st.booleans(), min_size=6,
                                                               max_size=6))
def test_a_save_told_what_changed_keeps_what_a_save_that_compares_all_keeps(
        folds: list[dict[str, tuple[Any, ...]]], told: list[bool]) -> None:
    """`save(since=(rows it gave, changed_rows))` compares only those keys with the base:
    across bases, deltas and deltas of deltas, what it keeps reads back as a save that
    compares every row keeps it, under every signature and token."""
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        tokens: list[tuple[str, str]] = []
        for i, rows in enumerate(folds):
            sig = f"s{i % 3}"
            compared = cache.FoldCache(one)
            a = compared.save(sig, rows)
            smart = cache.FoldCache(two)
            before = smart.facts(f"s{(i - 1) % 3}") if i else None
            if before is None or not told[i]:
                b = smart.save(sig, rows)
            else:
                b = smart.save(sig, rows, (before, cache.changed_rows(before, rows)))
            tokens.append((a, b))
            assert os.path.exists(cache.fold_path(one) + ".delta") == os.path.exists(
                cache.fold_path(two) + ".delta")
            x, y = cache.FoldCache(one), cache.FoldCache(two)
            for s in ("s0", "s1", "s2"):
                assert x.facts(s) == y.facts(s)
            for a, b in tokens:
                assert x.rows_of(a) == y.rows_of(b)
            assert y.facts(sig) == rows


def test_rows_a_fold_cache_gives_twice_are_one_dict(tmp_path: Path) -> None:
    """`facts` and `rows_of` of one save give the same dict: the distill compares the new
    fold with it once (`changed_rows`), for the report, the render and the next save."""
    state = str(tmp_path)
    base = {f"k{i}": _row(f"k{i}", ("api",)) for i in range(50)}
    cache.FoldCache(state).save("one", base)
    token = cache.FoldCache(state).save("two", {**base, "k1": _row("k1", ("web",))})
    kept = cache.FoldCache(state)
    assert os.path.exists(cache.fold_path(state) + ".delta")
    assert kept.facts("two") is kept.rows_of(token)
    assert cache.changed_rows(base, kept.rows_of(token) or {}) == {"k1"}
    assert cache.changed_rows({}, base) == set(base)


def test_a_fold_cache_base_keeps_a_value_its_rows_share_once(tmp_path: Path) -> None:
    """Rows that share a value (a topic, an agent's name) load back sharing it: 56k rows
    at 100k lessons load as fewer objects, in half the time."""
    state = str(tmp_path)
    holders = ("api", "web")
    rows = {f"k{i}": _row(f"k{i}", holders) for i in range(3)}
    cache.FoldCache(state).save("one", rows)
    kept = cache.FoldCache(state).facts("one")
    assert kept == rows and kept is not None
    assert kept["k0"][HOLDERS] is kept["k2"][HOLDERS]


# --- entries the cache gives back lazily (`journal/lazy.py`) ----------------------------


def _lazy_copies(items: list[tuple[str, Entry]], tmp: str) -> list[Entry]:
    """The entries of `items` as a cache file gives them back."""
    path = os.path.join(tmp, "entries.pickle")
    cache.dump(path, "g", ("k",), {rel: (1, 2, 3, b"d", e, False) for rel, e in items},
               entries=True)
    return [item[4] for item in cache.load(path, ("k",))[1].values()]


@settings(max_examples=60, deadline=None)
@given(journals())
def test_an_entry_the_cache_gives_back_is_made_when_first_read(
        items: list[tuple[str, Entry]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        back = _lazy_copies(items, tmp)
    for (_, entry), lazy in zip(items, back, strict=True):
        assert isinstance(lazy, LazyEntry) and isinstance(lazy, Entry)
        assert row_of(lazy) is not None  # nothing read yet: only its bytes
        assert lazy == entry and entry == lazy and hash(lazy) == hash(entry)
        assert _values(lazy) == _values(entry) and lazy.holders_hint == entry.holders_hint
        assert pickle.loads(pickle.dumps(lazy)) == entry
        assert lazy.replace(title="other") == entry.replace(title="other")
        assert cache.share(lazy) == entry


def test_a_lazy_entry_reads_its_bytes_once_and_writes_them_back_as_they_came(
        tmp_path: Path, monkeypatch: Any) -> None:
    day = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
    items = [(f"api/journal/{i}.md", Entry(agent="api", key=f"k{i}", title=f"T {i}",
                                           topic="t", created=day, tags=("a",)))
             for i in range(3)]
    back = _lazy_copies(items, str(tmp_path))
    made = []
    fill = lazy_module._fill
    monkeypatch.setattr(lazy_module, "_fill", lambda e: (made.append(e), fill(e)))
    rows = [row_of(entry) for entry in back]
    assert back[0].title == "T 0" and back[0].key == "k0" and back[0].tags == ("a",)
    assert made == [back[0]]  # one entry made, once
    assert not hasattr(back[1], "nothing") and made == [back[0]]
    with pytest.raises(FrozenEntryError):
        back[1].title = "changed"  # type: ignore[misc]
    # written back as the bytes it came from, read or not
    assert [cache.entry_bytes(entry) for entry in back] == rows
    assert all(cache.entry_bytes(e) is row for e, row in zip(back, rows, strict=True))
    assert made == [back[0]]
    again = _lazy_copies(list(zip([p for p, _ in items], back, strict=True)), str(tmp_path))
    assert made == [back[0]] and again == [e for _, e in items]
    # two with equal fields share the repetitive ones, as `shared_entry` does
    assert again[0].topic is again[1].topic is back[0].topic


def test_a_distill_of_a_few_new_lessons_makes_few_of_the_journal_s_entries(
        tmp_path: Path, monkeypatch: Any) -> None:
    """A distill that goes on from the last fold (its replay and its rules) makes only the
    entries of the keys the new lessons touch, of 400."""
    from fixtures.generate import generate, lessons, write_lessons
    from journal_mem.distill import distiller
    from journal_mem.gitops import indexlock
    from journal_mem.journal import fold as fold_module
    from journal_mem.repo import open_context

    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    dest = generate(tmp_path / "repo", 4, 400, seed=3)
    ctx = open_context(str(dest))
    assert distiller.distill(ctx, distiller.Options()).status == "distilled"
    names = [f"agent-{i:02d}" for i in range(4)]
    now = dt.datetime.now(dt.UTC)
    fresh = [e.replace(created=now - dt.timedelta(seconds=10 - i))
             for i, e in enumerate(lessons(names, 5, seed=50))]
    write_lessons(dest, fresh, start=10**6)
    made: list[Entry] = []
    fill = lazy_module._fill
    monkeypatch.setattr(lazy_module, "_fill", lambda e: (made.append(e), fill(e)))
    judged: list[int] = []
    go_on = fold_module.go_on

    def counted(*args: Any) -> Any:
        redo = go_on(*args)
        judged.append(-1 if redo is None else len(redo))
        return redo

    monkeypatch.setattr(fold_module, "go_on", counted)
    out = distiller.distill(open_context(str(dest)), distiller.Options())
    assert out.status == "distilled" and len(out.new_lessons) == 5
    assert judged and 0 < judged[0] <= 20
    assert 0 < len(made) <= 20, len(made)
    monkeypatch.undo()
    check = distiller.distill(open_context(str(dest)), distiller.Options(check=True,
                                                                         rebuild=True))
    assert check.status == "unchanged" and check.exit_code == 0


def test_entries_parsed_now_let_go_of_their_pickles_once_the_cache_holds_them(
        tmp_path: Path) -> None:
    """An entry parsed by `read_journal` is kept by the cache as its pickle and in memory
    as its fields: the pickle is let go once saved. An entry the cache gave back keeps
    its bytes (they are all it has), and both read back as what a parse gives."""
    from fixtures.generate import generate
    from journal_mem.journal import reader
    from journal_mem.repo import open_context

    dest = generate(tmp_path / "repo", 3, 12, seed=4)
    ctx = open_context(str(dest))
    first = reader.read_journal(ctx.layout, ctx.policy)
    parsed = dict(reader.read_journal(ctx.layout, ctx.policy, use_cache=False).entries)
    assert len(first.entries) == 12 and first.parsed == 12
    assert all(row_of(entry) is None for _, entry in first.entries)  # made, then let go
    assert all(pickle.loads(pickle.dumps(e)) == parsed[rel] for rel, e in first.entries)
    edited = dest / ".claude" / "agent-memory" / first.entries[0][0]
    edited.write_bytes(edited.read_bytes() + b"\nEdited here.\n")
    second = reader.read_journal(ctx.layout, ctx.policy)
    assert second.parsed == 1
    rows = {rel: row_of(entry) for rel, entry in second.entries}
    assert rows[first.entries[0][0]] is None  # parsed again: let go
    assert sum(row is not None for row in rows.values()) == 11  # from the cache: kept
    again = dict(reader.read_journal(ctx.layout, ctx.policy, use_cache=False).entries)
    assert {rel: _values(e) for rel, e in second.entries} == {
        rel: _values(e) for rel, e in again.items()}
    third = reader.read_journal(ctx.layout, ctx.policy)  # the cache, saved with them
    assert third.parsed == 0 and dict(third.entries) == again


def test_a_journal_knows_the_paths_of_its_valid_entries(tmp_path: Path) -> None:
    """`path in journal` is true exactly for its valid entries: by the items' verdicts
    when it was read whole, by its entries when some were read one by one (what the
    distill's commit asks of the paths git lists)."""
    from fixtures.generate import generate
    from journal_mem.journal import reader
    from journal_mem.repo import open_context

    dest = generate(tmp_path / "repo", 3, 12, seed=6)
    root = dest / ".claude" / "agent-memory"
    bad = root / "agent-00" / "journal" / "2026-01-02-not-a-lesson.md"
    bad.write_text("---\nschema: 1\n---\n")  # frontmatter without a lesson in it
    ctx = open_context(str(dest))
    for use_cache in (True, True, False):  # parsed, then from the cache, then without it
        journal = reader.read_journal(ctx.layout, ctx.policy, use_cache=use_cache)
        valid = [rel for rel, _ in journal.entries]
        invalid = "agent-00/journal/2026-01-02-not-a-lesson.md"
        assert len(valid) == 12 and invalid in journal.invalid
        assert all(rel in journal for rel in valid)
        assert invalid not in journal
        assert "agent-00/journal/2026-01-03-never-written.md" not in journal
        assert None not in journal and valid[0].encode() not in journal
    some = reader.read_entries(ctx.layout, ctx.policy, [valid[0], invalid, valid[1]])
    assert not some.items and [rel for rel, _ in some.entries] == [valid[0], valid[1]]
    assert valid[0] in some and valid[1] in some
    assert invalid not in some and valid[2] not in some


def test_a_file_rewritten_with_the_same_bytes_keeps_its_verdict(tmp_path: Path) -> None:
    """A new stat over the same bytes (touched, checked out again) is read, not parsed:
    its digest is its cached item's. Bytes another file holds are no such match: the
    digest covers the path (a hand-written entry's agent and date come from it)."""
    import os
    import shutil

    from fixtures.generate import generate
    from journal_mem.journal import reader
    from journal_mem.repo import open_context

    dest = generate(tmp_path / "repo", 3, 12, seed=5)
    ctx = open_context(str(dest))
    first = reader.read_journal(ctx.layout, ctx.policy)
    rels = [rel for rel, _ in first.entries]
    root = dest / ".claude" / "agent-memory"
    touched = root / rels[0]
    os.utime(touched, ns=(1, 1))  # a stat the cache never saw
    data = (root / rels[1]).read_bytes()
    (root / rels[1]).unlink()
    (root / rels[1]).write_bytes(data)  # a new inode, the same bytes
    copied = root / rels[2].replace(".md", "-copy.md")
    shutil.copyfile(root / rels[2], copied)  # the bytes of another file: parsed
    second = reader.read_journal(ctx.layout, ctx.policy)
    assert second.parsed == 1
    assert dict(second.entries) == dict(
        reader.read_journal(ctx.layout, ctx.policy, use_cache=False).entries)


def test_each_delta_keeps_what_the_deltas_before_it_held(tmp_path: Path) -> None:
    """A journal read compares with the cache's base only the files it judged and those
    of the delta it loaded (`Cache.save(made=...)`): a file judged by a read before is
    in every later delta, never parsed again."""
    import shutil

    from fixtures.generate import generate
    from journal_mem.journal import reader
    from journal_mem.repo import open_context

    dest = generate(tmp_path / "repo", 3, 12, seed=5)
    ctx = open_context(str(dest))
    rels = [rel for rel, _ in reader.read_journal(ctx.layout, ctx.policy).entries]
    root = dest / ".claude" / "agent-memory"
    for n in range(3):  # one new file each time: a delta of one, then two, then three
        shutil.copyfile(root / rels[n], root / rels[n].replace(".md", f"-copy{n}.md"))
        assert reader.read_journal(ctx.layout, ctx.policy).parsed == 1
    last = reader.read_journal(ctx.layout, ctx.policy)
    assert last.parsed == 0 and len(last.entries) == len(rels) + 3
    assert dict(last.entries) == dict(
        reader.read_journal(ctx.layout, ctx.policy, use_cache=False).entries)


def test_an_item_gone_since_the_base_does_not_come_back_from_it(tmp_path: Path) -> None:
    """A save that only adds or changes items is a delta over the base; one where an item
    went is a new base, so loading never gives the gone item back."""
    from journal_mem.journal.cache import Cache

    path = str(tmp_path / "items.pickle")
    items = {f"a/journal/{i:04d}.md": (i, i, i, b"d", None, False) for i in range(50)}
    Cache(path, "k", True, entries=False).save(items)  # no base yet: the base
    grown = Cache(path, "k", True, entries=False)
    grown.save({**grown.items, "a/journal/new.md": (1, 1, 1, b"n", None, False)})
    assert os.path.exists(path + ".delta")  # one more item: a delta
    shrunk = Cache(path, "k", True, entries=False)
    kept = dict(shrunk.items)
    del kept["a/journal/0007.md"]
    shrunk.save(kept)
    assert not os.path.exists(path + ".delta")  # one gone: a new base
    assert Cache(path, "k", True, entries=False).items == kept


def test_held_cache_writes_wait_for_start_and_keep_their_order(tmp_path: Path) -> None:
    """While `HeldWrites` is entered, a save writes nothing until `start`; the writes held
    then run in their order in a thread, those held after it once that thread is done,
    and all are on disk when the block ends. A save's token is given at once."""
    import threading

    ran: list[tuple[str, bool]] = []
    state = tmp_path / "state"
    fold = cache.FoldCache(str(state))
    with cache.HeldWrites() as held:
        token = fold.save("one", {"a": _row("a", ("api",))})
        cache.write(lambda: ran.append(("first", threading.current_thread() is main)))
        assert token and not (state / "cache" / "fold.pickle").exists()
        main = threading.current_thread()
        held.start()
        cache.write(lambda: ran.append(("after start", threading.current_thread() is main)))
    assert ran == [("first", False), ("after start", True)]
    assert held.writer == -1  # a thread made later with the writer's ident writes nothing now
    assert cache.FoldCache(str(state)).rows_of(token) == {"a": _row("a", ("api",))}


def test_a_held_write_that_fails_leaves_a_cache_slower_and_others_written(
        tmp_path: Path) -> None:
    """An `OSError` of a held write is what it always was (only slower next time); the
    writes after it run; any other failure is raised where the block ends."""
    state = tmp_path / "state"
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "cache").write_text("a file where the cache directory would be")
    with cache.HeldWrites() as held:
        cache.FoldCache(str(tmp_path / "blocked")).save("one", {"a": _row("a", ("api",))})
        token = cache.FoldCache(str(state)).save("two", {"b": _row("b", ("web",))})
        held.start()
    assert cache.FoldCache(str(state)).rows_of(token) == {"b": _row("b", ("web",))}
    with pytest.raises(ZeroDivisionError), cache.HeldWrites() as held:
        cache.write(lambda: 1 / 0)
        held.start()
    with cache.HeldWrites():
        pass  # nothing held is nothing written
    assert not cache._HELD


def test_a_whole_journal_read_in_a_distill_lets_go_of_its_pickles_at_once(
        tmp_path: Path) -> None:
    """Under a distill's held writes a new base of the entry cache is written at once, so
    the entries parsed let go of their pickles before the fold (a whole journal's: ~40 MB
    at 100k lessons); a delta is held, and its few new entries let go once it is written."""
    from fixtures.generate import generate
    from journal_mem.journal import reader
    from journal_mem.repo import open_context

    dest = generate(tmp_path / "repo", 3, 12, seed=4)
    ctx = open_context(str(dest))
    with cache.HeldWrites() as held:
        first = reader.read_journal(ctx.layout, ctx.policy)
        assert first.parsed == 12 and not held.ops
        assert all(row_of(entry) is None for _, entry in first.entries)
    edited = dest / ".claude" / "agent-memory" / first.entries[0][0]
    edited.write_bytes(edited.read_bytes() + b"\nEdited here.\n")
    with cache.HeldWrites() as held:
        second = reader.read_journal(ctx.layout, ctx.policy)
        assert second.parsed == 1 and len(held.ops) == 2  # the delta, then letting go
        rows = {rel: row_of(entry) for rel, entry in second.entries}
        assert rows[first.entries[0][0]] is not None
    assert row_of(dict(second.entries)[first.entries[0][0]]) is None
    assert reader.read_journal(ctx.layout, ctx.policy).parsed == 0


def test_the_digest_kept_with_the_entry_cache_is_that_of_every_file_read(
        tmp_path: Path) -> None:
    """A journal read gives the digest of its files (`Journal.digest`, kept with the
    entry cache and changed by the files judged again): after new files (a delta), an
    edit, the same bytes touched, an invalid file, a symlink, a removed file (a new
    base), and a cache written without a digest, it is the XOR of every file's own."""
    import shutil

    from fixtures.generate import generate
    from journal_mem.journal import reader
    from journal_mem.repo import open_context

    dest = generate(tmp_path / "repo", 3, 12, seed=7)
    ctx = open_context(str(dest))
    root = dest / ".claude" / "agent-memory"
    path = os.path.join(cache.cache_dir(ctx.layout.state_dir), "entries.pickle")

    def read() -> reader.Journal:
        journal = reader.read_journal(ctx.layout, ctx.policy)
        assert journal.digest == cache.xor_of(item[3] for item in journal.items.values())
        return journal

    rels = [rel for rel, _ in read().entries]
    shutil.copyfile(root / rels[0], root / rels[0].replace(".md", "-copy.md"))
    assert read().parsed == 1 and os.path.exists(path + ".delta")  # one new file: a delta
    edited = root / rels[1]
    edited.write_text(edited.read_text().replace("\n---\n", "\n---\nOne more line.\n", 1))
    read()
    os.utime(root / rels[2], ns=(1, 1))  # the same bytes, another stat
    read()
    (root / rels[3]).write_text("no frontmatter and no title line\x00")
    assert rels[3] in read().invalid
    (root / rels[4]).unlink()
    (root / rels[4]).symlink_to(root / rels[5])
    read()
    (root / rels[6]).unlink()
    read()
    assert not os.path.exists(path + ".delta")  # a file gone: a new base
    with open(path, "rb") as fh:  # as a journal-mem that kept no digest wrote it
        data = pickle.load(fh)
    del data["digest"]
    with open(path, "wb") as fh:
        pickle.dump(data, fh)
    shutil.copyfile(root / rels[7], root / rels[7].replace(".md", "-copy.md"))
    assert cache.Cache(path, ctx.policy.key, True, entries=True).digest is None
    kept = read().digest
    assert cache.Cache(path, ctx.policy.key, True, entries=True).digest == kept
    assert reader.read_journal(ctx.layout, ctx.policy, use_cache=False).digest == kept


def _titled(key: str, title: str) -> Any:
    return dataclasses.make_dataclass("T", ["key", "title", "type"])(key, title, "semantic")


def test_kept_signatures_go_on_by_a_delta_and_are_dropped_past_a_fifth(tmp_path: Path) -> None:
    """`cache.NearStore`: a base under its replay's token, then deltas naming it; a save of
    other signatures, or of more changes than a fifth of the base, leaves no base to
    go on from."""
    from journal_mem.journal.near import Signatures

    facts = {f"k{i}": _titled(f"k{i}", f"w{i}a w{i}b w{i}c") for i in range(1200)}
    facts["dup"] = _titled("dup", "w7a w7b w7c")
    store = cache.NearStore(str(tmp_path))
    store.save(Signatures.of(facts.values()), "r1")
    found = cache.NearStore(str(tmp_path)).load("r1")
    assert found is not None and found[0] == "r1"
    sigs = Signatures.unpacked(found[1], found[0])
    assert sigs.groups() == [("dup", "k7")]
    assert cache.NearStore(str(tmp_path)).load("r0") is None  # another replay's: none
    # a few facts retitled: a delta over the base, read back as the signatures now
    old = {k: (facts[k].title, "semantic") for k in ("k1", "k2")}
    facts["k1"], facts["k2"] = _titled("k1", "w3a w3b w3c"), _titled("k2", "x")
    sigs.go_on(old, facts, ["k1", "k2"])
    again = cache.NearStore(str(tmp_path))
    again.load("r1")
    again.save(sigs, "r2")
    assert os.path.exists(cache.near_path(str(tmp_path)) + ".delta")
    found = cache.NearStore(str(tmp_path)).load("r2")
    assert found is not None and found[0] == "r1"
    assert Signatures.unpacked(found[1], found[0]).groups() == [("dup", "k7"), ("k1", "k3")]
    # past a fifth of the base (and 1,000) in changes: nothing is kept
    grown = Signatures.unpacked(found[1], found[0])
    was = {k: (facts[k].title, "semantic") for k in facts}
    facts = {k: _titled(k, f"deploy {f.title}") for k, f in facts.items()}
    grown.go_on(was, facts, list(facts))
    last = cache.NearStore(str(tmp_path))
    last.load("r2")
    last.save(grown, "r3")
    assert not os.path.exists(cache.near_path(str(tmp_path)))
    assert cache.NearStore(str(tmp_path)).load("r3") is None
