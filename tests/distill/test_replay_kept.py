"""A distill goes on from the replay the last one kept (`journal/replay.py`) only while
git history orders the kept entries as it did: in-process distills on real
repositories, each checked against a fold of the whole journal (`--check`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from distill_helpers import MEM, lesson
from helpers import git

from journal_mem import repo as repo_module
from journal_mem.distill import distiller
from journal_mem.gitops import indexlock
from journal_mem.journal import fold as fold_module
from journal_mem.journal.replay import Kept


def _distill(main: Path, **options: Any) -> distiller.Outcome:
    return distiller.distill(repo_module.open_context(str(main)), distiller.Options(**options))


@pytest.fixture
def resumed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many new entries each fold went on with from a kept replay (-1: none)."""
    seen: list[int] = []
    real = fold_module.fold

    def spy(*args: Any, **kw: Any) -> fold_module.Fold:
        result = real(*args, **kw)
        if kw.get("files") is not None:
            seen.append(result.resumed)
        return result

    monkeypatch.setattr(fold_module, "fold", spy)
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    return seen


def _agreed(main: Path) -> None:
    """The distilled files are what a fold of the whole journal makes."""
    assert _distill(main, check=True).status == "unchanged"


def _settled(main: Path, text: str, resumed: list[int], expected: list[int]) -> None:
    """The distilled files are a fold of the whole journal's, web's MEMORY.md says `text`,
    and each fold went on with as many entries as `expected` says (-1: none)."""
    _agreed(main)
    assert text in (main / MEM / "web" / "MEMORY.md").read_text()
    assert resumed == expected


def _commit_code(main: Path, n: int) -> None:
    (main / "code.txt").write_text(f"change {n}\n")
    git(main, "add", "code.txt")
    git(main, "commit", "-q", "-m", f"code {n}")


def test_new_lessons_after_a_distill_and_code_commits_go_on_from_the_kept_replay(
        repo: Path, resumed: list[int]) -> None:
    lesson(repo, "api", "a1", 0, title="Use the retry helper")
    lesson(repo, "web", "w1", 1, title="Build with the fast bundler", applies_to=("all",))
    assert _distill(repo).status == "distilled"
    for n in range(3):
        _commit_code(repo, n)
        lesson(repo, "web", f"w{n + 2}", 10 + n, title=f"Web lesson {n}",
               supersedes=("a1",) if n == 1 else ())
        assert _distill(repo).status == "distilled"
        _agreed(repo)
    assert resumed == [-1, 1, 1, 1]
    assert "Use the retry helper" not in (repo / MEM / "api" / "MEMORY.md").read_text()


def test_a_lesson_dated_before_the_kept_ones_replays_everything(
        repo: Path, resumed: list[int]) -> None:
    lesson(repo, "api", "a1", 30)
    assert _distill(repo).status == "distilled"
    lesson(repo, "web", "w1", 5, name="w1-early")  # a clock behind the first writer's
    assert _distill(repo).status == "distilled"
    _agreed(repo)
    assert resumed == [-1, -1]


def test_new_lessons_committed_by_hand_since_the_kept_replay_go_on_from_it(
        repo: Path, resumed: list[int]) -> None:
    lesson(repo, "api", "a1", 0)
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "a2", 10)
    git(repo, "add", MEM)
    git(repo, "commit", "-q", "-m", "a lesson committed by hand")
    lesson(repo, "web", "w1", 20)
    assert _distill(repo).status == "distilled"
    _agreed(repo)
    assert resumed == [-1, 2]


def test_new_lessons_of_one_key_committed_by_hand_go_on_in_the_order_of_their_commits(
        repo: Path, resumed: list[int]) -> None:
    """Two new entries of one key, the later clock committed first: their commits order
    them, so the earlier clock's text is the fact, going on as a whole fold does."""
    lesson(repo, "api", "a1", 0)
    lesson(repo, "api", "k", 1, name="k-kept", title="Kept text")
    assert _distill(repo).status == "distilled"
    late = lesson(repo, "api", "k", 20, name="k-late", title="Twenty minutes")
    early = lesson(repo, "web", "k", 15, name="k-early", title="Fifteen minutes")
    for path in (late, early):
        git(repo, "add", str(path))
        git(repo, "commit", "-q", "-m", f"add {path.name}")
    lesson(repo, "web", "w1", 30)
    assert _distill(repo).status == "distilled"
    _settled(repo, "Fifteen minutes", resumed, [-1, 3])


