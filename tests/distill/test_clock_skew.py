"""Corrections win by cause, not by clock: two clones of one repository whose machines'
clocks disagree by minutes or days, in either direction, on real git (clone, push, pull).

Each machine runs the real program with its clock moved (`journal_mem.journal.entry.now`,
the one clock every stamp comes from, shifted for that process only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import base_env, git, jmem

MEM = ".claude/agent-memory"
MIN, DAY = 60, 86_400
RUN_AT = ("import datetime as dt, sys; import journal_mem.journal.entry as e; "
          "real = e.now; e.now = lambda: real() + dt.timedelta(seconds={skew}); "
          "from journal_mem.main import main; sys.exit(main(sys.argv[1:]))")


def jmem_at(cwd: Path, skew: int, *args: str) -> subprocess.CompletedProcess[str]:
    """The real program on a machine whose clock is `skew` seconds off."""
    proc = subprocess.run([sys.executable, "-c", RUN_AT.format(skew=skew), *args], cwd=cwd,
                          env=base_env(), text=True, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def machines(tmp_path: Path) -> tuple[Path, Path]:
    """Two clones of one shared repository, set up for jmem."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(origin), str(a))
    git(a, "commit", "-q", "--allow-empty", "-m", "first")
    assert jmem(a, "init", "--agent", "api", "--agent", "web", "--no-git-hooks",
                "--no-claude").returncode == 0
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "jmem")
    git(a, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(origin), str(b))
    return a, b


def publish(clone: Path, message: str) -> None:
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", message)
    git(clone, "pull", "-q", "--rebase", "origin", "main")
    git(clone, "push", "-q", "origin", "main")


def write(clone: Path, skew: int, agent: str, title: str, *more: str) -> str:
    """`jmem write` on that machine; the new entry's key."""
    proc = jmem_at(clone, skew, "write", "--json", "--agent", agent, "--topic", "db",
                   "--title", title, "--body", f"{title}.", *more)
    import json

    return str(json.loads(proc.stdout)["key"])


def memory(clone: Path, agent: str) -> str:
    return (clone / MEM / agent / "MEMORY.md").read_text()


def distill_and_check(clone: Path, tmp_path: Path) -> None:
    """Distill, publish, and check a fresh clone rebuilds the same bytes."""
    assert jmem(clone, "distill").returncode == 0
    git(clone, "push", "-q", "origin", "main")
    fresh = tmp_path / f"fresh-{len(list(tmp_path.iterdir()))}"
    git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), str(fresh))
    proc = jmem(fresh, "check")
    assert proc.returncode == 0, proc.stdout + proc.stderr


# (clock of the machine that wrote the fact, clock of the one that corrects it)
SKEWS = [(0, -2 * MIN), (0, 2 * MIN), (2 * MIN, 0), (0, -3 * DAY), (-3 * DAY, 0),
         (-20 * DAY, -2 * MIN)]


@pytest.mark.parametrize(("fact_clock", "fix_clock"), SKEWS)
def test_a_supersede_beats_the_fact_it_read_whatever_the_clocks(
        tmp_path: Path, fact_clock: int, fix_clock: int) -> None:
    a, b = machines(tmp_path)
    wrong = write(a, fact_clock, "api", "Run migrations directly against prod")
    publish(a, "lesson")
    git(b, "pull", "-q", "origin", "main")
    right = write(b, fix_clock, "web", "Migrations go through the deploy job",
                  "--supersedes", wrong)
    publish(b, "correction")
    git(a, "pull", "-q", "origin", "main")
    distill_and_check(a, tmp_path)
    for agent in ("api", "web"):  # every holder: the fact's own writer too
        assert f"[{wrong}]" not in memory(a, agent)
        assert f"[{right}]" in memory(a, agent)
    wake = jmem(a, "wake", "--agent", "web")
    assert "possibly outdated" not in wake.stdout, wake.stdout


@pytest.mark.parametrize(("fix_clock", "again_clock"), [(0, -2 * MIN), (-3 * DAY, 0),
                                                        (0, -3 * DAY), (2 * MIN, 0)])
def test_only_a_restatement_written_after_the_correction_brings_the_key_back(
        tmp_path: Path, fix_clock: int, again_clock: int) -> None:
    a, b = machines(tmp_path)
    wrong = write(a, 0, "api", "Use the v1 payments endpoint")
    publish(a, "lesson")
    git(b, "pull", "-q", "origin", "main")
    gone = jmem_at(b, fix_clock, "write", "--json", "--agent", "web", "--topic", "db",
                   "--title", "The v1 endpoint is gone", "--body", "Gone.",
                   "--retracts", wrong)
    assert gone.returncode == 0
    publish(b, "retraction")
    git(a, "pull", "-q", "origin", "main")
    distill_and_check(a, tmp_path)
    assert f"[{wrong}]" not in memory(a, "api")
    # Written on a machine that has the retraction: it knows it, so it wins.
    again = write(a, again_clock, "api", "Use the v1 payments endpoint", "--key", wrong,
                  "--body", "v1 is back for refunds.")
    assert again == wrong
    publish(a, "restated")
    distill_and_check(a, tmp_path)
    assert f"[{wrong}]" in memory(a, "api")


def test_a_hand_deleted_line_beats_its_fact_within_the_same_second(tmp_path: Path) -> None:
    """The retraction is stamped with milliseconds, as `write` stamps, and knows the fact:
    replaying it first (and the fact coming back) cannot happen, ten times out of ten."""
    a, _ = machines(tmp_path)
    for n in range(10):
        key = write(a, 0, "api", f"Cache warmup step {n} is needed")
        assert jmem(a, "distill").returncode == 0
        text = memory(a, "api")
        line = next(x for x in text.splitlines() if f"[{key}]" in x)
        (a / MEM / "api" / "MEMORY.md").write_text(text.replace(line + "\n", ""))
        proc = jmem(a, "distill")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"[{key}]" not in memory(a, "api"), n
    retractions = sorted((a / MEM / "api" / "journal").glob("*retracted-by-hand*"))
    assert len(retractions) == 10
    assert all("knew:" in p.read_text() for p in retractions)
    assert all("." in next(x for x in p.read_text().splitlines() if x.startswith("created:"))
               for p in retractions)
