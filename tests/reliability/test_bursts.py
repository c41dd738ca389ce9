"""Commits in bursts from the main checkout and 4 linked worktrees while the post-commit
hook starts a distill after every commit (threshold 1): no git command of the committers
fails, no lock is left behind, and the background distills fold every lesson.

The distill commit is built in a private index and published with a compare-and-swap
(docs/DESIGN.md, "Distill commits"); before that, 7 of 60 such rounds failed with
`cannot lock ref 'HEAD'` or `index.lock`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from distill_helpers import MEM
from helpers import add_worktree, base_env, git, jmem, make_repo

from journal_mem.journal.listing import pending_paths
from journal_mem.journal.lock import held_by
from journal_mem.repo import open_context

pytestmark = pytest.mark.reliability
CHECKOUTS = 5  # the main checkout and 4 linked worktrees
BURSTER = Path(__file__).with_name("burster.py")


def setup(tmp_path: Path) -> list[Path]:
    main = make_repo(tmp_path / "main")
    agents = [arg for i in range(CHECKOUTS) for arg in ("--agent", f"b{i}")]
    proc = jmem(main, "init", *agents, "--no-claude")
    assert proc.returncode == 0, proc.stderr
    config = main / ".claude" / "journal-mem.toml"
    config.write_text(config.read_text().replace("# threshold = 10", "threshold = 1"))
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "init journal-mem")
    return [main, *(add_worktree(main, tmp_path / f"wt{i}", f"agent{i}")
                    for i in range(1, CHECKOUTS))]


def settle(main: Path, timeout: float = 180.0) -> list[str]:
    """Wait until no distill runs and nothing is pending; the entries still pending."""
    layout = open_context(str(main)).layout
    deadline = time.monotonic() + timeout
    quiet = 0
    while time.monotonic() < deadline:
        waiting = [rel for _, _, rel, _ in pending_paths(layout)]
        busy = held_by(layout.state_dir)
        quiet = quiet + 1 if not waiting and not busy else 0
        if quiet >= 10:  # a second with nothing pending and the lock free
            return []
        time.sleep(0.1)
    return waiting


def distilled_text(main: Path, agent: str) -> str:
    folder = main / MEM / agent
    return "".join(p.read_text() for p in [folder / "MEMORY.md", *folder.glob("topics/*.md")]
                   if p.exists())


def test_burst_commits_never_fail_and_every_lesson_is_distilled(
        tmp_path: Path, sized: Callable[[str], int],
        figure: Callable[[str, object], None]) -> None:
    checkouts = setup(tmp_path)
    main = checkouts[0]
    total = sized("burst_commits")
    start = time.monotonic()
    procs = [subprocess.Popen(
        [sys.executable, str(BURSTER), str(path), f"c{i}", str(total // CHECKOUTS), f"b{i}",
         str(i)], env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i, path in enumerate(checkouts)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    elapsed = time.monotonic() - start
    failures = [f for r in results for f in r["failures"]]
    left = settle(main)
    runs = sum(r["runs"] for r in results)
    distills = git(main, "log", "--format=%s", "--grep=^jmem distill").stdout.splitlines()
    figure("burst commits", f"{total} commits from {CHECKOUTS} checkouts in {elapsed:.0f} s: "
           f"{len(failures)} of {runs} git commands failed, {len(distills)} distill commits")
    assert failures == [], failures
    assert left == [], f"never distilled: {left}"
    state = main / ".git" / "journal-mem"  # its distill.lock is a flock'd file, kept
    locks = [str(p) for p in (main / ".git").rglob("*.lock") if state not in p.parents]
    assert locks == [], locks
    for i, path in enumerate(checkouts):
        assert git(path, "status", "--porcelain").stdout == "", path
        text = distilled_text(main, f"b{i}")
        missing = [k for k in results[i]["keys"] if f"Burst lesson c{i} {k.split('-')[1]}"
                   not in text]
        assert missing == [], missing
    check = jmem(main, "check")
    assert check.returncode == 0, check.stdout + check.stderr
