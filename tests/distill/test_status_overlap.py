"""A distill starts `git status` of the memory root, loads the entry cache while it runs,
and reads its answer only once the checkout was judged: one status, one cache load, and
no git process left behind when the distill is refused before reading it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from distill_helpers import MEM, lesson

from journal_mem import repo as repo_module
from journal_mem.distill import distiller
from journal_mem.errors import PolicyViolation
from journal_mem.gitops import indexlock, memgit
from journal_mem.journal import cache as cache_module


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[memgit.Status]:
    """Every `git status` a distill starts, and (in `loads`) every entry-cache load."""
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    runs: list[memgit.Status] = []
    real = memgit.Status.__init__

    def spy(self: memgit.Status, root: str, prefix: str) -> None:
        real(self, root, prefix)
        runs.append(self)

    monkeypatch.setattr(memgit.Status, "__init__", spy)
    return runs


def _distill(main: Path) -> distiller.Outcome:
    return distiller.distill(repo_module.open_context(str(main)), distiller.Options())


def test_one_status_is_started_and_the_cache_loads_once_while_it_runs(
        repo: Path, started: list[memgit.Status], monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[tuple[str, int]] = []  # (which cache, how many statuses had started then)
    real = cache_module.Cache.__init__

    def spy(self: cache_module.Cache, path: str, key: object, use: bool,
            entries: bool) -> None:
        loads.append((os.path.basename(path), len(started)))
        real(self, path, key, use, entries)

    monkeypatch.setattr(cache_module.Cache, "__init__", spy)
    lesson(repo, "api", "k1", 1)
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "k2", 2)
    lesson(repo, "web", "k3", 3)
    loads.clear()
    started.clear()
    out = _distill(repo)
    assert out.status == "distilled" and len(out.new_lessons) == 2
    assert [name for name, _ in loads].count("entries.pickle") == 1
    assert ("entries.pickle", 1) in loads  # loaded while the one status ran
    assert len(started) == 1 and started[0].proc.returncode == 0


def test_a_distill_refused_before_reading_the_status_leaves_no_git_behind(
        repo: Path, started: list[memgit.Status], tmp_path: Path) -> None:
    lesson(repo, "api", "k1", 1)
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "k2", 2)
    elsewhere = tmp_path / "elsewhere"
    (repo / MEM / "web").rename(elsewhere)  # a symlink on the way to memory: refused
    os.symlink(elsewhere, repo / MEM / "web")
    started.clear()
    with pytest.raises(PolicyViolation, match="symlinks on the way to memory"):
        _distill(repo)
    assert len(started) == 1
    assert started[0].proc.returncode is not None  # ended and waited for


def test_a_failing_status_is_loud(repo: Path, started: list[memgit.Status],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    lesson(repo, "api", "k1", 1)
    real = memgit.Status.__init__
    monkeypatch.setattr(memgit.Status, "__init__", lambda self, root, prefix: real(
        self, root, ":(bogus-magic)" + prefix))
    with pytest.raises(memgit.GitError, match="git status"):
        _distill(repo)
