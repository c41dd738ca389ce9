"""A large journal is listed in a forked child from the start of a distill
(`reader.Listing`), while the entry cache loads, `git status` runs and memory is
adopted and drained; its result then catches up with every journal folder that
changed since: it is always what a listing made at that moment gives."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from distill_helpers import MEM, lesson
from helpers import base_env, git, jmem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal_mem import repo as repo_module
from journal_mem.distill import distiller, unadopted
from journal_mem.errors import PolicyViolation
from journal_mem.gitops import indexlock
from journal_mem.journal import forked, listing, reader
from journal_mem.journal.cache import Cache
from journal_mem.repo import open_context

FORKED: list[int] = []  # the children forked by the test running now
PAST = time.time() - 3600  # a folder mtime no listing takes for racy


@pytest.fixture(autouse=True)
def _in_a_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every journal is large enough to be listed in a child, on one CPU too; each fork
    recorded."""
    FORKED.clear()
    fork = os.fork

    def recorded() -> int:
        pid = fork()
        if pid:
            FORKED.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recorded)
    monkeypatch.setattr(reader, "STAT_FORK_BYTES", 0)
    monkeypatch.setattr(forked, "children", lambda: 1)
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)


def _no_child_left() -> bool:
    for pid in FORKED:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def _now(ctx: repo_module.Context) -> tuple[list[object], list[str]]:
    """What a listing made now gives, in this process."""
    found, misnamed, _, _ = reader._listing(ctx.layout)
    return list(found), misnamed


def _cached(repo: Path) -> repo_module.Context:
    """A context whose entry cache exists (a listing is only started with one)."""
    ctx = open_context(str(repo))
    reader.read_journal(ctx.layout, ctx.policy)
    return ctx


def _age(repo: Path) -> None:
    """Every journal folder last changed an hour ago: none is racy (its ctime, which the
    change of its times moved, a tick of the file system's clock before what follows)."""
    for folder in (repo / MEM).glob("*/journal"):
        os.utime(folder, (PAST, PAST))
    time.sleep(0.02)


# One change to the journal between the start of a listing and its result:
# (what, agent, which name)
CHANGES = st.lists(st.tuples(
    st.sampled_from(["entry", "misnamed", "dotfile", "remove", "folder-gone", "retouch"]),
    st.sampled_from(["api", "web", "ops", "new-agent", "api-v2"]),  # api-v2/ sorts before api/
    st.integers(0, 5)), max_size=6)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=CHANGES, racy=st.sampled_from(["clock", "two seconds", "none"]))
def test_a_listing_caught_up_is_a_listing_made_then(
        repo: Path, monkeypatch: pytest.MonkeyPatch, changes: list[tuple[str, str, int]],
        racy: str) -> None:
    """Whichever way a racy folder is told: by the file system's clock read before the
    listing, by `RACY_NS` where that clock cannot be read, or not at all."""
    shutil.rmtree(repo / MEM / "ops", ignore_errors=True)
    shutil.rmtree(repo / MEM / "new-agent", ignore_errors=True)
    shutil.rmtree(repo / MEM / "api-v2", ignore_errors=True)
    for agent in ("api", "web"):
        for path in (repo / MEM / agent / "journal").glob("*"):
            path.unlink()
    for i in range(4):
        lesson(repo, "api", f"a{i}", i)
        lesson(repo, "web", f"w{i}", i)
    lesson(repo, "ops", "o0", 0)
    lesson(repo, "api-v2", "v0", 0)
    (repo / MEM / "web" / "journal" / "notes.txt").write_text("not an entry\n")
    ctx = _cached(repo)
    _age(repo)
    if racy != "clock":
        monkeypatch.setattr(reader, "_fs_clock", lambda layout: None)
    if racy == "none":
        monkeypatch.setattr(reader, "RACY_NS", 0)
    listing = reader.start_listing(ctx.layout)
    assert listing is not None
    time.sleep(0.02)  # past the tick of the folders' clock the child listed under
    for what, agent, n in changes:
        folder = repo / MEM / agent / "journal"
        if what == "entry":
            lesson(repo, agent, f"{agent}-{n}", 100 + n)
        elif what == "misnamed":
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"2026-05-01_{n}.MD").write_text("misnamed\n")
        elif what == "dotfile":
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f".tmp-{n}").write_text("half written\n")
        elif what == "remove":
            for path in sorted(folder.glob("*.md"))[n:n + 1]:
                path.unlink()
        elif what == "folder-gone":
            shutil.rmtree(repo / MEM / agent, ignore_errors=True)
        elif what == "retouch" and folder.is_dir():
            os.utime(folder, (PAST, PAST))  # a change behind an old mtime: ctime says it
    got = listing.result()
    assert got == _now(ctx)
    assert _no_child_left()


