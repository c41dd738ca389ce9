"""Which paths a tree holds, asked of one `git cat-file --batch-check` (`memgit.InTree`):
the same answers as listing the whole tree (`memgit.tree_paths`), without listing it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import git, make_repo

from journal_mem.gitops import memgit

ABSENT_COMMIT = "1234567890abcdef1234567890abcdef12345678"  # a submodule not fetched here


def populated(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "r")
    for rel in ("src/app.py", "src/deep/er/mod.py", "docs/a b é.md", "run.sh"):
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{rel}\n")
    (repo / "run.sh").chmod(0o755)
    os.symlink("src/app.py", repo / "link")
    git(repo, "add", "-A")
    for path, commit in (("vendor/here", git(repo, "rev-parse", "HEAD").stdout.strip()),
                         ("vendor/absent", ABSENT_COMMIT)):
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{commit},{path}")
    git(repo, "commit", "-q", "-m", "files")
    return repo


ASKED = ["src/app.py", "src", "src/deep", "src/deep/er/mod.py", "src/deep/er/nope.py",
         "docs/a b é.md", "docs/a b", "run.sh", "link", "vendor/here", "vendor/absent",
         "vendor/absent/inside.py", "vendor", "README", "readme", "nope", "src/app.py/x",
         "./src/app.py", "src/../README", "src//app.py", "", ".", "a\nb", "src/app.py ",
         " src/app.py", "HEAD", "src/app.py:x", "src/ap*"]


def test_every_answer_is_the_whole_listing_s(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    repo = populated(tmp_path)
    whole = memgit.tree_paths(str(repo), "HEAD")
    listed: list[str] = []
    real = memgit.tree_paths
    monkeypatch.setattr(memgit, "tree_paths", lambda root, rev: listed.append(rev) or real(
        root, rev))
    tree = memgit.InTree(str(repo), "HEAD")
    try:
        for path in ASKED:
            assert (path in tree) == (path in whole), path
            if not listed:  # until a path git would read otherwise, no listing
                assert tree.proc is not None and tree.whole is None
    finally:
        tree.close()
    assert listed == ["HEAD"]  # "./src/app.py" and the rest were answered from one listing
    assert tree.proc is None


def test_ordinary_paths_never_list_the_tree_and_share_one_git_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = populated(tmp_path)
    whole = memgit.tree_paths(str(repo), "HEAD")
    monkeypatch.setattr(memgit, "tree_paths", lambda root, rev: pytest.fail("listed"))
    with memgit.ref_checker(str(repo), "HEAD") as exists:
        for path in ASKED[:17]:
            assert exists(path) == (path.strip("/") in whole), path
        proc = exists.tree.proc
        assert proc is not None
        for path in ASKED[:17]:  # asked again: answered from what was kept
            exists(path)
        assert exists.tree.proc is proc
    assert exists.tree.proc is None and proc.returncode == 0  # ended and waited for


def test_past_many_paths_the_tree_is_listed_once(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = populated(tmp_path)
    whole = memgit.tree_paths(str(repo), "HEAD")
    monkeypatch.setattr(memgit.InTree, "MANY", 3)
    tree = memgit.InTree(str(repo), "HEAD")
    answers = [path in tree for path in ASKED[:10]]
    assert tree.whole is not None and tree.proc is None
    assert answers == [path in whole for path in ASKED[:10]]


def test_a_rev_without_a_tree_holds_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", commit=False)
    (repo / "a.py").write_text("a\n")
    with memgit.ref_checker(str(repo), "HEAD") as exists:
        assert not exists("a.py")
        assert exists.tree.proc is None  # no git process for an unborn HEAD


def test_a_renamed_file_exists_under_its_new_name(tmp_path: Path) -> None:
    repo = populated(tmp_path)
    git(repo, "mv", "src/app.py", "src/main.py")
    git(repo, "commit", "-q", "-m", "rename")
    with memgit.ref_checker(str(repo), "HEAD") as exists:
        assert exists("src/app.py") and exists("src/main.py") and not exists("src/gone.py")


def test_past_folders_listed_for_absent_paths_the_tree_is_listed_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = populated(tmp_path)
    whole = memgit.tree_paths(str(repo), "HEAD")
    monkeypatch.setattr(memgit.InTree, "FOLDERS", 2)
    tree = memgit.InTree(str(repo), "HEAD")
    asked = ["src/gone.py", "vendor/absent", "src/deep/gone.py", "docs/gone.md",
             "vendor/here", "gone.py"]
    assert [path in tree for path in asked] == [path in whole for path in asked]
    assert tree.whole is not None and tree.proc is None
    assert sorted(tree.folders) == ["src", "vendor"]
