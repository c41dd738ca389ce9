"""`locate` reads the ordinary repository from git's own files, and asks git otherwise.

Each layout is made by real git. Where the files answer, they answer exactly what
`git rev-parse` (and the main checkout's search) answers; where anything is out of
the ordinary, they say nothing and git answers, or refuses, as before.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import add_worktree, git, make_repo

from journal_mem.errors import UnsupportedRepo
from journal_mem.gitops import gitcore


def fields(repo: gitcore.Repo) -> tuple[str, str, str, str]:
    return repo.git_dir, repo.common_dir, repo.worktree_root, repo.main_root


def read(cwd: Path) -> tuple[str, str, str, str] | None:
    found = gitcore._read_from_files(str(cwd))
    return None if found is None else fields(found)


def asked(cwd: Path) -> tuple[str, str, str, str]:
    return fields(gitcore._asked_of_git(str(cwd)))


def test_the_files_answer_what_git_answers_in_ordinary_layouts(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    (main / "src" / "deep").mkdir(parents=True)
    wt = add_worktree(main, tmp_path / "wt")
    (wt / "sub").mkdir()
    inner = make_repo(main / "src" / "vendored")  # a repository inside another's tree
    os.symlink(main / "src" / "deep", tmp_path / "link")
    sep = tmp_path / "sep"
    git(tmp_path, "init", "-q", "-b", "main", "--separate-git-dir", str(tmp_path / "gd"),
        str(sep))
    places = [main, main / "src" / "deep", wt, wt / "sub", inner, tmp_path / "link", sep]
    for cwd in places:
        assert read(cwd) == asked(cwd), cwd
    assert read(wt) == (os.path.realpath(main / ".git" / "worktrees" / "wt"),
                        os.path.realpath(main / ".git"), os.path.realpath(wt),
                        os.path.realpath(main))
    found = read(inner)
    assert found is not None and found[3] == os.path.realpath(inner)


def test_a_hook_in_the_main_checkout_still_reads_the_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    main = make_repo(tmp_path / "main")
    monkeypatch.setenv("GIT_INDEX_FILE", str(main / ".git" / "index"))
    monkeypatch.setenv("GIT_PREFIX", "")
    assert read(main) == asked(main)
    monkeypatch.setenv("GIT_DIR", str(main / ".git"))  # a linked worktree's hook has this
    assert read(main) is None


@pytest.mark.parametrize("setting", [
    ("core.worktree", "../elsewhere"),
    ("core.bare", "true"),
    ("core.bare", "yes"),
    ("extensions.worktreeConfig", "true"),
    ("include.path", "other.cfg"),
    ("includeIf.gitdir:/nowhere/.path", "other.cfg"),
])
def test_a_config_that_moves_or_changes_the_repository_is_left_to_git(
        tmp_path: Path, setting: tuple[str, str]) -> None:
    main = make_repo(tmp_path / "main")
    git(main, "config", *setting)
    assert read(main) is None


def test_odd_config_syntax_is_left_to_git(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    config = main / ".git" / "config"
    plain = config.read_text()
    assert read(main) is not None
    for odd in ('[core] bare = true\n', '[core]\n\tbare = "true"\n', '[core]\n\tbare\n',
                '[alias]\n\tx = !echo \\\n[core]\n', '[core]\n\trepositoryformatversion = 2\n'):
        config.write_text(plain + odd)
        assert read(main) is None, odd
    config.write_text(plain + '[core]\n\tBare = False ; said twice\n[remote "o"]\n\tbare = 1\n')
    assert read(main) == asked(main)


def test_what_git_refuses_or_reads_otherwise_is_left_to_git(tmp_path: Path) -> None:
    src = make_repo(tmp_path / "src")
    git(tmp_path, "clone", "-q", "--bare", str(src), str(tmp_path / "b.git"))
    bare_wt = tmp_path / "bare-wt"
    git(tmp_path / "b.git", "worktree", "add", "-q", str(bare_wt), "main")
    lib, sup = make_repo(tmp_path / "lib"), make_repo(tmp_path / "super")
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    sep = tmp_path / "sep"
    git(tmp_path, "init", "-q", "-b", "main", "--separate-git-dir", str(tmp_path / "gd"),
        str(sep))
    (sep / "f").write_text("x")
    git(sep, "add", "f")
    git(sep, "commit", "-q", "-m", "x")
    git(tmp_path / "gd", "config", "core.worktree", str(sep))
    sep_wt = add_worktree(sep, tmp_path / "sep-wt")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("not a gitfile\n")
    for cwd in (tmp_path / "b.git", tmp_path / "b.git" / "refs", bare_wt, sup / "lib", sep_wt,
                src / ".git" / "refs", broken, tmp_path):
        assert read(cwd) is None, cwd
    assert gitcore.locate(str(sep_wt)).main_root == os.path.realpath(sep)  # git answered
    assert gitcore.locate(str(sup / "lib")).main_root == os.path.realpath(sup / "lib")
    with pytest.raises(UnsupportedRepo, match="bare"):
        gitcore.locate(str(bare_wt))


def test_a_worktree_whose_main_checkout_is_gone_is_left_to_git(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    wt = add_worktree(main, tmp_path / "wt")
    assert read(wt) is not None
    (main / "README").unlink()
    os.rename(main / ".git", tmp_path / "moved.git")  # the main checkout has no .git now
    assert read(wt) is None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a folder to another user needs root")
def test_a_repository_of_another_user_is_left_to_git(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    assert read(main) is not None
    os.chown(main, 12345, -1)  # git's safe.directory check decides then
    assert read(main) is None
    os.chown(main, 0, -1)
    os.chown(main / ".git", 12345, -1)
    assert read(main) is None
