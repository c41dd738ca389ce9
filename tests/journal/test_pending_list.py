"""The pending entries are kept between calls (the wake-up hook asks on every session
start) and the kept answer is never used once a journal folder or the distill state
changed, nor while one changed too recently to be told apart from the next change."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journal_mem.journal import listing
from journal_mem.journal.entry import build
from journal_mem.journal.files import record
from journal_mem.repo import open_context


def age(repo: Path, seconds: float) -> None:
    """Date the journal folders and the distill state `seconds` back."""
    when = time.time() - seconds
    mem = repo / ".claude" / "agent-memory"
    for path in [*mem.glob("*/journal"), mem / "distill-state.json"]:
        if path.exists():
            os.utime(path, (when, when))


def rels(repo: Path) -> list[str]:
    return [found[2] for found in listing.pending_paths(open_context(str(repo)).layout)]


def test_the_kept_list_follows_new_lessons_and_distills(repo: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    layout = open_context(str(repo)).layout
    record(layout, build(agent="api", topic="ops", title="First pending lesson", body="x"))
    age(repo, 60)
    first = rels(repo)
    assert len(first) == 1
    assert (Path(layout.state_dir) / "cache" / "pending-list.json").exists()

    real = listing.listdir

    def no_listing(folder: str) -> list[str]:
        assert not folder.endswith(os.sep + "journal"), f"listed {folder}"
        return real(folder)  # the outbox is listed every time (it is small)

    monkeypatch.setattr(listing, "listdir", no_listing)
    assert rels(repo) == first  # nothing changed: the kept answer, no listing
    monkeypatch.undo()

    record(layout, build(agent="web", topic="ops", title="Second pending lesson", body="x"))
    assert len(rels(repo)) == 2  # a folder changed just now: listed, not kept
    age(repo, 30)
    assert len(rels(repo)) == 2

    from helpers import jmem

    assert jmem(repo, "distill").returncode == 0
    age(repo, 10)
    assert rels(repo) == []  # the distill state changed: everything is folded now


def test_a_change_within_the_same_tick_is_not_hidden(repo: Path) -> None:
    layout = open_context(str(repo)).layout
    record(layout, build(agent="api", topic="ops", title="First lesson", body="x"))
    assert len(rels(repo)) == 1  # the folder changed just now: this listing is not kept
    folder = repo / ".claude" / "agent-memory" / "api" / "journal"
    stat = os.stat(folder)
    record(layout, build(agent="api", topic="ops", title="Second lesson", body="x"))
    os.utime(folder, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # a coarse clock: same mtime
    assert len(rels(repo)) == 2


def test_a_filed_entry_is_kept_as_a_fresh_reader_judges_it(repo: Path) -> None:
    """What the writer keeps for the hooks (`reader.keep_filed`) is what a reader that
    judges the file itself gets, field for field; a big batch is left to its reader."""
    from journal_mem.journal.cache import Cache
    from journal_mem.journal.reader import KEEP_FILED_MAX, keep_filed, read_lessons

    ctx = open_context(str(repo))
    layout, policy = ctx.layout, ctx.policy
    filed = [record(layout, build(agent="api", topic="ops", title=f"Kept lesson {n}",
                                  body="Body \u00e9 " * n, supersedes=["old-key"] * (n % 2)))
             for n in range(3)]
    filed.append(record(layout, build(agent="web", topic="ops", title="Kept in the outbox",
                                      body="x"), outbox=True))
    keep_filed(layout, policy, [(w.path.split(os.sep)[-3] if not w.outbox else "web", w.path,
                                 w.outbox) for w in filed])
    cache = Path(layout.state_dir) / "cache" / "pending.marshal"
    kept = Cache(str(cache), policy.key, True, entries=False).items
    fresh = {x.rel: x for x in read_lessons(layout, listing.pending_paths(layout), policy,
                                            cache="probe")}
    assert sorted(kept) == sorted(fresh) and len(kept) == 4
    assert any(rel.startswith("outbox/web/") for rel in kept)
    for rel, item in kept.items():
        view = fresh[rel]
        assert item[4] == {name: getattr(view, name) for name in item[4]}, rel
    many = [record(layout, build(agent="api", topic="ops", title=f"Batch lesson {n}",
                                 body="x")) for n in range(KEEP_FILED_MAX + 1)]
    keep_filed(layout, policy, [("api", w.path, False) for w in many])
    assert Cache(str(cache), policy.key, True, entries=False).items == kept


def _fresh(repo: Path) -> list[str]:
    """The pending list computed from nothing kept."""
    cache = Path(open_context(str(repo)).layout.state_dir) / "cache"
    (cache / listing.PENDING_LIST).unlink(missing_ok=True)
    shutil.rmtree(cache / listing.FOLDED_NAMES, ignore_errors=True)
    return rels(repo)


def test_a_lesson_written_lists_its_folder_alone_against_the_names_kept(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One lesson written changes one journal folder: that folder alone is listed again,
    against the folded names kept for the state (the state file is not parsed again)."""
    from helpers import jmem

    layout = open_context(str(repo)).layout
    for agent in ("api", "web"):
        record(layout, build(agent=agent, topic="ops", title=f"Folded lesson of {agent}",
                             body="x"))
    assert jmem(repo, "distill").returncode == 0
    record(layout, build(agent="web", topic="ops", title="Pending lesson of web", body="x"))
    age(repo, 60)
    assert len(rels(repo)) == 1  # kept now: each folder's names, and the folded names
    record(layout, build(agent="api", topic="ops", title="Pending lesson of api", body="x"))
    when = time.time() - 30  # the folder written, aged: the distill state left as it was
    os.utime(repo / ".claude" / "agent-memory" / "api" / "journal", (when, when))
    listed: list[str] = []
    real = listing.listdir

    def recording(folder: str) -> list[str]:
        listed.append(folder)
        return real(folder)

    def no_state(path: str) -> None:
        raise AssertionError(f"parsed {path} again")

    monkeypatch.setattr(listing, "listdir", recording)
    monkeypatch.setattr(listing, "read_state", no_state)
    got = rels(repo)
    monkeypatch.undo()
    assert [f for f in listed if f.endswith(os.sep + "journal")] == [
        str(repo / ".claude" / "agent-memory" / "api" / "journal")]
    assert got == _fresh(repo) and len(got) == 2


