"""`gitcore.head_from_files` says what `git rev-parse --verify HEAD` says, or nothing."""

from __future__ import annotations

from pathlib import Path

from helpers import git

from journal_mem.gitops.gitcore import head_from_files


def rev_parse(repo: Path) -> str:
    proc = git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def test_it_agrees_with_git_in_every_state_of_a_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    common = repo / ".git"
    assert head_from_files(str(common)) == rev_parse(repo) == ""  # unborn
    git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    assert head_from_files(str(common)) == rev_parse(repo) != ""  # a loose ref
    git(repo, "pack-refs", "--all")
    assert not (common / "refs" / "heads" / "main").exists()
    assert head_from_files(str(common)) == rev_parse(repo)  # only in packed-refs
    git(repo, "checkout", "-q", "-b", "feat/deep")
    git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    assert head_from_files(str(common)) == rev_parse(repo)
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert head_from_files(str(common)) == rev_parse(repo)
    git(repo, "checkout", "-q", "--orphan", "fresh")
    assert head_from_files(str(common)) == rev_parse(repo) == ""


def test_what_it_cannot_read_it_leaves_to_git(tmp_path: Path) -> None:
    common = tmp_path / "git"
    common.mkdir()
    for text in ("ref: refs/heads/.invalid\n", "ref: HEAD2\n", "garbage\n",
                 "ref: refs/heads/../../etc\n"):
        (common / "HEAD").write_text(text)
        assert head_from_files(str(common)) is None, text
    (common / "HEAD").write_text("ref: refs/heads/main\n")
    (common / "refs" / "heads").mkdir(parents=True)
    (common / "refs" / "heads" / "main").write_text("ref: refs/heads/other\n")
    assert head_from_files(str(common)) is None
    assert head_from_files(str(tmp_path / "missing")) is None
