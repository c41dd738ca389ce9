"""`jmem distill`: one writer folds the journal into every agent's distilled files.

Order: lock; refuse an unsafe checkout (mid-merge/rebase/cherry-pick, wrong
branch, edited journal entries) before changing anything; adopt memory the
distiller did not write (hand-written files, hand edits) as lessons; drain
the outbox; read the journal (cached); fold; render; write what changed
atomically; one commit limited to memory paths; a hook's distill (`--if-due`)
brings the recall index up to date from the fold, when it is not. A second distill exits 75
(`LockHeld`). Invalid entries are reported and skipped, and the command then
exits 1.

Each step lives in `store/distill/`: `schedule`, `safety`, `folding`,
`files`, `commit`; this module only runs them in order.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import itertools
import operator
import os
import sqlite3
import time

from journal_mem import boundary
from journal_mem.distill import commit, files, folding, safety, schedule, unadopted
from journal_mem.distill.changes import AgentChanges, diff, message
from journal_mem.distill.outbox import Drained, drain
from journal_mem.errors import OK, REFUSED, ConfigError, JournalMemError, LockHeld
from journal_mem.gitops import gitcore, memgit, mergedriver
from journal_mem.journal.cache import HeldWrites, write
from journal_mem.journal.fold import today
from journal_mem.journal.foldstate import FoldState, render_state
from journal_mem.journal.lock import DistillLock
from journal_mem.journal.reader import (
    Journal,
    collector_paused,
    entry_cache,
    read_journal,
    start_listing,
)
from journal_mem.layout import DISTILL_STATE, Layout
from journal_mem.recall.index import connect, distilled, index_path, signature, update
from journal_mem.repo import Context
from journal_mem.tuples import NamedTuple

AGAIN = 20  # hook distills run again while lessons came in meanwhile
REDISTILLS = 3  # the branch moved on with memory changes: distill again on the new tip


class Options(NamedTuple):
    """The command-line options of `jmem distill`."""

    dry_run: bool = False
    check: bool = False
    rebuild: bool = False
    commit: bool = True
    if_due: bool = False
    date: dt.date | None = None
    # the process ends with the command (`boundary.ONE_SHOT`): the journal and fold are
    # left for its end, not freed one object at a time (`boundary.leave_to_exit`)
    one_shot: bool = False


class Outcome:
    """What a distill did (or would do), for the CLI to print. (A plain class, and
    `Options` a named tuple: `dataclasses`, with the `inspect` it imports, and the
    distill's dozen dataclasses cost each distill ~20 ms.)"""

    __slots__ = ("adopted", "changes", "commit", "conflicts", "date", "deleted", "drained",
                 "evicted", "flagged", "invalid", "near_duplicates", "new_lessons", "note",
                 "stale_refs", "status", "written")

    def __init__(self, status: str, *, date: str = "", new_lessons: list[str] | None = None,
                 changes: dict[str, AgentChanges] | None = None,
                 drained: Drained | None = None,
                 invalid: dict[str, tuple[str, ...]] | None = None,
                 evicted: dict[str, list[str]] | None = None,
                 stale_refs: dict[str, str] | None = None,
                 conflicts: list[tuple[str, str]] | None = None,
                 near_duplicates: list[tuple[str, ...]] | None = None,
                 flagged: dict[str, str] | None = None, note: str = "") -> None:
        # distilled | unchanged | would-change | dry-run | not-due | disabled | busy
        self.status = status
        self.date = date
        self.new_lessons: list[str] = new_lessons if new_lessons is not None else []
        self.changes: dict[str, AgentChanges] = changes if changes is not None else {}
        self.written: list[str] = []
        self.deleted: list[str] = []
        self.commit: str | None = None
        self.drained = drained if drained is not None else Drained()
        self.invalid: dict[str, tuple[str, ...]] = invalid if invalid is not None else {}
        self.evicted: dict[str, list[str]] = evicted if evicted is not None else {}
        # key -> "refs gone: …"
        self.stale_refs: dict[str, str] = stale_refs if stale_refs is not None else {}
        # (old key, newer key)
        self.conflicts: list[tuple[str, str]] = conflicts if conflicts is not None else []
        self.near_duplicates: list[tuple[str, ...]] = (
            near_duplicates if near_duplicates is not None else [])
        self.flagged: dict[str, str] = flagged if flagged is not None else {}
        self.adopted: list[str] = []  # memory files turned into lessons
        self.note = note

    @property
    def exit_code(self) -> int:
        """1 when an entry was invalid or `--check` found work to do; else 0."""
        if self.invalid or self.drained.invalid or self.status == "would-change":
            return REFUSED
        return OK


def distill(ctx: Context, opts: Options) -> Outcome:
    """Run one distill (see the module docstring)."""
    if opts.if_due:
        reason = schedule.off_reason(ctx)
        if reason:
            return Outcome("disabled", note=reason)
        if not schedule.is_due(ctx):
            _index_caught_up(ctx)
            return Outcome("not-due", note="not due: fewer pending lessons than the threshold")
    try:
        with DistillLock(ctx.layout.state_dir):
            out = _retrying(ctx, opts)
            # Hook distills that found the lock held returned at once ("busy"): the
            # holder folds what they would have, so every lesson gets distilled.
            for _ in range(AGAIN):
                if not (opts.if_due and out.status == "distilled" and schedule.is_due(ctx)):
                    break
                out = _retrying(ctx, opts)
            return out
    except LockHeld as exc:
        if opts.if_due:  # the running distill folds these lessons too
            return Outcome("busy", note=exc.message)
        raise


def _retrying(ctx: Context, opts: Options) -> Outcome:
    for _ in range(REDISTILLS):
        try:
            return distill_locked(ctx, opts)
        except memgit.MemoryMoved:
            continue  # someone committed memory meanwhile: fold their tip too
    return distill_locked(ctx, opts)


def distill_locked(ctx: Context, opts: Options) -> Outcome:
    """One distill by a caller that already holds the distill lock (`distill --push`)."""
    # it makes a fact, a file, a key for each of 10k lessons; its caches are written while
    # it waits on git for its commit (`cache.HeldWrites`)
    with collector_paused(), HeldWrites() as caches:
        return _locked(ctx, opts, caches)


def _locked(ctx: Context, opts: Options, caches: HeldWrites) -> Outcome:
    layout, config = ctx.layout, ctx.config
    if not os.path.isdir(layout.main_memory):
        raise ConfigError(f"no memory root at {layout.main_memory}: nothing to distill",
                          hint="run `jmem init --agent NAME` first")
    writing = not (opts.dry_run or opts.check)
    committing = writing and opts.commit and config.distill.commit
    if writing:  # a distill killed mid-commit: its index first, then judge the checkout
        memgit.recover(ctx.repo.main_root, layout.state_dir, ctx.repo.common_dir)
    # The branch the commit goes to, fixed now: the checkout may switch meanwhile.
    branch = config.distill.branch or gitcore.current_branch(ctx.repo.main_root,
                                                             ctx.repo.common_dir)
    # A child lists the journal and git lists the memory root while the cache loads and
    # memory is adopted; the listing then catches up with what was filed meanwhile.
    listing = start_listing(layout, use_cache=not opts.rebuild)
    looked = time.time_ns()  # git looks at the memory root from now on: filed later is new
    try:
        with contextlib.ExitStack() as stack:
            running = (stack.enter_context(memgit.Status(ctx.repo.main_root,
                                                         layout.memory_root))
                       if writing else None)
            cache = entry_cache(layout, ctx.policy, use_cache=not opts.rebuild)
            loaded = folding.Loaded(ctx, save=writing, rebuild=opts.rebuild)
            status = (safety.refuse_unsafe(ctx, commit=opts.commit, running=running)
                      if writing else [])
        adopted = _adopt(ctx, status) if writing else unadopted.Adopted()
        if writing:
            files.sweep_leftovers(layout)
        drained = drain(layout, ctx.policy) if writing else Drained()
        # the recall index's view of the journal about to be read (`_keep_index`): kept
        # by the distill nobody waits for (the post-commit hook's, `--if-due`)
        head = gitcore.head_from_files(ctx.repo.common_dir)
        signed = (signature(layout, today()) if writing and opts.if_due and head is not None
                  and opts.date in (None, today()) else None)
        journal = read_journal(layout, ctx.policy, use_cache=not opts.rebuild, cache=cache,
                               listing=listing)
    finally:
        if listing is not None:
            listing.close()
    del cache
    schedule.remember_invalid(layout, journal.invalid)
    step = folding.fold_step(ctx, journal, opts.date or today(), committing=committing,
                             save=writing, rebuild=opts.rebuild, loaded=loaded)
    safety.refuse_lost_facts(ctx, journal, step.state, step.base)
    out = _outcome(step, journal, drained)
    out.adopted = adopted.lines
    prefix = layout.memory_root + "/"
    _write(layout, opts, step, out, {p.removeprefix(prefix) for _, p in status})
    if writing:  # its files' stamps are taken with the caches' writes
        write(functools.partial(folding.keep_topics, ctx, step))
    if committing:
        caches.start()
        _commit(ctx, out, step, journal, status, adopted, branch, looked)
    elif writing and out.status == "distilled":  # readable later by the blob id recorded
        memgit.store(ctx.repo.main_root, [files.repo_rel(layout, p) for p in out.written])
    if writing:  # every entry on disk is folded: a merge's request is met
        folding.keep_replay_head(ctx, step, out.commit)
        mergedriver.done(layout.state_dir)
    if signed is not None and head is not None:
        _keep_index(ctx, journal, step, signed, head)
    if opts.one_shot:
        boundary.leave_to_exit(journal, step)
    return out


def _adopt(ctx: Context, status: list[tuple[str, str]]) -> unadopted.Adopted:
    """Adopt the memory files this distill did not write (`status`: git's view of the
    memory root); what adopts them is imported only when there are some."""
    found = unadopted.find(ctx, status)
    if found is None:
        return unadopted.Adopted()
    from journal_mem.distill.adopt import adopt_found
    return adopt_found(ctx, found)


def _keep_index(ctx: Context, journal: Journal, step: folding.Step, sig: str,
                head: str) -> None:
    """Bring the recall index up to date with this fold (`index.distilled`), so the next
    `write` does not. Only slower when it cannot: never a failed distill. A hook's
    distill only: where the index is not current (lessons filed as files), this costs
    a distill a sixth more (~90 ms at 10k lessons, ~580 ms at 100k), which a `write`
    after it then does not pay (~300 ms, ~3.4 s)."""
    try:
        distilled(ctx, journal, step.after, step.date, sig, head)
    except (OSError, sqlite3.Error, JournalMemError):
        pass


def _index_caught_up(ctx: Context) -> None:
    """A hook's distill that is not due (nobody waits for it) brings the recall index,
    where there is one, up to date: after lessons filed as files (a pull, the outbox),
    on a new day, or after commits it cannot follow (`refresh.kept_by`), the next
    `write`, capture or `recall` of an agent would do it (at 10k lessons ~0.5 s, at 100k
    ~4 s). Costs a `stat` per agent when it is current. Never a failed hook."""
    path = index_path(ctx.layout)
    if not os.path.exists(path):
        return  # no index yet: the first `recall` makes it
    try:
        conn = connect(path)
        try:
            update(ctx, conn, today())
        finally:
            conn.close()
    except (OSError, sqlite3.Error, JournalMemError):
        pass


def _outcome(step: folding.Step, journal: Journal, drained: Drained) -> Outcome:
    """The outcome of a fold, before anything is written."""
    new = sorted(set(step.folded).difference(step.base.folded if step.base else ()))
    return Outcome(
        "unchanged", date=step.date.isoformat(), drained=drained, invalid=journal.invalid,
        changes=diff(step.before, step.rows, step.after.removed, step.changed),
        near_duplicates=step.after.near_duplicates, flagged=step.after.flagged,
        evicted={a: r.evicted for a, r in step.rendered.agents.items() if r.evicted},
        new_lessons=new, stale_refs=_stale(step, journal, set(new)),
        conflicts=step.after.conflicts,
    )  # fmt: skip


def _stale(step: folding.Step, journal: Journal, new: set[str]) -> dict[str, str]:
    """Facts this distill drops for stale refs: live before, or stated by a new lesson."""
    gone = sorted((k, why) for k, why in step.after.removed.items() if why.startswith("refs gone"))
    if not gone:
        return {}  # the journal's 100k entries are not walked for the new lessons' keys
    # the new lessons' entries found in C: the journal's 100k rows are not walked in Python
    stated = itertools.compress(journal.entries, map(new.__contains__, map(_PATH, journal.entries)))
    new_keys = {entry.key for _, entry in stated}
    return {k: why for k, why in gone if k in step.before or k in new_keys}


_PATH = operator.itemgetter(0)  # an entry's path in `Journal.entries`


def _changed(layout: Layout, step: folding.Step,
             dirty: set[str]) -> tuple[dict[str, bytes], list[str]]:
    """(memory-root-relative path: bytes to write, paths to delete) for a fold. A topic
    file the render reused is not rendered again when it stands as the last distill left
    it (its stamp, or its digest: `files.holds`) and git does not list it as changed
    (`dirty`)."""
    rendered = step.rendered
    changed = {p: d for p, d in rendered.files.items() if files.read_distilled(layout, p) != d}
    for rel, (stamp, again, name) in rendered.kept.items():
        if stamp is not None and rel not in dirty and files.holds(layout, rel, stamp):
            continue  # the very file the last distill found equal to this rendering
        data = again.data(name)  # changed or gone since, or not settled then: render it
        if files.read_distilled(layout, rel) != data:
            changed[rel] = data
    deleted = sorted(files.distilled_on_disk(layout) - set(rendered.files) - set(rendered.kept))
    state = step.state
    if (changed or deleted or state is None or state.folded != step.folded
            or bool(state.judged) != bool(step.after.judged)):  # the commit to check at
        changed[DISTILL_STATE] = render_state(FoldState(step.date, step.folded,
                                                        step.after.judged))
    return changed, deleted


def _write(layout: Layout, opts: Options, step: folding.Step, out: Outcome,
           dirty: set[str]) -> None:
    """Write what changed (unless `--check` or `--dry-run`), and say so in `out`."""
    changed, out.deleted = _changed(layout, step, dirty)
    out.written = sorted(changed)
    if not changed and not out.deleted:
        out.changes = {}
    elif opts.check:
        out.status = "would-change"
    elif opts.dry_run:
        out.status = "dry-run"
    else:
        files.write_files(layout, changed, out.deleted)
        out.status = "distilled"


def _commit(ctx: Context, out: Outcome, step: folding.Step, journal: Journal,
            status: list[tuple[str, str]], adopted: unadopted.Adopted, branch: str,
            looked: int) -> None:
    """Commit the distilled files, new entries and the native files they replace (`looked`:
    when `git status` started); a commit makes the status `distilled`."""
    paths = commit.to_commit(ctx, status, journal, [*out.written, *out.deleted, *adopted.removed],
                             [*out.drained.moved, *adopted.paths], out.new_lessons, looked)
    out.commit = commit.commit_paths(
        ctx, paths, lambda: message(out.date, out.new_lessons, out.changes, step.after,
                                    out.evicted, journal.invalid), branch)
    if out.commit:
        out.status = "distilled"
