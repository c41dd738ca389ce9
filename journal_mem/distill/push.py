"""`jmem distill --push [REMOTE]`: many machines, one distilled memory.

See docs/DESIGN.md, "Many machines".

Every machine pushes journal entries (new files: they never conflict). The
distilled files are a pure function of the journal, so whoever distills only
has to make sure its distill commit sits on top of everything the remote
already holds. One attempt, all under the distill lock:

1. `git fetch REMOTE refs/heads/BRANCH` (BRANCH = `distill.branch`, else the
   branch checked out). The main checkout must be on BRANCH, not mid-merge,
   without hand edits of distilled files (the distiller's usual refusals),
   before anything is touched.
2. Bring the main checkout up to the remote tip T, with plain git:
   - T already contained in HEAD: nothing to do;
   - HEAD contained in T (CI, or a machine with nothing unpushed):
     `git merge --ff-only T`. The work tree moves the way `git pull` moves
     it; uncommitted files git would have to overwrite make it refuse, and
     untracked journal entries simply stay untracked;
   - diverged (local commits not pushed yet, code or memory): a real merge of
     T. Local commits are never rewritten, dropped or reordered. Distilled
     files that changed on both sides are not merged line by line (a merge of
     two rewrites means nothing): every distilled file the merge would change
     takes T's version verbatim, which the pre-commit guard accepts because it
     equals MERGE_HEAD's, and the distill below recomputes them all from the
     union of both journals anyway. Any other conflict aborts the merge
     (`git merge --abort`, nothing changed) and is reported: that is a
     person's merge to make (`merge_taking_theirs` below).
3. Distill as usual: drain the outbox, fold every entry now on disk (T's,
   the local commits', the untracked ones), commit memory paths only.
4. `git push REMOTE HEAD:refs/heads/BRANCH`, never forced. Pushing HEAD
   publishes the local commits of step 2 too, as `git push` would.
5. Rejected because another writer got there first: our distill commit was
   never published and is pure derivation, so it is unwound, keeping every
   lesson: HEAD goes back to its parent with `reset --soft`, the memory paths
   of the index follow, the lessons that commit added stay in the work tree as
   untracked files (the next distill commits them again) and the distilled
   files go back to the parent's bytes. Then wait (bounded exponential
   backoff with jitter) and start again at 1 on the new tip, so the next
   distill commit's parent is that tip and history stays linear. Only our
   own, unpublished distill commit is ever unwound; a merge commit made in
   step 2 stays (it holds the person's history) and the next attempt merges
   on top of it. After the last attempt the command fails (exit 1) with
   everything committed or on disk locally: running it again is safe.

A push refused by the remote for another reason (a protected branch, a hook)
is not a race and fails at once. With no remote branch yet, the first push
creates it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from journal_mem.distill.distiller import Options, Outcome, distill_locked
from journal_mem.distill.files import is_distilled
from journal_mem.distill.safety import refuse_unsafe
from journal_mem.errors import JournalMemError, PolicyViolation
from journal_mem.gitops import gitcore, remote, staged
from journal_mem.journal.lock import DistillLock
from journal_mem.repo import Context


def is_distilled_path(ctx: Context, path: str) -> bool:
    """True for a distilled file under the memory root (a path from the repository top)."""
    prefix = ctx.layout.memory_root + "/"
    return path.startswith(prefix) and is_distilled(path[len(prefix):])


def merge_taking_theirs(ctx: Context, tip: str, message: str) -> None:
    """Merge `tip`, every distilled file it changes taken verbatim from `tip`; commit."""
    root = ctx.repo.main_root
    unmerged = remote.start_merge(root, ctx.repo.git_dir, tip)
    changes = staged.changes(root, ctx.layout.memory_root, clean=True)
    others = sorted(p for p in unmerged if not is_distilled_path(ctx, p))
    if others:
        remote.abort_merge(root)
        raise PolicyViolation(
            "the remote tip conflicts with local commits outside the distilled files "
            "(merge aborted, nothing changed):\n" + "\n".join(f"  {p}" for p in others),
            hint="`git pull` and resolve the conflicts by hand, then run "
                 "`jmem distill --push` again")
    take_theirs(ctx, tip, sorted({c.path for c in changes if is_distilled_path(ctx, c.path)}))
    remote.conclude_merge(root, message)


def take_theirs(ctx: Context, rev_: str, paths: list[str]) -> None:
    """Set `paths` (index and work tree) to their version in `rev_`; delete those it lacks."""
    if not paths:
        return
    root = ctx.repo.main_root
    there = staged.tree_blobs(root, rev_, ctx.layout.memory_root)
    remote.set_paths(root, rev_, [p for p in paths if p in there],
                     [p for p in paths if p not in there])


ATTEMPTS = 20
BACKOFF_S = 0.1  # first wait; doubled each time, capped, with ±50 % jitter
BACKOFF_CAP_S = 2.0
MERGE_MESSAGE = "jmem: merge {remote}/{branch} before distilling"


class PushRejected(JournalMemError):
    """Every attempt lost the race to another writer."""


@dataclass
class Pushed:
    """What `distill --push` did."""

    remote: str
    branch: str
    outcome: Outcome | None = None
    pushed: str | None = None  # the commit the remote branch now points at (None: no push)
    attempts: int = 0
    rejected: int = 0
    steps: list[str] = field(default_factory=list)  # how each attempt met the remote tip

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code if self.outcome else 0


def target_branch(ctx: Context) -> str:
    """`distill.branch`, else the branch checked out; refuse a detached HEAD or another branch."""
    root = ctx.repo.main_root
    current = gitcore.current_branch(root, ctx.repo.common_dir)
    want = ctx.config.distill.branch or current
    if not want:
        raise PolicyViolation("the main checkout has a detached HEAD: distill --push refused",
                              hint="switch to the branch the memory lives on (distill.branch)")
    if current != want:
        raise PolicyViolation(
            f"the main checkout is on {current or 'a detached HEAD'!r}, but distill.branch is "
            f"{want!r}: distill --push refused", hint=f"run `git switch {want}` in {root}")
    return want


def push_distill(ctx: Context, opts: Options, remote_name: str | None,
                 attempts: int = ATTEMPTS) -> Pushed:
    """Distill on top of REMOTE's branch and push, retrying lost races (module docstring)."""
    root = ctx.repo.main_root
    branch = target_branch(ctx)
    report = Pushed(remote_name or remote.default_remote(root, branch), branch)
    with DistillLock(ctx.layout.state_dir):
        for attempt in range(1, attempts + 1):
            report.attempts = attempt
            started = time.monotonic()
            if _attempt(ctx, opts, report):
                return report
            report.rejected += 1
            if attempt < attempts:
                time.sleep(backoff(attempt, time.monotonic() - started))
    raise PushRejected(
        f"{report.remote}/{branch} moved on during each of {attempts} attempts: nothing pushed",
        hint="every lesson is still here, committed or on disk; run `jmem distill --push` "
             "again (in CI: one concurrency group keeps distillers from racing)")


