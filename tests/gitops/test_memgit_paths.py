"""What the recall index asks git when HEAD moved: which files the commits between two
heads added or deleted, and which paths a citation's renames reach."""

from __future__ import annotations

from pathlib import Path

from helpers import git, make_repo

from journal_mem.gitops import memgit


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def test_files_added_or_deleted_names_each_commit_and_each_parent_of_a_merge(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    start = head(repo)
    (repo / "README").write_text("changed\n")
    git(repo, "commit", "-q", "-am", "only a change")
    assert memgit.files_added_or_deleted(str(repo), start, head(repo)) == []
    (repo / "a file with spaces.txt").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add")
    added = head(repo)
    git(repo, "mv", "a file with spaces.txt", "moved.txt")
    git(repo, "commit", "-q", "-m", "rename")
    moved = head(repo)
    assert memgit.files_added_or_deleted(str(repo), start, moved) == [
        (moved, "a file with spaces.txt"), (moved, "moved.txt"),
        (added, "a file with spaces.txt")]
    assert memgit.files_added_or_deleted(str(repo), moved, start) is None  # not descending
    git(repo, "checkout", "-q", "-b", "side", start)
    (repo / "side.txt").write_text("s\n")
    git(repo, "add", "side.txt")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "checkout", "-q", "-")
    git(repo, "merge", "-q", "--no-edit", "side")
    merged = head(repo)
    changed = memgit.files_added_or_deleted(str(repo), moved, merged)
    assert changed is not None and (merged, "side.txt") in changed  # the merge brings it


def test_reached_follows_rename_chains_and_folders_only_under_their_slash() -> None:
    renames = {"a": "b", "b": "c", "src/x.py": "lib/x.py", "lib/x.py": "a", "srcx/y": "q"}
    assert memgit.reached({"src/"}, renames) == {"src", "src/x.py", "lib/x.py", "a", "b", "c"}
    assert memgit.reached({"c"}, renames) == {"c"}
    assert memgit.reached({"a"}, {"a": "b", "b": "a"}) == {"a", "b"}  # a cycle ends
