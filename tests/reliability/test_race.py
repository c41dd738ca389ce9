"""Two distills at once: exactly one writes, the other exits 75 naming the holder (or,
started after the first finished, finds nothing to do)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from distill_helpers import lesson
from helpers import base_env, git, jmem

from journal_mem.journal.lock import DistillLock
from journal_mem.repo import open_context

pytestmark = pytest.mark.reliability


def commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD").stdout)


def start(repo: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "journal_mem", "distill"], cwd=repo,
                            env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_two_distills_at_once_one_writes(repo: Path, sized: Callable[[str], int],
                                         figure: Callable[[str, object], None]) -> None:
    rounds, refused = sized("race_rounds"), 0
    for r in range(rounds):
        for i in range(40):
            lesson(repo, ("api", "web")[i % 2], f"r{r}-{i % 25}", r * 100 + i,
                   name=f"r{r}-{i}", title=f"Race lesson {r} {i}")
        before = commits(repo)
        first, second = start(repo), start(repo)
        results = [(p.wait(), *p.communicate()) for p in (first, second)]
        codes = sorted(code for code, _, _ in results)
        assert commits(repo) == before + 1, results
        assert codes in ([0, 0], [0, 75]), results
        if codes == [0, 75]:
            refused += 1
            busy = next(err for code, _, err in results if code == 75)
            assert "another distill holds the lock" in busy, busy
        else:  # the later one found the work done
            assert sum("committed" in out for _, out, _ in results) == 1, results
    assert git(repo, "status", "--porcelain").stdout == ""
    figure("two distills at once", f"{rounds} rounds: {rounds} commits, exactly one writer "
           f"each ({refused} refused with exit 75, {rounds - refused} found nothing left)")


def test_held_lock_refuses_at_once(repo: Path) -> None:
    lesson(repo, "api", "held", name="held")
    with DistillLock(open_context(str(repo)).layout.state_dir):
        proc = jmem(repo, "distill")
    assert proc.returncode == 75
    assert "another distill holds the lock" in proc.stderr
    assert not (repo / ".claude" / "agent-memory" / "api" / "MEMORY.md").exists()
