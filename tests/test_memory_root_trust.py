"""`memory_root` is trusted from the committed side, never from the commit being judged,
and can never point into git's own folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from guardkit import MEM, commit, commit_in_main, env, install_hooks, lesson, put
from helpers import git, jmem

ENTRY = f"{MEM}/api/journal/2026-01-02-run-the-api-tests.md"
MEMORY_MD = f"{MEM}/api/MEMORY.md"
CONFIG = ".claude/journal-mem.toml"


def _move_root(repo: Path, root: str) -> None:
    put(repo, CONFIG, f'memory_root = "{root}"\n' + (repo / CONFIG).read_text())


@pytest.mark.parametrize("root", [".git", ".git/hooks", "sub/.GIT/x", ".Git"])
def test_a_root_inside_a_git_folder_is_refused(repo: Path, root: str) -> None:
    _move_root(repo, root)
    before = sorted(p.name for p in (repo / ".git").iterdir())
    for args in (["status"], ["distill"], ["write", "--agent", "api", "--topic", "t",
                                             "--title", "A lesson", "--body", "x"]):
        proc = jmem(repo, *args)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "memory_root: must be a relative path inside the work tree" in proc.stderr
        assert "outside any .git folder" in proc.stderr
    assert sorted(p.name for p in (repo / ".git").iterdir()) == before
    assert not (repo / ".git" / "api").exists()


def test_guard_refuses_a_commit_that_moves_the_root_and_edits_memory(repo: Path) -> None:
    install_hooks(repo)
    commit_in_main(repo, ENTRY, lesson())
    commit_in_main(repo, MEMORY_MD, "# api memory\n")
    _move_root(repo, "elsewhere")
    put(repo, MEMORY_MD, "# api memory\n- a fact nobody distilled\n")
    put(repo, ENTRY, lesson(body="Rewritten."))
    git(repo, "add", "-A")
    before = git(repo, "rev-parse", "HEAD").stdout
    proc = commit(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stderr
    assert f"moves memory_root from {MEM}/ to elsewhere/" in out
    assert f"  {MEMORY_MD}\n" in out and f"  {ENTRY}\n" in out
    # a deliberate move is allowed, but the edits under the old root are still judged
    proc = commit(repo, env=env(JMEM_ALLOW_ROOT_MOVE="1"))
    assert proc.returncode == 1 and "moves memory_root" not in proc.stderr
    assert f"  {MEMORY_MD}\n" in proc.stderr and f"  {ENTRY}\n" in proc.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


def test_a_plain_move_passes_with_the_flag(repo: Path) -> None:
    install_hooks(repo)
    _move_root(repo, "memory")
    git(repo, "mv", MEM, "memory")
    git(repo, "add", "-A")
    assert commit(repo).returncode == 1
    proc = commit(repo, env=env(JMEM_ALLOW_ROOT_MOVE="1"))
    assert proc.returncode == 0, proc.stderr


def test_the_first_commit_of_a_custom_root_is_not_a_move(tmp_path: Path) -> None:
    from helpers import make_repo

    main = make_repo(tmp_path / "m")
    (main / ".claude").mkdir()
    (main / CONFIG).write_text('memory_root = "memory"\n')
    proc = jmem(main, "init", "--agent", "api", "--no-claude")
    assert proc.returncode == 0, proc.stderr
    git(main, "add", "-A")
    proc = commit(main)
    assert proc.returncode == 0, proc.stderr


def test_an_unstaged_root_change_does_not_hide_a_staged_hand_edit(repo: Path) -> None:
    """The guard's fast path reads the work tree's config; a root moved there (not staged)
    must not let a hand edit under the committed root through."""
    install_hooks(repo)
    commit_in_main(repo, MEMORY_MD, "# api memory\n")
    put(repo, MEMORY_MD, "# api memory\n- a fact nobody distilled\n")
    git(repo, "add", "--", MEMORY_MD)
    _move_root(repo, "elsewhere")  # left unstaged
    proc = commit(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"  {MEMORY_MD}\n" in proc.stderr
