"""The distill lock is never inherited: not by git, its hooks, or what a hook leaves running."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from distill_helpers import lesson
from helpers import git, jmem

from journal_mem.gitops import gitcore
from journal_mem.journal.lock import DistillLock, held_by

SLEEPER = """#!/bin/sh
sleep 30 </dev/null >/dev/null 2>&1 &
echo $! >> "{pids}"
"""


def _install(repo: Path, hook: str, pids: Path) -> None:
    path = repo / ".git" / "hooks" / hook
    path.write_text(SLEEPER.format(pids=pids))
    path.chmod(0o755)


def _kill(pids: Path) -> None:
    for pid in pids.read_text().split() if pids.exists() else []:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_the_lock_descriptor_is_close_on_exec(repo: Path) -> None:
    fcntl = pytest.importorskip("fcntl", reason="FD_CLOEXEC is POSIX's flag")
    with DistillLock(str(repo / ".git" / "journal-mem")) as lock:
        assert fcntl.fcntl(lock.fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC


def test_a_hook_that_leaves_a_child_running_does_not_keep_the_lock(repo: Path,
                                                                    tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    _install(repo, "post-commit", pids)
    _install(repo, "pre-commit", pids)
    state = str(repo / ".git" / "journal-mem")
    try:
        with DistillLock(state):  # a git command run while holding the lock, as push does
            (repo / "x.txt").write_text("x\n")
            gitcore.run(["add", "x.txt"], str(repo), clean=True)
            gitcore.run(["commit", "-q", "-m", "x"], str(repo), clean=True)
        assert len(pids.read_text().split()) == 2  # both hooks left a sleeper behind
        assert held_by(state) == ""
        lesson(repo, "api", "k1")
        first = jmem(repo, "distill")
        assert first.returncode == 0, first.stderr
        lesson(repo, "api", "k2")
        second = jmem(repo, "distill")
        assert second.returncode == 0, second.stderr  # was 75: a sleeper held the lock
        assert "k2" in git(repo, "show", "--stat", "HEAD").stdout
    finally:
        _kill(pids)
