"""Distills killed with SIGKILL at random points, incremental vs rebuild, fresh clones."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from distill_helpers import MEM, lesson, snapshot
from helpers import base_env, git, jmem

from journal_mem.distill.distiller import Options, distill
from journal_mem.repo import open_context

KILLS_PER_REPO = 10
REPOS = 5  # 50 kills in all


def _run_to_completion(main: Path) -> subprocess.CompletedProcess[str]:
    """Re-run distill; a git the killed distill started may still hold the lock (exit 75)."""
    for _ in range(200):
        proc = jmem(main, "distill")
        if proc.returncode != 75:
            return proc
        time.sleep(0.05)
    raise AssertionError("the lock was never released")


@pytest.mark.parametrize("seed", range(REPOS))
def test_kill_9_at_random_points_loses_nothing(repo: Path, worktree: Path, seed: int) -> None:
    rng = random.Random(seed)
    written: dict[str, bytes] = {}
    for trial in range(KILLS_PER_REPO):
        for i in range(rng.randint(1, 4)):
            path = lesson(repo, rng.choice(["api", "web"]), f"k{rng.randint(0, 12)}",
                          trial * 10 + i, name=f"t{trial}-{i}", title=f"Lesson {trial} {i}",
                          supersedes=(f"k{rng.randint(0, 12)}",) if rng.random() < 0.2 else ())
            written[path.name] = path.read_bytes()
        out = jmem(worktree, "write", "--agent", "web", "--topic", "box", "--outbox",
                   "--title", f"Outbox lesson {seed} {trial}")
        assert out.returncode == 0, out.stderr
        written[Path(out.stdout.strip()).name] = Path(out.stdout.strip()).read_bytes()
        proc = subprocess.Popen([sys.executable, "-m", "journal_mem", "distill"], cwd=repo,
                                env=base_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 0.9))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    final = _run_to_completion(repo)
    assert final.returncode == 0, final.stderr
    journal = {p.name: p.read_bytes() for p in (repo / MEM).glob("*/journal/*.md")}
    for name, data in written.items():  # every lesson intact, outbox ones included
        assert journal.get(name) == data, name
    assert not list((repo / ".git" / "journal-mem" / "outbox").glob("*/*.md"))
    assert jmem(repo, "distill", "--rebuild", "--check").returncode == 0
    check = jmem(repo, "check")
    assert check.returncode == 0, check.stdout
    assert git(repo, "status", "--porcelain", MEM).stdout == ""


def test_several_incremental_distills_equal_one_rebuild(repo: Path, tmp_path: Path) -> None:
    rng = random.Random(7)
    for round_ in range(6):
        for i in range(rng.randint(1, 6)):
            lesson(repo, rng.choice(["api", "web"]), f"k{rng.randint(0, 15)}",
                   round_ * 10 + i, name=f"r{round_}-{i}", title=f"T {rng.randint(0, 20)}",
                   retracts=(f"k{rng.randint(0, 15)}",) if rng.random() < 0.15 else (),
                   applies_to=("all",) if rng.random() < 0.2 else ())
        outcome = distill(open_context(str(repo)), Options(date=None))
        assert outcome.exit_code == 0
    incremental = snapshot(repo)
    assert distill(open_context(str(repo)), Options(rebuild=True)).status == "unchanged"
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert jmem(clone, "distill", "--rebuild", "--no-commit").returncode == 0
    assert snapshot(clone) == incremental
