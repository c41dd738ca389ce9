"""When the distiller refuses to write: checked before anything changes.

A checkout in the middle of a merge, rebase or cherry-pick; the wrong branch
or a detached HEAD; symlinks on the way to memory (a write would land
wherever they point); memory files git ignores (never committed, so other
clones would miss them); edits of committed journal entries (append-only).
Hand edits of distilled files are not refused here: `adopt.py` turns them
into lessons (and refuses the few it cannot adopt).
"""

from __future__ import annotations

from journal_mem.errors import PolicyViolation
from journal_mem.gitops import gitcore, memgit
from journal_mem.journal.foldstate import FoldState
from journal_mem.journal.ignored import refuse_ignored
from journal_mem.journal.reader import Journal
from journal_mem.layout import JOURNAL
from journal_mem.repo import Context


def refuse_unsafe(ctx: Context, commit: bool,
                  running: memgit.Status | None = None) -> list[tuple[str, str]]:
    """Raise `PolicyViolation` (exit 1, nothing changed) when writing is not safe.

    `commit`: the distill means to commit (a detached HEAD is then refused).
    Returns `git status` of the memory root (to know later what to commit): the one
    `running` (started earlier) gives, if given.
    """
    root = ctx.repo.main_root
    _refuse_git_state(ctx, commit)
    links = ctx.layout.symlinked_folders()  # before any git call: git refuses paths past one
    if links:
        raise PolicyViolation(
            "distill refused, nothing changed: symlinks on the way to memory:\n"
            + "\n".join(f"{link}: a symlink; memory is never written through one"
                        for link in links),
            hint="replace each link with a real folder (`jmem check` lists them)",
        )
    refuse_ignored(ctx.layout, ctx.agents,
                   "distill")
    status = (running.result() if running is not None
              else memgit.status(root, ctx.layout.memory_root))
    problems = unsafe_edits(ctx, status)
    if problems:
        raise PolicyViolation(
            "distill refused, nothing changed:\n" + "\n".join(problems),
            hint="memory changes go through lessons: `jmem write` (or --supersedes KEY); "
                 "put the files back with `git restore --staged --worktree -- PATH`",
        )
    return status


def _refuse_git_state(ctx: Context, commit: bool) -> None:
    """Refuse a checkout mid-operation, on the wrong branch, or detached when committing."""
    root = ctx.repo.main_root
    busy = memgit.in_progress(ctx.repo.common_dir)
    if busy:
        raise PolicyViolation(
            f"the main checkout {root} is in the middle of {busy}: distill refused",
            hint="finish or abort it (git merge --abort / rebase --abort / cherry-pick "
                 "--abort), then run `jmem distill`",
        )
    want = ctx.config.distill.branch
    branch = gitcore.current_branch(root, ctx.repo.common_dir)
    if want and branch != want:
        raise PolicyViolation(
            f"the main checkout is on {branch or 'a detached HEAD'!r}, but distill.branch is "
            f"{want!r}: distill refused",
            hint=f"run `git switch {want}` in {root}, or change distill.branch",
        )
    if not branch and commit and ctx.config.distill.commit:
        raise PolicyViolation("the main checkout has a detached HEAD: distill refused",
                              hint="switch to a branch, or use --no-commit")


def refuse_lost_facts(ctx: Context, journal: Journal, *states: FoldState | None) -> None:
    """Refuse (exit 1, nothing written or committed) when an entry an earlier distill
    folded is now invalid: folding without it would commit the removal of its facts,
    though nobody retracted them (a CRLF checkout, a hand edit, a changed setting)."""
    if not journal.invalid:
        return  # the usual case: no set of every path folded (100k at 100k lessons)
    was = {rel for state in states if state is not None for rel in state.folded}
    lost = {rel: why for rel, why in journal.invalid.items() if rel in was}
    if not lost:
        return
    names = [f"{ctx.layout.memory_root}/{rel}: {'; '.join(why)}" for rel, why in
             sorted(lost.items())]
    raise PolicyViolation(
        f"distill refused, nothing changed: {len(lost)} entries an earlier distill folded are "
        "now invalid, and folding without them would delete their facts:\n" + "\n".join(names),
        hint="put each entry back as committed (`git restore -- PATH`), or fix what made it "
             "invalid; to delete a fact, write a lesson with --retracts KEY",
    )


def unsafe_edits(ctx: Context, status: list[tuple[str, str]]) -> list[str]:
    """Edits and deletions of committed journal entries (the journal is append-only)."""
    prefix = ctx.layout.memory_root + "/"
    problems: list[str] = []
    for xy, path in status:
        rel = path[len(prefix):] if path.startswith(prefix) else path
        if is_journal(rel) and xy not in ("??", "A ") and xy[0] != "A":
            problems.append(f"{path}: committed journal entry edited or deleted "
                            "(journal entries are append-only)")
    return problems


def is_journal(rel: str) -> bool:
    """True for a memory-root-relative path of a journal entry (`AGENT/journal/NAME`)."""
    parts = rel.split("/")
    return len(parts) == 3 and parts[1] == JOURNAL