def _listed_again(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every journal folder a listing's result lists again, from now on."""
    listed: list[str] = []
    real = reader._listdir
    monkeypatch.setattr(reader, "_listdir", lambda folder: listed.append(folder) or real(folder))
    return listed


@pytest.mark.parametrize("changed", ["an hour ago", "a tick before the listing"])
def test_folders_unchanged_since_and_not_racy_are_not_listed_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch, changed: str) -> None:
    """A distill starts right after lessons are filed: a folder changed before the file
    system's clock was read for the listing (a tick before) is as the child listed it,
    however recent, and is not listed again."""
    for i in range(5):
        lesson(repo, "api", f"a{i}", i)
        lesson(repo, "web", f"w{i}", i)
    ctx = _cached(repo)
    if changed == "an hour ago":
        _age(repo)
    else:
        lesson(repo, "api", "a8", 8)
        lesson(repo, "web", "w8", 8)  # both folders changed just now
        time.sleep(0.02)  # past the tick of the folders' clock
    listing = reader.start_listing(ctx.layout)
    assert listing is not None
    time.sleep(0.02)
    listed = _listed_again(monkeypatch)
    added = lesson(repo, "web", "w9", 9)
    got = listing.result()
    assert listed == [str(repo / MEM / "web" / "journal")]  # only the folder that changed
    assert got == _now(ctx) and any(row[2] == added.name for row in got[0])


