"""`check --base REF`: what a branch did to memory, whatever kind of commit did it.

Merges (edits made while resolving one), reverts and cherry-picks run no
pre-commit hook; a commit that moves `memory_root` must not choose which of
its own edits are looked at.
"""

from __future__ import annotations

from pathlib import Path

from guardkit import MEM, lesson, put
from helpers import git, jmem

ENTRY = f"{MEM}/api/journal/2026-01-02-run-the-api-tests.md"
SIDE = f"{MEM}/web/journal/2026-01-03-side-lesson.md"
CONFIG = ".claude/journal-mem.toml"


def commit_all(cwd: Path, message: str) -> str:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "--no-verify", "-m", message)
    return git(cwd, "rev-parse", "HEAD").stdout.strip()


def check(repo: Path, base: str, *extra: str) -> tuple[int, str]:
    proc = jmem(repo, "check", "--base", base, *extra)
    return proc.returncode, proc.stdout + proc.stderr


def test_entry_edited_while_resolving_a_merge(repo: Path) -> None:
    put(repo, ENTRY, lesson())
    base = commit_all(repo, "lesson")
    git(repo, "switch", "-q", "-c", "side")
    put(repo, "side.txt", "side\n")
    commit_all(repo, "side work")
    git(repo, "switch", "-q", "main")
    git(repo, "switch", "-q", "-c", "feature")
    put(repo, "feature.txt", "feature\n")
    commit_all(repo, "feature work")
    assert check(repo, base) == (0, "jmem check: ok\n")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    put(repo, ENTRY, lesson(body="Rewritten while the merge was open."))
    commit_all(repo, "merge side")
    code, out = check(repo, base)
    assert code == 1, out
    assert f"{ENTRY}: journal entry modified since {base}" in out


def test_entry_from_the_merged_branch_edited_in_the_merge(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").stdout.strip()
    git(repo, "switch", "-q", "-c", "side")
    put(repo, SIDE, lesson(agent="web", title="Side lesson"))
    commit_all(repo, "side lesson")
    git(repo, "switch", "-q", "main")
    put(repo, "main.txt", "main\n")
    commit_all(repo, "main work")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    put(repo, SIDE, lesson(agent="web", title="Side lesson", body="Changed in the merge."))
    commit_all(repo, "merge side")
    code, out = check(repo, base)
    assert code == 1, out
    assert f"{SIDE}: journal entry modified since {base}" in out


def test_revert_and_cherry_pick_are_caught(repo: Path) -> None:
    put(repo, ENTRY, lesson())
    base = commit_all(repo, "lesson")
    git(repo, "switch", "-q", "-c", "other")
    put(repo, ENTRY, lesson(body="Edited on another branch."))
    edit = commit_all(repo, "edit the entry")
    git(repo, "switch", "-q", "main")
    git(repo, "switch", "-q", "-c", "picked")
    git(repo, "cherry-pick", edit)  # runs no pre-commit hook
    code, out = check(repo, base)
    assert code == 1 and f"{ENTRY}: journal entry modified since {base}" in out, out
    git(repo, "switch", "-q", "-c", "reverted", "main")
    git(repo, "revert", "--no-edit", base)  # deletes the entry, no pre-commit hook either
    code, out = check(repo, base + "~1")
    assert code == 1 and f"{ENTRY}: journal entry deleted since {base}~1" in out, out


def test_moving_memory_root_is_refused_and_the_old_root_still_judged(repo: Path) -> None:
    put(repo, ENTRY, lesson())
    base = commit_all(repo, "lesson")
    put(repo, CONFIG, 'memory_root = "elsewhere"\n' + (repo / CONFIG).read_text())
    (repo / "elsewhere").mkdir()
    (repo / "elsewhere" / ".gitkeep").write_text("")
    put(repo, ENTRY, lesson(body="Rewritten in the commit that moves the root."))
    commit_all(repo, "move the root and edit an entry")
    code, out = check(repo, base)
    assert code == 1, out
    assert f"{CONFIG}: memory_root moved from {MEM}/ to elsewhere/" in out
    assert f"{ENTRY}: journal entry modified since {base}" in out
    code, out = check(repo, base, "--allow-root-move")
    assert code == 1 and "memory_root moved" not in out
    assert f"{ENTRY}: journal entry modified since {base}" in out