@pytest.mark.parametrize(("minutes", "committed"), [(10, False), (40, True)])
def test_a_new_lesson_placed_before_a_kept_pending_one_of_its_key_replays_everything(
        repo: Path, resumed: list[int], minutes: int, committed: bool) -> None:
    """Two entries of one key: the kept one pending, the new one written with a clock
    behind it (pending entries are ordered by their clocks), or committed since (a
    pending entry comes after every committed one of its key). Either way the new one
    comes first, so going on from the kept replay would make it the latest."""
    lesson(repo, "api", "k", 30, title="Kept and pending")
    assert _distill(repo, commit=False).status == "distilled"
    new = lesson(repo, "web", "k", minutes, name="k-new", title="The new one")
    if committed:
        git(repo, "add", str(new))
        git(repo, "commit", "-q", "-m", "the new lesson only")
    assert _distill(repo, commit=False).status == "distilled"
    _settled(repo, "Kept and pending", resumed, [-1, -1])


def test_a_merge_that_brings_a_lesson_replays_everything(
        repo: Path, resumed: list[int]) -> None:
    lesson(repo, "api", "a1", 0)
    assert _distill(repo).status == "distilled"
    git(repo, "checkout", "-q", "-b", "side", "HEAD~1")
    side = lesson(repo, "web", "w1", 20)
    git(repo, "add", str(side))
    git(repo, "commit", "-q", "-m", "a lesson on a side branch")
    git(repo, "checkout", "-q", "-")
    _commit_code(repo, 1)
    git(repo, "merge", "-q", "--no-edit", "side")
    assert _distill(repo).status == "distilled"
    _agreed(repo)
    assert resumed == [-1, -1]


def test_a_rewritten_distill_commit_replays_everything(repo: Path, resumed: list[int]) -> None:
    lesson(repo, "api", "a1", 0)
    assert _distill(repo).status == "distilled"
    git(repo, "commit", "-q", "--amend", "-m", "the distill, reworded")
    lesson(repo, "web", "w1", 20)
    assert _distill(repo).status == "distilled"
    _agreed(repo)
    assert resumed == [-1, -1]


def test_without_commits_the_kept_replay_holds_until_its_lessons_are_committed(
        repo: Path, resumed: list[int]) -> None:
    lesson(repo, "api", "a1", 0)
    assert _distill(repo, commit=False).status == "distilled"
    lesson(repo, "api", "a2", 10, supersedes=("a1",))
    assert _distill(repo, commit=False).status == "distilled"
    _agreed(repo)
    git(repo, "add", MEM)
    git(repo, "commit", "-q", "-m", "memory, committed by hand")
    lesson(repo, "web", "w1", 20)
    assert _distill(repo, commit=False).status == "distilled"
    _agreed(repo)
    assert resumed == [-1, 1, -1]


def test_a_long_key_s_lessons_committed_by_a_distill_keep_their_order(
        repo: Path, resumed: list[int]) -> None:
    """A key with more entries than `order.GROUP_LIMIT` is ordered along its commits. Three
    pending entries of it, with clocks behind every committed one, come after all of them;
    the distill commits the three in one commit, and the order a rebuild from that commit
    reads (each after every entry of the commit before) is the one the kept replay has."""
    for n in range(66):
        lesson(repo, "api", "k", 100 + n, name=f"k-{n:02d}", title=f"Status {n}")
    assert _distill(repo).status == "distilled"
    for n, title in enumerate(["Late A", "Late B", "Late C"]):
        lesson(repo, "web", "k", 10 + n, name=f"late-{n}", title=title)
    assert _distill(repo).status == "distilled"
    assert "Late C" in (repo / MEM / "web" / "MEMORY.md").read_text()
    lesson(repo, "web", "w1", 200)
    assert _distill(repo).status == "distilled"
    _settled(repo, "Late C", resumed, [-1, -1, 1])


