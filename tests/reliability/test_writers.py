"""16 writers at once, from the main checkout and a linked worktree, while distills run:
0 lessons lost."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from distill_helpers import MEM
from helpers import base_env, git, jmem

from journal_mem.journal.entry import parse

pytestmark = pytest.mark.reliability
WRITER = Path(__file__).with_name("writer.py")


def start_writer(cwd: Path, number: int, count: int) -> subprocess.Popen[str]:
    agent = ("api", "web")[number % 2]
    args = [sys.executable, str(WRITER), str(cwd), str(number), str(count), agent]
    if number % 3 == 0:
        args.append("outbox")
    return subprocess.Popen(args, cwd=cwd, env=base_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def distill_until_done(main: Path) -> subprocess.CompletedProcess[str]:
    for _ in range(600):
        proc = jmem(main, "distill")
        if proc.returncode != 75:
            return proc
        time.sleep(0.05)
    raise AssertionError("the distill lock was never free")


def test_writers_lose_nothing(repo: Path, worktree: Path, sized: Callable[[str], int],
                              figure: Callable[[str, object], None]) -> None:
    writers, count = sized("writers"), sized("lessons_per_writer")
    procs = [start_writer(worktree if n % 2 else repo, n, count) for n in range(writers)]
    distills = 0
    while any(p.poll() is None for p in procs):  # the single writer folds meanwhile
        proc = jmem(repo, "distill")
        assert proc.returncode in (0, 75), proc.stderr
        distills += 1
    expected: dict[str, str] = {}
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 0, err
        for line in out.splitlines():
            name, key = line.split("\t")
            assert name not in expected, f"{name} reported twice"
            expected[name] = key
    final = distill_until_done(repo)
    assert final.returncode == 0, final.stdout + final.stderr

    journal = {p.name: p for p in (repo / MEM).glob("*/journal/*.md")}
    lost = sorted(set(expected) - set(journal))
    keys = {parse(journal[n].read_bytes(), filename=n).key for n in expected if n in journal}
    assert not lost, f"{len(lost)} lessons lost, e.g. {lost[:3]}"
    assert keys == set(expected.values())
    assert not list((repo / ".git" / "journal-mem" / "outbox").glob("*/*.md"))
    assert git(repo, "status", "--porcelain", MEM).stdout == ""
    check = jmem(repo, "check")
    assert check.returncode == 0, check.stdout
    figure("writers at once x lessons each", f"{writers} x {count} = {len(expected)} written, "
           f"{len(lost)} lost, {distills} distills ran meanwhile")