def backoff(attempt: int, took: float) -> float:
    """Seconds to wait after losing attempt `attempt` (1-based), which took `took` seconds:
    doubling from `BACKOFF_S`, jittered, but never much past one attempt's length (nor
    `BACKOFF_CAP_S`). A loser that waits longer than an attempt lets whole attempts of
    the writers that won go through meanwhile, and loses again: with four machines
    pushing without a pause, one waiting up to 4 s lost all of its 8 attempts."""
    base: float = min(BACKOFF_CAP_S, max(BACKOFF_S, took), BACKOFF_S * 2.0 ** (attempt - 1))
    return base * random.uniform(0.5, 1.5)


def _attempt(ctx: Context, opts: Options, report: Pushed) -> bool:
    """One fetch, integrate, distill and push; False when the push lost a race."""
    root = ctx.repo.main_root
    tip = remote.fetch(root, report.remote, report.branch)
    refuse_unsafe(ctx, commit=opts.commit)
    report.steps.append(integrate(ctx, tip, report.remote, report.branch))
    parent = remote.rev(root, "HEAD")
    report.outcome = distill_locked(ctx, opts)
    head = remote.rev(root, "HEAD")
    if head is None or head == tip:
        report.pushed = None
        return True
    if remote.push(root, report.remote, head, report.branch):
        report.pushed = head
        return True
    if report.outcome.commit == head and parent and parent != head:
        unwind(ctx, head, parent)
    return False


# --- steps ------------------------------------------------------------------------


def integrate(ctx: Context, tip: str | None, remote_name: str, branch: str) -> str:
    """Make HEAD contain `tip` (step 2 of the module docstring); say how."""
    root = ctx.repo.main_root
    head = remote.rev(root, "HEAD")
    if tip is None:
        return "new remote branch"
    if head is None or head == tip or remote.is_ancestor(root, tip, head):
        return "up to date" if head else "unborn"
    if remote.is_ancestor(root, head, tip):
        remote.fast_forward(root, tip, f"{remote_name}/{branch}")
        return "fast-forward"
    merge_taking_theirs(ctx, tip, MERGE_MESSAGE.format(remote=remote_name, branch=branch))
    return "merged"


def unwind(ctx: Context, commit: str, parent: str) -> None:
    """Undo our unpublished distill `commit`, keeping every lesson on disk (step 5)."""
    paths = remote.drop_commit(ctx.repo.main_root, commit, parent,
                               staged.pathspec(ctx.layout.memory_root))
    take_theirs(ctx, parent, [p for p in paths if is_distilled_path(ctx, p)])
