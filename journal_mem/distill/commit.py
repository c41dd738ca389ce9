"""The distill commit: which memory paths go in, and committing them.

Only memory paths are ever committed (the user's staged work stays staged);
once HEAD holds the distilled files, this machine forgets their blob ids.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container

from journal_mem.distill.files import is_distilled, remember
from journal_mem.gitops import memgit
from journal_mem.repo import Context

RACY_NS = 2_000_000_000  # a file's ctime this close before `git status` started: filed later


def to_commit(ctx: Context, status: list[tuple[str, str]], valid: Container[str],
              touched: list[str], drained: list[str], new: list[str], since: int) -> list[str]:
    """Repo-relative memory paths to commit: distilled files changed (now, or by an earlier
    `--no-commit`) and new valid entries (untracked, staged, or just drained); and of the
    entries this distill folds first (`new`), those `status` (started at `since`, in ns)
    does not list and whose ctime is not older than it: filed after git looked."""
    layout = ctx.layout
    prefix = layout.memory_root + "/"
    out = {prefix + rel for rel in touched}
    listed = {path for _, path in status}
    out.update(prefix + rel for rel in new
               if prefix + rel not in listed
               and _changed_since(os.path.join(layout.main_memory, rel), since))
    out.update(layout.rel(path) for path in drained if path[len(layout.main_memory) + 1:] in valid)
    for xy, path in status:
        rel = path[len(prefix):] if path.startswith(prefix) else path
        if is_distilled(rel) or (rel in valid and xy in ("??", "A ", "AM")):
            out.add(path)
    return sorted(out)


def commit_paths(ctx: Context, paths: list[str], message: Callable[[], str],
                 branch: str = "") -> str | None:
    """Commit `paths` (nothing when empty) with `message()` on `branch` (the one the
    distill started on); the new commit or None."""
    if not paths:
        return None
    layout = ctx.layout
    sha = memgit.commit(ctx.repo.main_root, layout.memory_root, paths, message(),
                        layout.state_dir, branch, ctx.repo.common_dir) or None
    if sha:  # HEAD vouches for these files now
        remember(layout, {}, paths, keep_old=True)
    return sha


def _changed_since(path: str, since: int) -> bool:
    try:
        return os.lstat(path).st_ctime_ns >= since - RACY_NS
    except OSError:
        return False  # gone: nothing to commit
