"""Step 2 of `jmem distill --push` when histories diverged: merge the remote tip.

A real merge of the remote tip T (local commits are never rewritten). Every
distilled file the merge changes takes T's version verbatim, which the
pre-commit guard accepts because it equals MERGE_HEAD's; the distill that
follows recomputes them all from the union of both journals. Any other
conflict aborts the merge, nothing changed. See `push.py` for the whole
protocol and docs/DESIGN.md, "Many machines".
"""

from __future__ import annotations

import os

from journal_mem.errors import GitError, PolicyViolation
from journal_mem.gitops import gitfacts, staged
from journal_mem.store.context import Context
from journal_mem.store.distill.files import is_distilled


def git_error_text(res: gitfacts.GitResult) -> str:
    """What git said (stderr, then stdout) when it failed."""
    return (res.stderr + res.stdout).decode("utf-8", "replace").strip()


def literal_paths(paths: list[str]) -> bytes:
    """Literal pathspecs (`git --literal-pathspecs` would be exported to hooks)."""
    return b"".join(f":(top,literal){p}".encode("utf-8", "surrogateescape") + b"\0"
                    for p in paths)


def is_distilled_path(ctx: Context, path: str) -> bool:
    """True for a distilled file under the memory root (a path from the repository top)."""
    prefix = ctx.layout.memory_root + "/"
    return path.startswith(prefix) and is_distilled(path[len(prefix):])


def merge_taking_theirs(ctx: Context, tip: str, message: str) -> None:
    """Merge `tip`, every distilled file it changes taken verbatim from `tip`; commit."""
    root = ctx.repo.main_root
    res = gitfacts.run(["merge", "--no-ff", "--no-commit", "--quiet", tip], root, clean=True,
                       check=False)
    if not os.path.exists(os.path.join(ctx.repo.git_dir, "MERGE_HEAD")):
        raise GitError(f"git merge of the remote tip failed in {root}:\n{git_error_text(res)}",
                       hint="commit, stash or remove the files git names, then run "
                            "`jmem distill --push` again")
    changes = staged.changes(root, ctx.layout.memory_root, clean=True)
    unmerged = gitfacts.run(["diff", "--name-only", "--diff-filter=U", "-z"], root,
                            clean=True).text().split("\0")
    others = sorted(p for p in unmerged if p and not is_distilled_path(ctx, p))
    if others:
        gitfacts.run(["merge", "--abort"], root, clean=True, check=False)
        raise PolicyViolation(
            "the remote tip conflicts with local commits outside the distilled files "
            "(merge aborted, nothing changed):\n" + "\n".join(f"  {p}" for p in others),
            hint="`git pull` and resolve the conflicts by hand, then run "
                 "`jmem distill --push` again")
    take_theirs(ctx, tip, sorted({c.path for c in changes if is_distilled_path(ctx, c.path)}))
    done = gitfacts.run(["commit", "--quiet", "--no-edit", "-m", message], root, clean=True,
                        check=False)
    if not done.ok:
        gitfacts.run(["merge", "--abort"], root, clean=True, check=False)
        raise GitError(f"committing the merge of the remote tip failed in {root} "
                       f"(merge aborted, nothing changed):\n{git_error_text(done)}")


def take_theirs(ctx: Context, rev_: str, paths: list[str]) -> None:
    """Set `paths` (index and work tree) to their version in `rev_`; delete those it lacks."""
    if not paths:
        return
    root = ctx.repo.main_root
    there = staged.tree_blobs(root, rev_, ctx.layout.memory_root)
    keep = [p for p in paths if p in there]
    gone = [p for p in paths if p not in there]
    if keep:
        gitfacts.run(["checkout", rev_, "--pathspec-from-file=-",
                      "--pathspec-file-nul"], root, clean=True, stdin=literal_paths(keep))
    if gone:
        gitfacts.run(["rm", "-q", "-f", "--cached", "--ignore-unmatch",
                      "--pathspec-from-file=-", "--pathspec-file-nul"], root, clean=True,
                     stdin=literal_paths(gone))
        for path in gone:
            try:
                os.unlink(os.path.join(root, path))
            except FileNotFoundError:
                pass
