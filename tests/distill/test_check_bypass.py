"""`git revert` and `git cherry-pick` run no pre-commit hook: `jmem check` catches
what they bring (docs/DESIGN.md, "Git facts this design relies on")."""

from __future__ import annotations

from pathlib import Path

from distill_helpers import MEM, head, lesson
from helpers import git, jmem


def guarded(repo: Path) -> Path:
    """`repo` with the git hooks installed, one committed lesson, and a distill."""
    assert jmem(repo, "init", "--no-claude").returncode == 0
    config = repo / ".claude" / "journal-mem.toml"  # no background distill holding the lock
    text = config.read_text().replace("[hooks]\n", "[hooks]\ndistill_on_commit = false\n")
    config.write_text(text)
    lesson(repo, "api", "k1", title="Use the cache")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a lesson")
    assert jmem(repo, "distill").returncode == 0
    return repo


def test_a_revert_deleting_a_journal_entry_passes_git_and_fails_check(repo: Path) -> None:
    guarded(repo)
    base = head(repo)
    entry = next((repo / MEM / "api" / "journal").glob("*-k1.md"))
    rel = str(entry.relative_to(repo))
    git(repo, "rm", "-q", rel)
    assert git(repo, "commit", "-q", "-m", "delete", check=False).returncode == 1  # the guard
    git(repo, "reset", "-q", "--hard", "HEAD")
    adding = git(repo, "log", "--format=%H", "--diff-filter=A", "--", rel).stdout.split()[-1]
    git(repo, "revert", "--no-edit", adding)  # no pre-commit hook runs
    assert not entry.exists()
    proc = jmem(repo, "check", "--base", base)
    assert proc.returncode == 1
    assert f"{rel}: journal entry deleted since" in proc.stdout


def test_a_cherry_picked_hand_edit_passes_git_and_fails_check(repo: Path) -> None:
    guarded(repo)
    target = repo / MEM / "api" / "MEMORY.md"
    git(repo, "switch", "-q", "-c", "side")
    target.write_text(target.read_text() + "- sneaky [k9]\n")
    git(repo, "commit", "-q", "--no-verify", "-am", "hand edit")
    edit = head(repo)
    git(repo, "switch", "-q", "main")
    git(repo, "cherry-pick", edit)  # no pre-commit hook runs
    assert "sneaky" in target.read_text()
    proc = jmem(repo, "check")
    assert proc.returncode == 1
    assert f"{MEM}/api/MEMORY.md: differs from a rebuild" in proc.stdout
