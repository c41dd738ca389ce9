"""Judging many entry files with forked children (`journal.forked`, `reader.judge_later`):
the same verdicts as judging them here, whatever a child does."""

from __future__ import annotations

import os
import pickle
import shutil
import threading
from pathlib import Path
from typing import BinaryIO

import pytest
from distill_helpers import MEM, lesson

from journal_mem import progress
from journal_mem.journal import forked, reader
from journal_mem.repo import open_context

PARENT = os.getpid()


def _square(x: int) -> int:
    return x * x


def _fails_in_a_child(x: int) -> int:
    if os.getpid() != PARENT:
        raise RuntimeError("only in a child")
    return x * x


def _dies_in_a_child(x: int) -> int:
    if os.getpid() != PARENT:
        os._exit(3)
    return x * x


FORKED: list[int] = []  # the children forked by the test running now


@pytest.fixture(autouse=True)
def _forks_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    FORKED.clear()
    fork = os.fork

    def recorded() -> int:
        pid = fork()
        if pid:
            FORKED.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recorded)


def _no_child_left() -> bool:
    """Every child this test forked has been waited for (none runs, none is a zombie)."""
    for pid in FORKED:
        try:
            os.waitpid(pid, os.WNOHANG)  # still running, or exited and not reaped
        except ChildProcessError:
            continue
        return False
    return True


def _all(fn: object, items: list[int], workers: int, mine: object = None) -> list[int]:
    """The results `map_forked` gives, checked to be each index once, in index order."""
    got = list(forked.map_forked(fn, items, workers, mine))  # type: ignore[arg-type]
    assert sorted(i for i, _ in got) == list(range(len(items)))
    return [result for _, result in sorted(got)]


@pytest.mark.parametrize("workers", [0, 1, 2, 3])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 7, 100, 3 * forked.CHUNK + 5])
def test_map_forked_gives_fn_of_every_item(workers: int, count: int) -> None:
    items = list(range(count))
    assert _all(_square, items, workers) == [x * x for x in items]
    assert bool(FORKED) == (workers >= 1 and count >= 2)
    assert _no_child_left()


@pytest.mark.parametrize("fn", [_fails_in_a_child, _dies_in_a_child])
def test_a_child_that_fails_only_costs_time(fn: object) -> None:
    items = list(range(50))
    assert _all(fn, items, 2) == [x * x for x in items]
    assert _no_child_left()


def _where(x: int) -> tuple[int, bool]:
    return x, os.getpid() != PARENT  # (the item, computed in a child)


def test_what_a_child_sent_before_it_failed_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    dump = pickle.dump

    def second_kills(obj: object, fh: BinaryIO, protocol: int) -> None:
        calls.append(1)
        if os.getpid() != PARENT and len(calls) == 2:
            os._exit(4)  # the child dies as it sends its second chunk
        dump(obj, fh, protocol)

    monkeypatch.setattr(forked, "CHUNK", 64)
    monkeypatch.setattr(pickle, "dump", second_kills)
    got = dict(forked.map_forked(_where, list(range(500)), 1))
    assert [got[i][0] for i in range(500)] == list(range(500))
    by_child = [i for i in range(500) if got[i][1]]
    assert by_child == list(range(64))  # its first chunk; the rest was done here
    assert _no_child_left()


def test_a_failure_here_is_raised_and_no_child_is_left_behind() -> None:
    def boom(x: int) -> int:
        if os.getpid() == PARENT and x > 40:
            raise ValueError("here")
        return x

    with pytest.raises(ValueError, match="here"):
        list(forked.map_forked(boom, list(range(50)), 2))
    assert _no_child_left()


def test_a_consumer_that_stops_early_leaves_no_child_behind() -> None:
    results = forked.map_forked(_square, list(range(5000)), 2)
    assert next(results) == (3334, 3334 * 3334)  # the parent's own part comes first
    results.close()
    assert _no_child_left()


def test_the_parent_s_part_goes_through_mine() -> None:
    seen: list[int] = []

    def mine(part: list[int]) -> list[int]:
        seen.extend(part)
        return part

    assert _all(_square, list(range(10)), 1, mine) == [x * x for x in range(10)]
    assert seen == list(range(5, 10))  # the last part is the parent's


def test_no_child_is_forked_while_another_thread_runs() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert forked.children() == 0
    finally:
        stop.set()
        other.join()