@pytest.mark.parametrize("spoiled", ["bytes", "shape"])
def test_a_kept_replay_that_cannot_be_read_replays_everything(
        repo: Path, resumed: list[int], monkeypatch: pytest.MonkeyPatch, spoiled: str) -> None:
    """A kept replay that is not a pickle, or one kept without a field this version keeps
    (as a build of another version under the same cache version would), is no cache,
    never a crash."""
    lesson(repo, "api", "a1", 0)
    with monkeypatch.context() as patched:
        if spoiled == "shape":
            patched.setattr(Kept, "FIELDS", tuple(f for f in Kept.FIELDS if f != "dropped"))
        assert _distill(repo).status == "distilled"
    if spoiled == "bytes":
        cache = Path(git(repo, "rev-parse", "--git-common-dir").stdout.strip())
        kept = (repo / cache if not cache.is_absolute() else cache) / "journal-mem" / "cache"
        (kept / "replay.pickle").write_bytes(b"not a pickle")
    lesson(repo, "web", "w1", 20)
    assert _distill(repo).status == "distilled"
    lesson(repo, "web", "w2", 30)
    assert _distill(repo).status == "distilled"
    _agreed(repo)
    assert resumed == [-1, -1, 1]


def test_pending_lessons_committed_later_one_by_one_are_ordered_by_their_commits(
        repo: Path, resumed: list[int]) -> None:
    """Two pending entries of one key are ordered by their clocks; committed one by one,
    by their commits. The kept replay ordered them by their clocks, so it is not gone on
    from: going on would keep the older one's text."""
    late = lesson(repo, "api", "k", 10, title="Ten minutes")
    early = lesson(repo, "web", "k", 5, title="Five minutes")
    assert _distill(repo, commit=False).status == "distilled"
    assert "Ten minutes" in (repo / MEM / "web" / "MEMORY.md").read_text()
    for path in (late, early):  # the later clock committed first
        git(repo, "add", str(path))
        git(repo, "commit", "-q", "-m", f"add {path.name}")
    lesson(repo, "web", "w1", 20)
    assert _distill(repo, commit=False).status == "distilled"
    _settled(repo, "Five minutes", resumed, [-1, -1])


def test_rebuild_replays_everything_and_keeps_that(repo: Path, resumed: list[int]) -> None:
    lesson(repo, "api", "a1", 0)
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "a2", 10)
    assert _distill(repo, rebuild=True).status == "distilled"
    lesson(repo, "api", "a3", 20)
    assert _distill(repo).status == "distilled"
    _agreed(repo)
    assert resumed == [-1, -1, 1]


@pytest.mark.parametrize("seed", range(1, 7))
def test_a_random_day_of_lessons_commits_and_skewed_clocks_agrees_with_a_whole_fold(
        repo: Path, resumed: list[int], seed: int) -> None:
    """Lessons (new facts, restatements, some dated behind, corrections, retractions),
    commits of code, pending lessons committed by hand one by one, an amended HEAD, and
    distills with and without commits, in a seeded random order: after every distill
    the files are what a fold of the whole journal makes."""
    import random

    rnd = random.Random(seed)
    keys: list[str] = []
    minutes = 0
    for step in range(16):
        action = rnd.choice(["lesson", "lesson", "restate", "restate", "behind", "correct",
                             "retract", "code", "by hand", "by hand", "amend"])
        minutes += rnd.randint(1, 5)
        agent = rnd.choice(["api", "web"])
        if action in ("lesson", "restate", "behind", "correct", "retract") or not keys:
            # the newest keys: their entries are the likeliest to be pending still
            key = (rnd.choice(keys[-3:]) if action in ("restate", "behind") and keys
                   else f"k{step}")
            extra: dict[str, Any] = {}
            if action == "correct" and keys:
                extra["supersedes"] = (rnd.choice(keys),)
            if action == "retract" and keys:
                extra["retracts"] = (rnd.choice(keys),)
            lesson(repo, agent, key, minutes - 30 if action == "behind" else minutes,
                   name=f"s{step}", title=f"Lesson {step} of {agent}",
                   applies_to=(agent, "all") if rnd.random() < 0.2 else (agent,), **extra)
            keys.append(key)
        elif action == "code":
            _commit_code(repo, step)
        elif action == "by hand":  # one pending lesson, committed on its own
            pending = git(repo, "ls-files", "--others", "--", MEM).stdout.split()
            if pending:
                git(repo, "add", rnd.choice(pending))
                git(repo, "commit", "-q", "-m", f"a lesson by hand {step}")
        else:
            git(repo, "commit", "-q", "--amend", "--allow-empty", "-m", f"amended {step}")
        out = _distill(repo, commit=rnd.random() < 0.4)
        assert out.status in ("distilled", "unchanged"), out
        _agreed(repo)
    assert max(resumed) >= 1  # the day went on from a kept replay at least once
