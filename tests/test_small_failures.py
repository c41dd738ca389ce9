"""Small failures a new user meets: each is an ordinary exit code and message, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import base_env, git, jmem, journal_files, make_repo


@pytest.mark.parametrize("limit", ["99999999999999999999", "10001", "0"])
def test_recall_limit_out_of_range_is_a_usage_error(repo: Path, limit: str) -> None:
    proc = jmem(repo, "recall", "tests", "--limit", limit)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--limit" in proc.stderr and "unexpected error" not in proc.stderr


def test_recall_limit_at_the_bound_works(repo: Path) -> None:
    proc = jmem(repo, "recall", "tests", "--limit", "10000")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("char", ["\n", "\f", "\x85", "\u2028"], ids=["LF", "FF", "NEL", "LS"])
def test_repository_path_with_a_line_break_character(tmp_path: Path, char: str) -> None:
    main = make_repo(tmp_path / f"my{char}project")
    proc = jmem(main, "init", "--agent", "api", "--no-claude", "--no-git-hooks")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = jmem(main / ".claude", "write", "--agent", "api", "--topic", "testing", "--title",
                "A lesson", "--body", "Detail.")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(journal_files(main, "api")) == 1
    assert jmem(main, "status").returncode == 0


@pytest.mark.parametrize("where", ["main", "worktree"])
def test_git_dir_set_in_a_subdirectory(repo: Path, tmp_path: Path, where: str) -> None:
    top = repo
    git_dir = repo / ".git"
    if where == "worktree":
        top = tmp_path / "wt"
        git(repo, "worktree", "add", "-q", "-b", "wt", str(top))
        git_dir = repo / ".git" / "worktrees" / "wt"
    (top / "sub").mkdir()
    env = base_env(GIT_DIR=str(git_dir))
    proc = jmem(top / "sub", "write", "--agent", "api", "--topic", "testing", "--title",
                "A lesson", "--body", "Detail.", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(journal_files(repo, "api")) == 1  # the main checkout's journal
    assert not (top / "sub" / ".claude").exists()