def test_a_clock_of_another_file_system_bounds_nothing(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state dir on another device than the journal (a `--separate-git-dir` on
    another mount): its clock says nothing of the folders', and a folder changed less
    than two seconds before the listing is listed again."""
    lesson(repo, "api", "a1", 1)
    ctx = _cached(repo)
    lesson(repo, "api", "a2", 2)
    time.sleep(0.02)
    device = os.stat(repo).st_dev
    monkeypatch.setattr(reader, "_fs_clock", lambda layout: (device + 1, time.time_ns()))
    listing = reader.start_listing(ctx.layout)
    assert listing is not None
    listed = _listed_again(monkeypatch)
    got = listing.result()
    assert str(repo / MEM / "api" / "journal") in listed
    assert got == _now(ctx)


def test_a_folder_changed_within_its_clock_tick_is_listed_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lesson(repo, "api", "a1", 1)
    ctx = _cached(repo)
    # a coarse clock: the folder's stat reads the same before and after a file is added,
    # and the file system's clock read before the listing reads that same tick
    stamp = time.time_ns()
    device = os.stat(repo).st_dev
    monkeypatch.setattr(reader, "_folder", lambda path: (device, 1, stamp, stamp))
    monkeypatch.setattr(reader, "_fs_clock", lambda layout: (device, stamp))
    listing = reader.start_listing(ctx.layout)
    assert listing is not None
    added = lesson(repo, "api", "a2", 2)
    got = listing.result()
    assert got == _now(ctx) and any(row[2] == added.name for row in got[0])


def test_a_listing_not_wanted_is_closed_and_gives_its_result_once(repo: Path) -> None:
    lesson(repo, "api", "a1", 1)
    ctx = _cached(repo)
    listing = reader.start_listing(ctx.layout)
    assert listing is not None and FORKED
    listing.close()
    assert _no_child_left()
    with pytest.raises(RuntimeError, match="once"):
        listing.result()
    listing.close()  # a second close does nothing


def test_a_small_journal_is_listed_where_it_is_read(repo: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    lesson(repo, "api", "a1", 1)
    ctx = open_context(str(repo))
    assert reader.start_listing(ctx.layout) is None  # no entry cache yet
    reader.read_journal(ctx.layout, ctx.policy)
    monkeypatch.setattr(reader, "STAT_FORK_BYTES", 10**15)
    assert reader.start_listing(ctx.layout) is None
    assert reader.start_listing(ctx.layout, use_cache=False) is None
    assert not FORKED


def test_a_listing_comes_in_the_order_of_the_paths_and_says_which_file_went(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders in the order of their paths, whatever their names' (`a-b/` sorts before
    `a/`); a file gone between its folder's listing and its `lstat` is listed as gone
    (None), as a listing of tuples said."""
    for agent in ("a", "a-b", "api", "api-v2", "b"):
        for n in range(3):
            lesson(repo, agent, f"{agent}-{n}", n)
    ctx = open_context(str(repo))
    files = listing.entry_files(ctx.layout)
    assert files == sorted(files, key=lambda row: row[1])
    assert [row[0] for row in files][:3] == ["a-b"] * 3
    gone = files[4]
    real = reader._stat

    def gone_on_lstat(path: str) -> reader._Stat | None:
        return None if path.endswith(os.sep + gone[2]) else real(path)

    monkeypatch.setattr(reader, "_stat", gone_on_lstat)
    found, _, _, _ = reader._listing(ctx.layout)
    assert [row[:3] for row in found] == files
    assert [row[1] for row in found if row[3] is None] == [gone[1]]
    assert all(row[3] == real(str(repo / MEM / row[1])) for row in found if row[3])


def _distill(main: Path) -> distiller.Outcome:
    return distiller.distill(repo_module.open_context(str(main)), distiller.Options())


def test_a_distill_lists_before_the_cache_loads_and_folds_what_was_filed_meanwhile(
        repo: Path, worktree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lesson(repo, "api", "k1", 1)
    assert _distill(repo).status == "distilled"
    _age(repo)
    lesson(repo, "api", "k2", 2)
    proc = jmem(worktree, "write", "--agent", "web", "--topic", "build", "--outbox",
                "--title", "The web build needs more memory")
    assert proc.returncode == 0, proc.stderr
    events: list[str] = []
    real_listing, real_cache = reader.Listing.__init__, Cache.__init__
    real_find = unadopted.find

    def listing(self: reader.Listing, layout: object) -> None:
        events.append("listing")
        real_listing(self, layout)  # type: ignore[arg-type]

    def cache(self: Cache, path: str, key: object, use: bool, entries: bool) -> None:
        events.append(f"cache {os.path.basename(path)}")
        real_cache(self, path, key, use, entries)

    def finding(ctx: repo_module.Context,
                status: list[tuple[str, str]]) -> unadopted.Found | None:
        events.append("adopt")
        # another agent's lesson, filed while the distill runs, in a folder of its own
        lesson(repo, "ops", "k3", 3)
        return real_find(ctx, status)

    monkeypatch.setattr(reader.Listing, "__init__", listing)
    monkeypatch.setattr(Cache, "__init__", cache)
    monkeypatch.setattr(unadopted, "find", finding)
    out = _distill(repo)
    assert out.status == "distilled"
    assert events[:3] == ["listing", "cache entries.pickle", "adopt"]
    assert sorted(rel.split("/")[0] for rel in out.new_lessons) == ["api", "ops", "web"]
    assert _no_child_left()
    proc = subprocess.run([sys.executable, "-m", "journal_mem", "check"], cwd=repo,
                          env=base_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # folded and committed, though filed after `git status` was read: no clone lacks it
    assert git(repo, "status", "--porcelain", "--", MEM).stdout == ""
    assert "ops/journal/" in git(repo, "show", "--stat", "--format=", "HEAD").stdout


def test_a_distill_refused_leaves_no_listing_child_behind(repo: Path) -> None:
    lesson(repo, "api", "k1", 1)
    assert _distill(repo).status == "distilled"
    committed = next((repo / MEM / "api" / "journal").glob("*.md"))
    committed.write_text(committed.read_text() + "\nedited\n")
    FORKED.clear()
    with pytest.raises(PolicyViolation, match="append-only"):
        _distill(repo)
    assert FORKED and _no_child_left()


def test_a_first_distill_of_committed_entries_commits_none_of_them_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from journal_mem.distill import commit
    from journal_mem.gitops import memgit

    for i in range(6):
        lesson(repo, "api", f"k{i}", i)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons committed by hand")
    monkeypatch.setattr(commit, "RACY_NS", 0)
    time.sleep(0.05)  # their ctimes are now older than the status the distill starts
    committed: list[list[str]] = []
    real = memgit.commit
    monkeypatch.setattr(memgit, "commit", lambda root, mem, paths, *rest: (
        committed.append(list(paths)) or real(root, mem, paths, *rest)))
    out = _distill(repo)
    assert out.status == "distilled" and len(out.new_lessons) == 6
    assert committed and not [p for p in committed[0] if "/journal/" in p]
    assert git(repo, "status", "--porcelain", "--", MEM).stdout == ""


def test_a_journal_of_several_folders_is_listed_by_two_children_a_half_each(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folders split where their sizes reach half the total (a folder's size grows
    with its names), each child lists its run of them in path order, and the result is
    a listing made now: every file, and every misnamed one, of both halves."""
    for n in range(3):
        lesson(repo, "a-b", f"ab-{n}", n)
        lesson(repo, "web", f"w-{n}", n)
    for n in range(400):  # long names: its folder outgrows a block of names
        lesson(repo, "api", f"api-{n}-" + "x" * 60, n)
    (repo / MEM / "web" / "journal" / "notes.txt").write_text("not an entry\n")
    (repo / MEM / "a-b" / "journal" / "2026-05-01_x.md").write_text("misnamed\n")
    ctx = _cached(repo)
    _age(repo)
    halves = reader._halves(ctx.layout)
    assert halves == [["a-b", "api"], ["web"]]  # path order: a-b/ sorts before api/
    FORKED.clear()
    listing = reader.start_listing(ctx.layout)
    assert listing is not None and len(FORKED) == 2
    listed: list[str] = []
    monkeypatch.setattr(reader, "_listdir", listed.append)
    got = listing.result()
    assert not listed  # all of it as the children listed it
    assert got == _now(ctx) and got[1] == ["a-b/journal/2026-05-01_x.md",
                                           "web/journal/notes.txt"]
    assert _no_child_left()


def test_one_folder_or_no_child_is_one_listing(repo: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for agent in os.listdir(repo / MEM):
        if agent != "api" and (repo / MEM / agent).is_dir():
            shutil.rmtree(repo / MEM / agent)
    lesson(repo, "api", "a1", 1)
    ctx = _cached(repo)
    assert reader._halves(ctx.layout) == [["api"]]
    lesson(repo, "web", "w1", 1)
    monkeypatch.setattr(forked, "children", lambda: 0)
    monkeypatch.setattr(reader, "children", lambda: 0)
    assert reader._halves(ctx.layout) == [["api", "web"]]
    FORKED.clear()
    listing = reader.start_listing(ctx.layout)
    assert listing is not None and not FORKED  # listed here, when the result is asked
    assert listing.result() == _now(ctx)
