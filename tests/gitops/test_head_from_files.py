"""`gitcore.head_from_files` says what `git rev-parse --verify HEAD` says, or nothing;
`ref_from_files` what `git rev-parse --verify REF^{commit}` says of a branch, and
`current_branch` with a git dir what `git symbolic-ref --short HEAD` says: the distill's
commit reads them so (`memgit.commit`, `recover`), without a git process each."""

from __future__ import annotations

from pathlib import Path

from helpers import git

from journal_mem.gitops.gitcore import current_branch, head_from_files, ref_from_files


def rev_parse(repo: Path) -> str:
    proc = git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def branch_tip(repo: Path, ref: str) -> str:
    proc = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def agrees(repo: Path) -> None:
    """Every reading from the files is git's own."""
    common = str(repo / ".git")
    assert head_from_files(common) == rev_parse(repo)
    short = git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.strip()
    assert current_branch(str(repo), common) == short == current_branch(str(repo))
    for ref in ("refs/heads/main", "refs/heads/feat/deep", "refs/heads/fresh",
                "refs/heads/none"):
        assert ref_from_files(common, ref) == branch_tip(repo, ref), ref


def test_it_agrees_with_git_in_every_state_of_a_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    common = repo / ".git"
    assert head_from_files(str(common)) == rev_parse(repo) == ""  # unborn
    agrees(repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    assert head_from_files(str(common)) == rev_parse(repo) != ""  # a loose ref
    agrees(repo)
    git(repo, "pack-refs", "--all")
    assert not (common / "refs" / "heads" / "main").exists()
    assert head_from_files(str(common)) == rev_parse(repo)  # only in packed-refs
    agrees(repo)
    git(repo, "checkout", "-q", "-b", "feat/deep")
    git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    assert head_from_files(str(common)) == rev_parse(repo)
    agrees(repo)
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "three")  # loose again, packed stale
    agrees(repo)
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert head_from_files(str(common)) == rev_parse(repo)
    agrees(repo)
    git(repo, "checkout", "-q", "--orphan", "fresh")
    assert head_from_files(str(common)) == rev_parse(repo) == ""
    agrees(repo)


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
    for ref in ("refs/heads/main", "refs/heads/.invalid", "refs/tags/v1", "HEAD",
                "refs/heads/../../x", "refs/heads/a\0b"):
        assert ref_from_files(str(common), ref) is None, ref
    for text in ("ref: refs/heads/\n", "ref: refs/heads/a\0b\n"):  # git says it, or fails
        (common / "HEAD").write_text(text)
        assert head_from_files(str(common)) is None
        assert current_branch(str(tmp_path), str(common)) == ""  # asked of git: not a repo
    (common / "HEAD").write_text("ref: refs/remotes/origin/main\n")
    assert current_branch(str(tmp_path), str(common)) == ""  # asked of git: not a repo
