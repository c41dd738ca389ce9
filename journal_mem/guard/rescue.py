"""`jmem rescue`: move memory changes out of a linked worktree, losing nothing.

Every path under the worktree's memory root that differs from HEAD (staged,
in the work tree, or untracked) is filed by `capture/filing.py`, the code the
capture of a native Write/Edit runs: lessons into the main checkout's
journal, native memory files whole, an edit of `MEMORY.md` or a topic file
diffed against the distilled version the worktree holds. The work tree's copy
is the one filed (it is newer than the staged one); a file goes back to HEAD
only after everything it held was filed: if filing fails, it stays as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from journal_mem.capture.filing import CheckoutFile, file_source, kind_of
from journal_mem.errors import JournalMemError, PolicyViolation
from journal_mem.gitops import gitcore, staged
from journal_mem.journal.ignored import refuse_ignored
from journal_mem.repo import Context, open_context


@dataclass
class RescueReport:
    """What went where; `failed` lines name what stayed in the worktree, and why."""

    lines: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def rescue(cwd: str) -> RescueReport:
    """Rescue every memory change of the linked worktree around `cwd`."""
    ctx = open_context(cwd)
    if ctx.repo.is_main:
        raise PolicyViolation(
            "jmem rescue moves memory out of a linked worktree; this is the main checkout",
            hint="lessons written here are already in the journal: commit them "
                 "(the guard checks them)")
    report = RescueReport()
    sources = _sources(ctx)
    agents = {agent for s in sources if (agent := kind_of(s.rel)[1]) is not None}
    refuse_ignored(ctx.layout, sorted(agents), "rescue")  # the lessons would never be committed
    if not sources:
        report.lines.append(f"nothing to rescue under {ctx.layout.memory_root}/ in this worktree")
    # memory files before the index naming them: a line linking a filed file is its line
    for source in sorted(sources, key=lambda s: kind_of(s.rel)[0] != "native"):
        try:
            filing = file_source(ctx, source)
        except (JournalMemError, OSError) as exc:
            reason = exc.message if isinstance(exc, JournalMemError) else str(exc)
            report.failed.append(f"{source.path}: left in place: {reason}")
            continue
        if filing.failed:
            report.failed.append(f"{source.path}: left in place: {filing.failed}")
            continue
        if filing.whole:  # one file, one lesson (or its parts)
            report.lines += [f"{source.path} -> {p}" for p in filing.entries]
        else:
            report.lines.append(filing.line)
            report.lines += [f"  -> {ctx.layout.rel(p)}" for p in filing.entries]
        report.lines += [f"  note: {n}" for n in filing.notes]
    return report


def _sources(ctx: Context) -> list[CheckoutFile]:
    """Every path under the memory root that differs from HEAD (index, work tree, untracked)."""
    top, root = ctx.repo.worktree_root, ctx.layout.memory_root
    has_head = gitcore.has_head(top)
    head = staged.tree_blobs(top, "HEAD", root) if has_head else {}
    index = {c.path: c for c in staged.changes(top, root, clean=True)}
    against = "HEAD" if has_head else gitcore.EMPTY_TREE
    work = {c.path for c in staged.changes(top, root, against=against, cached=False, clean=True)}
    paths = sorted(set(index) | work | set(staged.untracked(top, root, clean=True)))
    blobs = staged.read_blobs(top, [c.new_blob for c in index.values() if c.status != "D"],
                              clean=True)
    sources = []
    for path in paths:
        full = os.path.join(top, path)
        data: bytes | None = None
        if os.path.isfile(full) and not os.path.islink(full):
            with open(full, "rb") as fh:
                data = fh.read()
        elif path in index and index[path].status != "D":
            data = blobs.get(index[path].new_blob)
        sources.append(CheckoutFile(path, path[len(root) + 1 :], data, path in head))
    return sources
