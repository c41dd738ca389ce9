"""The distiller knows its own output: a distilled file equal to a version it wrote is not
a hand edit, an older distill state on disk adopts nothing, and the generated header and
footer are never content. Real git: reset, stash, checkout of old copies."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from distill_helpers import MEM, head, lesson, memory_md
from helpers import base_env, git, jmem, journal_files


def distilled(repo: Path) -> str:
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_a_reset_that_undoes_the_distill_commit_adopts_nothing(repo: Path) -> None:
    lesson(repo, "api", "k1", body="Why k1.")
    distilled(repo)
    before = memory_md(repo, "api")
    entries = journal_files(repo, "api")
    git(repo, "reset", "-q", "HEAD~1")  # the distill commit undone, its files kept
    out = distilled(repo)
    assert "adopted" not in out and "not written by jmem" not in out, out
    assert journal_files(repo, "api") == entries  # no lesson from its own output
    assert memory_md(repo, "api") == before
    assert jmem(repo, "check").returncode == 0


def test_older_copies_of_its_own_files_are_not_a_hand_edit(repo: Path) -> None:
    """What `git commit && git stash` during a distill leaves: HEAD holds the fresh files,
    the work tree the previous distill's copies (and its older distill state)."""
    lesson(repo, "api", "k1")
    distilled(repo)
    first = head(repo)
    lesson(repo, "api", "k2", 5)
    distilled(repo)
    fresh = memory_md(repo, "api")
    git(repo, "checkout", first, "--", MEM + "/api", MEM + "/distill-state.json")
    git(repo, "reset", "-q")
    assert "[k2]" not in memory_md(repo, "api")
    entries = journal_files(repo, "api")
    out = distilled(repo)
    assert journal_files(repo, "api") == entries, out  # k2 not retracted, footer no fact
    assert memory_md(repo, "api") == fresh
    assert jmem(repo, "check").returncode == 0


def test_a_native_edit_that_fixes_the_footer_is_one_lesson_not_two(repo: Path) -> None:
    lesson(repo, "api", "k1")
    distilled(repo)
    path = repo / MEM / "api" / "MEMORY.md"
    text = path.read_text()
    footer = text.rstrip("\n").splitlines()[-1]
    assert footer.startswith("1 live fact")
    edited = text.replace(footer, "- Builds need the VPN\n\n" + footer.replace("1 live fact",
                                                                              "2 live facts"))
    path.write_text(edited)
    distilled(repo)
    new = [p for p in journal_files(repo, "api") if "k1" not in p.name]
    assert len(new) == 1 and "Builds need the VPN" in new[0].read_text()
    assert "live fact" not in memory_md(repo, "api").split("[k1]")[1].split("\n\n")[0]


@pytest.mark.parametrize("rounds", [3, pytest.param(30, marks=pytest.mark.slow)])
def test_stash_or_reset_at_natural_moments_of_a_distill(repo: Path, rounds: int) -> None:
    """Soak: `git stash` or `git reset HEAD~1` at a random moment of a running distill;
    the next distill adopts nothing of the distiller's own output."""
    rng = random.Random(2)
    for n in range(rounds):
        lesson(repo, "api", f"s{n}", n, body=f"Body {n}.")
        proc = subprocess.Popen([sys.executable, "-m", "journal_mem", "distill"], cwd=repo,
                                env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.0, 0.8))
        if n % 2:
            git(repo, "stash", "-q", check=False)
        else:
            proc.communicate(timeout=120)
            git(repo, "reset", "-q", "HEAD~1", check=False)
        proc.communicate(timeout=120)
        entries = {p.name for p in journal_files(repo, "api")}
        distilled(repo)
        new = {p.name for p in journal_files(repo, "api")} - entries
        assert not new, (n, new)  # no lesson made of its own output
        git(repo, "stash", "drop", "-q", check=False)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"round {n}", check=False)
    text = memory_md(repo, "api")
    assert "live facts" not in text.split("\n\n## ")[-1].split("\n")[1]
