"""Finding the main checkout from anywhere, and refusing what has none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import add_worktree, git, make_repo

from journal_mem.errors import UnsupportedRepo
from journal_mem.gitops.gitcore import locate


def real(path: Path) -> str:
    return os.path.realpath(path)


def test_main_checkout(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "m")
    (main / "sub" / "dir").mkdir(parents=True)
    found = locate(str(main / "sub" / "dir"))
    assert found.is_main and found.main_root == real(main) == found.worktree_root
    assert found.common_dir == real(main / ".git")


def test_linked_worktree_subdirectory(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "m")
    wt = add_worktree(main, tmp_path / "w")
    (wt / "deep").mkdir()
    found = locate(str(wt / "deep"))
    assert not found.is_main
    assert found.main_root == real(main) and found.worktree_root == real(wt)
    assert found.state_dir == os.path.join(real(main / ".git"), "journal-mem")


def test_submodule_and_its_worktree(tmp_path: Path) -> None:
    lib = make_repo(tmp_path / "lib")
    sup = make_repo(tmp_path / "super")
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    found = locate(str(sup / "lib"))
    assert found.is_main and found.main_root == real(sup / "lib")
    wt = add_worktree(sup / "lib", tmp_path / "libwt")
    found = locate(str(wt))
    assert not found.is_main and found.main_root == real(sup / "lib")


def test_separate_git_dir(tmp_path: Path) -> None:
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", "-b", "main", "--separate-git-dir", str(tmp_path / "gd"), str(work))
    (work / "f").write_text("x")
    git(work, "add", "f")
    git(work, "commit", "-q", "-m", "x")
    assert locate(str(work)).main_root == real(work)
    git(tmp_path / "gd", "config", "core.worktree", str(work))
    wt = add_worktree(work, tmp_path / "wt")
    found = locate(str(wt))
    assert found.main_root == real(work) and not found.is_main


def test_bare_repository_with_worktrees_is_unsupported(tmp_path: Path) -> None:
    src = make_repo(tmp_path / "src")
    git(tmp_path, "clone", "-q", "--bare", str(src), str(tmp_path / "b.git"))
    wt = tmp_path / "wt"
    git(tmp_path / "b.git", "worktree", "add", "-q", str(wt), "main")
    with pytest.raises(UnsupportedRepo, match="bare"):
        locate(str(wt))
    with pytest.raises(UnsupportedRepo, match="bare"):
        locate(str(tmp_path / "b.git"))


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedRepo, match="not inside a git work tree"):
        locate(str(tmp_path))


def test_empty_answers_from_rev_parse_are_no_repository(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """git that exits 0 with nothing to say (its stdout lost) is not a repository at the
    current folder: `realpath("")` is the folder, where the state would then go."""
    from journal_mem.gitops import gitcore

    monkeypatch.setattr(gitcore, "_rev_parse", lambda cwd: (0, ["", "", "false", ""]))
    with pytest.raises(UnsupportedRepo, match="not inside a git work tree"):
        gitcore.locate(str(tmp_path))
