"""Two clones that both distilled meet on a plain `git pull` (merge or rebase): no conflict
on MEMORY.md, topic files or distill-state.json, and the distill the post-merge (or
post-rewrite) hook starts folds every lesson of both sides. Also with CI's
`jmem distill --push` as the other side."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import base_env, git, jmem, make_repo
from scale_helpers import MEM, clone, titles, write

from journal_mem.gitops import mergedriver
from journal_mem.journal.lock import held_by

pytestmark = pytest.mark.reliability


def make_remote(tmp: Path) -> Path:
    """A bare remote whose first commit holds `jmem init`'s files, .gitattributes included."""
    seed = make_repo(tmp / "seed")
    proc = jmem(seed, "init", "--agent", "api", "--agent", "web", "--no-claude")
    assert proc.returncode == 0, proc.stderr
    assert (seed / ".gitattributes").exists()
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "init journal-mem")
    remote = tmp / "remote.git"
    git(tmp, "clone", "-q", "--bare", str(seed), str(remote))
    return remote


def distilled_here(path: Path, agent: str, title: str) -> None:
    write(path, agent, title)
    proc = jmem(path, "distill")
    assert proc.returncode == 0, proc.stderr
    assert title in titles(path, agent)


def settle(path: Path, wanted: list[tuple[str, str]], timeout: float = 90.0) -> None:
    """Wait for the hook's background distill to fold every (agent, title) and finish."""
    state = str(path / ".git" / "journal-mem")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = all(title in titles(path, agent) for agent, title in wanted)
        if done and not mergedriver.wanted(state) and not held_by(state) and git(
                path, "status", "--porcelain").stdout == "":
            return
        time.sleep(0.2)
    log = Path(state, "logs", "distill.log")
    raise AssertionError(f"not distilled in {timeout} s:\n"
                         f"{log.read_text() if log.exists() else 'no log'}")


def both_distilled(tmp_path: Path, other: str) -> tuple[Path, Path]:
    """The remote and a laptop clone; the laptop and another side (a clone that pushes,
    or CI's `distill --push`) each distilled their own lessons."""
    remote = make_remote(tmp_path)
    laptop = clone(remote, tmp_path / "laptop", hooks=True)
    second = clone(remote, tmp_path / "second", hooks=True)
    distilled_here(laptop, "api", "Laptop lesson one")
    write(laptop, "web", "Laptop lesson two")
    assert jmem(laptop, "distill").returncode == 0
    if other == "ci":
        write(second, "api", "CI side lesson")
        proc = jmem(second, "distill", "--push")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    else:
        distilled_here(second, "api", "CI side lesson")
        git(second, "push", "-q", "origin", "HEAD")
    return remote, laptop


def test_without_the_driver_the_same_pull_conflicts(tmp_path: Path) -> None:
    """The control: what the driver prevents."""
    _, laptop = both_distilled(tmp_path, "clone")
    git(laptop, "config", "--remove-section", f"merge.{mergedriver.NAME}")
    pulled = git(laptop, "pull", "--no-edit", "--no-rebase", "origin", "main", check=False)
    assert pulled.returncode != 0 and "CONFLICT" in pulled.stdout
    assert f"{MEM}/api/MEMORY.md" in pulled.stdout


@pytest.mark.parametrize("how", ["merge", "rebase"])
@pytest.mark.parametrize("other", ["clone", "ci"])
def test_pull_after_both_sides_distilled(tmp_path: Path, how: str, other: str) -> None:
    remote, laptop = both_distilled(tmp_path, other)
    pulled = git(laptop, "pull", "--no-edit", f"--{'rebase' if how == 'rebase' else 'no-rebase'}",
                 "origin", "main", check=False, env=base_env())
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert "CONFLICT" not in pulled.stdout + pulled.stderr
    settle(laptop, [("api", "Laptop lesson one"), ("api", "CI side lesson"),
                    ("web", "Laptop lesson two")])
    check = jmem(laptop, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    git(laptop, "push", "-q", "origin", "HEAD")
    final = clone(remote, tmp_path / "final")
    assert "CI side lesson" in (final / MEM / "api" / "MEMORY.md").read_text()
    assert "Laptop lesson one" in (final / MEM / "api" / "MEMORY.md").read_text()