def _journal(repo: Path) -> None:
    """Valid entries, a plain one, and invalid ones of several kinds, in two journals."""
    for i in range(30):
        lesson(repo, "api" if i % 3 else "web", f"k{i:02d}", i, title=f"Lesson number {i}")
    folder = repo / MEM / "api" / "journal"
    (folder / "2026-01-02-plain-note.md").write_text("# A plain lesson\n\nIts body.\n")
    (folder / "2026-01-02-broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    (folder / "2026-01-02-secret.md").write_text(
        "---\ntitle: A key\nkey: leaked\ntopic: general\n---\n"
        "aws_secret_access_key = AKIAABCDEFGHIJKLMNOP1234567890abcdefghijkl\n")
    (folder / "2026-01-02-empty.md").write_text("")


def test_reading_the_journal_with_children_gives_what_reading_it_here_gives(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _journal(repo)
    ctx = open_context(str(repo))
    monkeypatch.setattr(reader, "FORK_AT", 10**9)
    alone = reader.read_journal(ctx.layout, ctx.policy, use_cache=False)
    monkeypatch.setattr(reader, "FORK_AT", 1)
    monkeypatch.setattr(reader, "children", lambda: 2)  # forks on one CPU too
    shared = reader.read_journal(ctx.layout, ctx.policy, use_cache=False)

    assert len(alone.invalid) >= 3 and alone.plain and alone.parsed == shared.parsed > 30
    assert shared.entries == alone.entries
    assert shared.invalid == alone.invalid
    assert shared.plain == alone.plain
    assert shared.items == alone.items
    # each verdict is its own file's, judged on its own
    for rel, verdict in [*shared.entries, *shared.invalid.items()]:
        if rel in shared.plain:
            continue  # its topic comes from its agent's other entries
        agent, _, name = rel.split("/", 2)
        data = (repo / MEM / rel).read_bytes()
        assert reader._judge(data, name.split("/")[-1], agent, ctx.policy) == verdict, rel
    cached = reader.read_journal(ctx.layout, ctx.policy)  # what the children judged, kept
    assert cached.parsed == 0 and cached.entries == alone.entries
    assert _no_child_left()


def test_a_progress_bar_leaves_no_thread_that_would_stop_the_fork() -> None:
    before = threading.active_count()
    for _ in progress._bar(list(range(10)), "reading the journal", "entries"):
        pass
    assert threading.active_count() == before


def test_a_large_journal_is_listed_and_stat_in_a_child_with_the_same_verdicts(
        repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _journal(repo)
    folder = repo / MEM / "web" / "journal"
    (folder / "2026-01-03-linked.md").symlink_to(folder.parent.parent / "api" / "journal" /
                                                 "2026-01-02-plain-note.md")
    (folder / "2026-01-03_misnamed.md").write_text("# Misnamed\n\nbody\n")
    ctx = open_context(str(repo))
    reader.read_journal(ctx.layout, ctx.policy)  # the cache, then changes since it
    lesson(repo, "web", "after", 99, title="Written after the cache")
    (repo / MEM / "api" / "journal" / "2026-01-02-empty.md").write_text("# Now a lesson\n")
    edited = next(p for p in sorted(folder.glob("*-k*.md")) if not p.is_symlink())
    edited.write_text(edited.read_text().replace("Lesson number", "Edited lesson number"))
    cache = Path(reader.cache_dir(ctx.layout.state_dir))
    shutil.copytree(cache, tmp_path / "cache")
    monkeypatch.setattr(reader, "STAT_FORK_BYTES", 10**15)
    here = reader.read_journal(ctx.layout, ctx.policy)
    shutil.rmtree(cache)
    shutil.copytree(tmp_path / "cache", cache)  # the same cache for the second reading

    monkeypatch.setattr(reader, "STAT_FORK_BYTES", 0)
    monkeypatch.setattr(forked, "children", lambda: 1)
    spawned: list[int] = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: spawned.append(1) or fork())
    there = reader.read_journal(ctx.layout, ctx.policy)

    assert spawned and here.parsed == there.parsed >= 3
    assert any("symlink" in p[0] for p in here.invalid.values())
    assert any("its name must be" in p[0] for p in here.invalid.values())
    assert any(e.title.startswith("Edited") for _, e in here.entries)
    assert there.entries == here.entries and there.invalid == here.invalid
    assert there.plain == here.plain
    assert {r: i[4] for r, i in there.items.items()} == {r: i[4] for r, i in here.items.items()}
    assert _no_child_left()