def test_the_kept_lists_give_what_a_fresh_listing_gives_at_every_step(repo: Path) -> None:
    """Lessons written to random folders, folders aged or not, distills, a misnamed file:
    after each step the list from what is kept equals the one computed from nothing."""
    import random

    from helpers import jmem

    layout = open_context(str(repo)).layout
    rng = random.Random(7)
    for step in range(14):
        what = rng.choice(["write", "write", "write", "age", "distill", "misnamed"])
        if what == "write":
            record(layout, build(agent=rng.choice(["api", "web"]), topic="ops",
                                 title=f"Step {step} lesson {rng.random():.6f}", body="x"))
        elif what == "age":
            age(repo, rng.choice([5, 60]))
        elif what == "distill":
            assert jmem(repo, "distill").returncode in (0, 1)
        else:
            (repo / ".claude" / "agent-memory" / "web" / "journal" / f"note-{step}.txt"
             ).write_text("not an entry\n")
        if rng.random() < 0.5:
            age(repo, 60)
        kept = rels(repo)
        assert kept == _fresh(repo), (step, what)
        assert rels(repo) == kept


_AGENT = st.sampled_from(["a", "a-b", "a.b", "ab", "b", "api", "api-2", "z"])
_NAME = st.text(alphabet="-.0123456789abz/", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_AGENT, st.sampled_from(["journal", "topics", "journalx"]), _NAME),
                max_size=40))
def test_the_folded_names_by_folder_are_those_the_paths_name(
        paths: list[tuple[str, str, str]]) -> None:
    """Agent names that are prefixes of one another, names with a slash, and paths of no
    journal folder: each agent gets exactly the names under its own `journal/`."""
    rels = tuple(sorted({f"{agent}/{folder}/{name}" for agent, folder, name in paths}))
    want: dict[str, set[str]] = {}
    for rel in rels:
        agent, sep, name = rel.partition("/journal/")
        if sep:
            want.setdefault(agent, set()).add(name)
    assert listing._by_folder(rels) == {a: frozenset(n) for a, n in want.items()}


_OFFSETS = st.sampled_from([0, 14 * 60, -12 * 60, 5 * 60 + 30, -(3 * 60 + 30), 45])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(
    st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(2100, 1, 1)),
    _OFFSETS, st.sampled_from("abc")), min_size=1, max_size=12))
def test_a_pending_view_is_ordered_by_its_time_as_its_entry_is_by_its_datetime(
        stamps: list[tuple[dt.datetime, int, str]]) -> None:
    """The hooks order their views by `PendingFile.when` (`created.timestamp()`, no
    `datetime` needed), the fold its entries by `created`: the same order, equal times
    included (then the path decides), whatever each entry's UTC offset."""
    from types import SimpleNamespace

    from journal_mem.journal.order import causal_order

    items = []
    for n, (naive, minutes, name) in enumerate(stamps):
        created = naive.replace(tzinfo=dt.timezone(dt.timedelta(minutes=minutes)))
        if n % 3 == 2:  # the same instant as an earlier one, written at another offset
            created = items[n - 1][1].created.astimezone(dt.UTC)
        items.append((f"{name}/journal/{n:02d}.md", SimpleNamespace(
            key=f"k{n}", knew=(), supersedes=(), retracts=(), created=created,
            when=created.timestamp())))
    by_datetime = causal_order(items)
    assert causal_order(items, clock=lambda x: x.when) == by_datetime
