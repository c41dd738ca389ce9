"""Distills killed with SIGKILL at random points, then re-run: every tree consistent, every
lesson intact (the machinery of tests/test_distill_crash.py, at reliability sizes)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from distill_helpers import MEM, lesson
from helpers import base_env, git, jmem
from test_distill_crash import _run_to_completion

pytestmark = pytest.mark.reliability
SEEDED = 150  # lessons committed before the first kill: a distill that takes a while


def seed_journal(repo: Path, rng: random.Random) -> dict[str, bytes]:
    written = {}
    for i in range(SEEDED):
        path = lesson(repo, rng.choice(["api", "web"]), f"s{rng.randint(0, 90)}", i,
                      name=f"seed-{i}", title=f"Seed lesson {i} on {rng.randint(0, 99)}",
                      topic=f"t{i % 7}")
        written[path.name] = path.read_bytes()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "seed lessons")
    return written


def duration(repo: Path) -> float:
    """Seconds a distill of this repository takes without writing (`--dry-run`): kills
    are spread over that span, from interpreter start to the commit."""
    start = time.perf_counter()
    assert jmem(repo, "distill", "--dry-run").returncode == 0
    return time.perf_counter() - start


def one_trial(repo: Path, worktree: Path, rng: random.Random, trial: int,
              written: dict[str, bytes], span: float) -> bool:
    """New lessons (journal and outbox), a distill killed at a random moment.
    True when the kill landed while the distill was still running."""
    for i in range(rng.randint(1, 4)):
        path = lesson(repo, rng.choice(["api", "web"]), f"k{rng.randint(0, 30)}",
                      SEEDED + trial * 10 + i, name=f"t{trial}-{i}", title=f"Lesson {trial} {i}",
                      supersedes=(f"s{rng.randint(0, 90)}",) if rng.random() < 0.2 else (),
                      retracts=(f"k{rng.randint(0, 30)}",) if rng.random() < 0.1 else ())
        written[path.name] = path.read_bytes()
    if rng.random() < 0.5:
        out = jmem(worktree, "write", "--agent", "web", "--topic", "box", "--outbox",
                   "--title", f"Outbox lesson {trial}")
        assert out.returncode == 0, out.stderr
        written[Path(out.stdout.strip()).name] = Path(out.stdout.strip()).read_bytes()
    args = [sys.executable, "-m", "journal_mem", "distill"]
    if rng.random() < 0.15:
        args.append("--rebuild")
    proc = subprocess.Popen(args, cwd=repo, env=base_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0.0, span))
    running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return running


def test_kill_9_then_rerun(repo: Path, worktree: Path, kill_repo: int,
                           sized: Callable[[str], int],
                           figure: Callable[[str, object], None]) -> None:
    rng = random.Random(1000 + kill_repo)
    written = seed_journal(repo, rng)
    trials = sized("kills_per_repo")
    span = 1.3 * duration(repo)
    landed = sum(one_trial(repo, worktree, rng, t, written, span) for t in range(trials))
    final = _run_to_completion(repo)
    assert final.returncode == 0, final.stdout + final.stderr
    journal = {p.name: p.read_bytes() for p in (repo / MEM).glob("*/journal/*.md")}
    lost = [name for name, data in written.items() if journal.get(name) != data]
    assert not lost, f"lessons lost or changed: {lost[:5]}"
    assert not list((repo / ".git" / "journal-mem" / "outbox").glob("*/*.md"))
    assert jmem(repo, "distill", "--rebuild", "--check").returncode == 0
    check = jmem(repo, "check")
    assert check.returncode == 0, check.stdout
    assert git(repo, "status", "--porcelain", MEM).stdout == ""
    figure(f"kill -9 during distill, repository {kill_repo}",
           f"{trials} kills ({landed} mid-run), {len(written)} lessons, 0 lost, tree == rebuild")
