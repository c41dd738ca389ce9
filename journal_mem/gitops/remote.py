"""The git steps of `jmem distill --push`: fetch, integrate the remote tip, push, unwind.

Every command line lives here; `distill/push.py` decides when to run which.
Each function works on the main checkout at `root` with the cleaned
environment (`clean=True`: no inherited hook variables), and returns what git
said or raises a `GitError` that quotes it.
"""

from __future__ import annotations

import os

from journal_mem.errors import GitError
from journal_mem.gitops import gitcore


def error_text(res: gitcore.GitResult) -> str:
    """What git said (stderr, then stdout) when it failed."""
    return (res.stderr + res.stdout).decode("utf-8", "replace").strip()


def literal_paths(paths: list[str]) -> bytes:
    """Literal pathspecs (`git --literal-pathspecs` would be exported to hooks)."""
    return b"".join(f":(top,literal){p}".encode("utf-8", "surrogateescape") + b"\0"
                    for p in paths)


def rev(root: str, name: str) -> str | None:
    """The commit `name` resolves to, or None."""
    res = gitcore.run(["rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], root,
                      clean=True, check=False)
    return (res.text().strip() or None) if res.ok else None


def is_ancestor(root: str, older: str, newer: str) -> bool:
    """True when `older` is contained in `newer`."""
    return gitcore.run(["merge-base", "--is-ancestor", older, newer], root, clean=True,
                       check=False).ok


def default_remote(root: str, branch: str) -> str:
    """The branch's configured remote, else `origin`."""
    res = gitcore.run(["config", "--get", f"branch.{branch}.remote"], root, clean=True,
                      check=False)
    return res.text().strip() or "origin"


def fetch(root: str, remote: str, branch: str) -> str | None:
    """Fetch the remote branch; its commit id, or None when the remote has no such branch."""
    res = gitcore.run(["fetch", "--quiet", "--no-tags", remote, f"refs/heads/{branch}"], root,
                      clean=True, check=False)
    if not res.ok:
        err = res.stderr.decode("utf-8", "replace").strip()
        if "couldn't find remote ref" in err:
            return None
        raise GitError(f"git fetch {remote} {branch} failed in {root}: {err}",
                       hint="check the remote's name, URL and credentials")
    head = gitcore.run(["rev-parse", "FETCH_HEAD"], root, clean=True)
    return head.text().split()[0]


def fast_forward(root: str, tip: str, what: str) -> None:
    """`git merge --ff-only tip`; a refusal (files in the way) is a GitError naming `what`."""
    res = gitcore.run(["merge", "--ff-only", "--quiet", tip], root, clean=True, check=False)
    if not res.ok:
        raise GitError(f"cannot fast-forward {root} to {what}:\n" + error_text(res),
                       hint="commit, stash or remove the files git names, "
                            "then run `jmem distill --push` again")


def start_merge(root: str, git_dir: str, tip: str) -> list[str]:
    """Merge `tip` without committing; the paths left unmerged. Raises when git could not
    even start the merge (files in the way)."""
    res = gitcore.run(["merge", "--no-ff", "--no-commit", "--quiet", tip], root, clean=True,
                      check=False)
    if not os.path.exists(os.path.join(git_dir, "MERGE_HEAD")):
        raise GitError(f"git merge of the remote tip failed in {root}:\n{error_text(res)}",
                       hint="commit, stash or remove the files git names, then run "
                            "`jmem distill --push` again")
    unmerged = gitcore.run(["diff", "--name-only", "--diff-filter=U", "-z"], root,
                           clean=True).text().split("\0")
    return [p for p in unmerged if p]


def abort_merge(root: str) -> None:
    """`git merge --abort`: the work tree and index as before the merge."""
    gitcore.run(["merge", "--abort"], root, clean=True, check=False)


def conclude_merge(root: str, message: str) -> None:
    """Commit the merge in progress; on failure abort it (nothing changed) and raise."""
    done = gitcore.run(["commit", "--quiet", "--no-edit", "-m", message], root, clean=True,
                       check=False)
    if not done.ok:
        abort_merge(root)
        raise GitError(f"committing the merge of the remote tip failed in {root} "
                       f"(merge aborted, nothing changed):\n{error_text(done)}")


def set_paths(root: str, rev_: str, keep: list[str], gone: list[str]) -> None:
    """Index and work tree: `keep` as in `rev_`, `gone` removed from both."""
    if keep:
        gitcore.run(["checkout", rev_, "--pathspec-from-file=-", "--pathspec-file-nul"], root,
                    clean=True, stdin=literal_paths(keep))
    if gone:
        gitcore.run(["rm", "-q", "-f", "--cached", "--ignore-unmatch", "--pathspec-from-file=-",
                     "--pathspec-file-nul"], root, clean=True, stdin=literal_paths(gone))
        for path in gone:
            try:
                os.unlink(os.path.join(root, path))
            except FileNotFoundError:
                pass


def push(root: str, remote: str, commit: str, branch: str) -> bool:
    """Push `commit` to the remote branch, never forced; False when another writer won."""
    res = gitcore.run(["push", "--porcelain", remote, f"{commit}:refs/heads/{branch}"], root,
                      clean=True, check=False)
    if res.ok:
        return True
    lines = [line for line in res.text().splitlines() if line.startswith("!")]
    if any("[rejected]" in line for line in lines):
        return False  # non-fast-forward / fetch first: the race was lost
    if any("(failed to update ref)" in line for line in lines) and b"cannot lock ref" in \
            res.stderr:
        return False  # the remote's compare-and-swap lost to a push accepted meanwhile
    raise GitError(f"git push {remote} {branch} failed in {root}:\n{error_text(res)}",
                   hint="the remote refused for another reason than a race (protected "
                        "branch? a hook?); nothing was lost locally")


def drop_commit(root: str, commit: str, parent: str, pathspec: str) -> list[str]:
    """Move HEAD back from `commit` to `parent` (`reset --soft`), the index's `pathspec`
    paths with it; the work tree keeps every file. Returns the paths `commit` changed
    under `pathspec`."""
    diff = gitcore.run(["diff", "--name-only", "-z", "--no-renames", parent, commit, "--",
                        pathspec], root, clean=True)
    gitcore.run(["reset", "--quiet", "--soft", parent], root, clean=True)
    gitcore.run(["reset", "--quiet", parent, "--", pathspec], root, clean=True,
                check=False)  # exits 1 when paths stay modified in the work tree
    return [p for p in diff.text().split("\0") if p]
