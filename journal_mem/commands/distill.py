"""`jmem distill`: one writer folds the journal into every agent's distilled files.

Order: lock; refuse an unsafe checkout (mid-merge/rebase/cherry-pick, wrong
branch, hand-edited distilled files, edited journal entries) before changing
anything; drain the outbox; read the journal (cached); fold; render; write
what changed atomically; one commit limited to memory paths. A second
distill exits 75 (`LockHeld`). Invalid entries are reported and skipped, and
the command then exits 1.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from journal_mem.config.settings import env_flag
from journal_mem.errors import OK, REFUSED, ConfigError, LockHeld, PolicyViolation
from journal_mem.gitops import gitfacts, memgit
from journal_mem.model.changes import AgentChanges, diff, message
from journal_mem.model.fold import Fold, fold
from journal_mem.model.foldstate import FoldState, read_state, render_state
from journal_mem.model.render import render
from journal_mem.names import is_name
from journal_mem.store.context import Context
from journal_mem.store.entrycache import Journal, read_journal
from journal_mem.store.layout import DISTILL_STATE, JOURNAL, MEMORY_MD, TOPICS, Layout
from journal_mem.store.lock import DistillLock
from journal_mem.store.outbox import Drained, drain

INVALID = "invalid-entries.json"  # in the state dir's cache: entries found invalid
AGAIN = 20  # hook distills run again while lessons came in meanwhile
REDISTILLS = 3  # a branch moved on with memory changes: distill again on the new tip
WRITTEN = "distill-written.json"  # in the state dir: blob ids this machine's distiller wrote


@dataclass(frozen=True)
class Options:
    """The command-line options of `jmem distill`."""

    dry_run: bool = False
    check: bool = False
    rebuild: bool = False
    commit: bool = True
    if_due: bool = False
    date: dt.date | None = None


@dataclass
class Outcome:
    """What a distill did (or would do), for the CLI to print."""

    status: str  # distilled | unchanged | would-change | dry-run | not-due | disabled | busy
    date: str = ""
    new_lessons: list[str] = field(default_factory=list)
    changes: dict[str, AgentChanges] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    commit: str | None = None
    drained: Drained = field(default_factory=Drained)
    invalid: dict[str, tuple[str, ...]] = field(default_factory=dict)
    evicted: dict[str, list[str]] = field(default_factory=dict)
    near_duplicates: list[tuple[str, ...]] = field(default_factory=list)
    flagged: dict[str, str] = field(default_factory=dict)
    note: str = ""

    @property
    def exit_code(self) -> int:
        """1 when an entry was invalid or `--check` found work to do; else 0."""
        if self.invalid or self.drained.invalid or self.status == "would-change":
            return REFUSED
        return OK


def today() -> dt.date:
    """The distill date: today, in UTC."""
    return dt.datetime.now(dt.UTC).date()


# --- due --------------------------------------------------------------------


def off_reason(ctx: Context) -> str | None:
    """Why an `--if-due` (hook) distill must not run, or None."""
    if env_flag("JMEM_DISABLE"):
        return "journal-mem is disabled (JMEM_DISABLE=1): no distill"
    if not ctx.config.hooks.distill_on_commit:
        return "hooks.distill_on_commit is false: no distill on commit"
    return None


def pending(layout: Layout) -> list[str]:
    """Absolute paths of journal and outbox entries the last distill did not fold.

    An entry the last distill found invalid does not count while it is
    unchanged: it cannot be folded, and counting it would start a failing
    background distill on every commit until someone fixes it (the distill
    that found it exited 1 and named it).
    """
    from journal_mem.store.lessons import pending_paths

    known = _known_invalid(layout)
    return [path for _, path, rel, _ in pending_paths(layout)
            if known.get(rel) is None or known[rel] != _stat_key(path)]


def _invalid_path(layout: Layout) -> str:
    return os.path.join(layout.state_dir, "cache", INVALID)


def _stat_key(path: str) -> list[int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _known_invalid(layout: Layout) -> dict[str, list[int]]:
    try:
        with open(_invalid_path(layout), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember_invalid(layout: Layout, invalid: Iterable[str]) -> None:
    """Record the journal entries this distill could not fold, with their stat (cache)."""
    keys = {rel: _stat_key(os.path.join(layout.main_memory, rel)) for rel in invalid}
    path = _invalid_path(layout)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({rel: key for rel, key in keys.items() if key}, fh, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # only a cache: without it such entries count as pending


def is_due(ctx: Context, now: dt.datetime | None = None) -> bool:
    """Pending lessons reach `distill.threshold`, or the oldest is older than `max_age_hours`."""
    waiting = pending(ctx.layout)
    if not waiting:
        return False
    if len(waiting) >= ctx.config.distill.threshold:
        return True
    now = now or dt.datetime.now(dt.UTC)
    oldest = min(_written_at(p) for p in waiting)
    return (now - oldest).total_seconds() >= ctx.config.distill.max_age_hours * 3600


def _written_at(path: str) -> dt.datetime:
    """An entry's `created`, or its file's mtime when it cannot be parsed."""
    from journal_mem.errors import InvalidEntry
    from journal_mem.model.entry import parse

    try:
        with open(path, "rb") as fh:
            return parse(fh.read(), filename=os.path.basename(path)).created
    except (OSError, InvalidEntry):
        try:
            return dt.datetime.fromtimestamp(os.stat(path).st_mtime, dt.UTC)
        except OSError:
            return dt.datetime.now(dt.UTC)


# --- entry point ---------------------------------------------------------------


def distill(ctx: Context, opts: Options) -> Outcome:
    """Run one distill (see the module docstring)."""
    if opts.if_due:
        reason = off_reason(ctx)
        if reason:
            return Outcome("disabled", note=reason)
        if not is_due(ctx):
            return Outcome("not-due", note="not due: fewer pending lessons than the threshold")
    try:
        with DistillLock(ctx.layout.state_dir) as lock:
            out = _retrying(ctx, opts, lock.fd)
            # Hook distills that found the lock held returned at once ("busy"): the
            # holder folds what they would have, so every lesson gets distilled.
            for _ in range(AGAIN):
                if not (opts.if_due and out.status == "distilled" and is_due(ctx)):
                    break
                out = _retrying(ctx, opts, lock.fd)
            return out
    except LockHeld as exc:
        if opts.if_due:  # the running distill folds these lessons too
            return Outcome("busy", note=exc.message)
        raise


def _retrying(ctx: Context, opts: Options, lock_fd: int) -> Outcome:
    for _ in range(REDISTILLS):
        try:
            return _locked(ctx, opts, lock_fd)
        except memgit.MemoryMoved:
            continue  # someone committed memory meanwhile: fold their tip too
    return _locked(ctx, opts, lock_fd)


def distill_locked(ctx: Context, opts: Options, lock_fd: int) -> Outcome:
    """One distill by a caller that already holds the distill lock (`distill --push`)."""
    return _locked(ctx, opts, lock_fd)


def _locked(ctx: Context, opts: Options, lock_fd: int) -> Outcome:
    layout, config = ctx.layout, ctx.config
    if not os.path.isdir(layout.main_memory):
        raise ConfigError(f"no memory root at {layout.main_memory}: nothing to distill",
                          hint="run `jmem init --agent NAME` first")
    writing = not (opts.dry_run or opts.check)
    before_status = refuse_unsafe(ctx, opts) if writing else []
    if writing:
        sweep_leftovers(layout)
    drained = drain(layout, config.budget.entry_bytes) if writing else Drained()
    journal = read_journal(layout, config.budget.entry_bytes, use_cache=not opts.rebuild)
    remember_invalid(layout, journal.invalid)
    date = opts.date or today()
    agents = sorted(set(config.agents) | set(layout.agents_on_disk()))
    refs = ref_checker(ctx.repo.main_root, "HEAD")
    after = fold(journal.entries, agents=agents, date=date, ref_exists=refs, config=config)
    rendered = render(after, agents, config.budget)
    state = read_state(layout.distill_state)
    committing = writing and opts.commit and config.distill.commit
    base = committed_state(ctx) if committing else state  # what the commit will change
    before = previous_fold(journal, base, agents, refs, ctx)
    out = Outcome(
        "unchanged", date=date.isoformat(), drained=drained, invalid=journal.invalid,
        changes=diff(before, after), near_duplicates=after.near_duplicates,
        flagged=after.flagged,
        evicted={a: r.evicted for a, r in rendered.agents.items() if r.evicted},
    )  # fmt: skip
    folded = sorted(rel for rel, _ in journal.entries)
    if not opts.dry_run and not opts.check:
        from journal_mem.store.entrycache import save_fold

        save_fold(layout, fold_signature(FoldState(date, tuple(folded)), agents, ctx),
                  after.facts)
    out.new_lessons = sorted(set(folded) - set(base.folded if base else ()))
    files = dict(rendered.files)
    changed = {p: d for p, d in files.items() if _read(layout, p) != d}
    out.deleted = sorted(distilled_on_disk(layout) - set(files))
    if changed or out.deleted or state is None or state.folded != tuple(folded):
        changed[DISTILL_STATE] = render_state(FoldState(date, tuple(folded)))
    out.written = sorted(changed)
    if not changed and not out.deleted:
        out.changes = {}
    elif opts.check:
        out.status = "would-change"
    elif opts.dry_run:
        out.status = "dry-run"
    else:
        write_files(layout, changed, out.deleted)
        out.status = "distilled"
    if committing:
        touched = [*out.written, *out.deleted]
        paths = to_commit(ctx, before_status, {rel for rel, _ in journal.entries}, touched,
                          drained.moved)
        if paths:
            text = message(out.date, out.new_lessons, out.changes, after, out.evicted,
                           journal.invalid)
            out.commit = memgit.commit(ctx.repo.main_root, layout.memory_root, paths, text,
                                       layout.state_dir) or None
            if out.commit:  # HEAD vouches for these files now
                remember(layout, {}, paths, keep_old=True)
            out.status = "distilled" if out.commit or out.written else out.status
    return out


def committed_state(ctx: Context) -> FoldState | None:
    """The distill state in HEAD (None before the first committed distill)."""
    from journal_mem.model.foldstate import parse_state

    path = ctx.layout.rel(ctx.layout.distill_state)
    res = gitfacts.run(["cat-file", "blob", f"HEAD:{path}"], ctx.repo.main_root, clean=True,
                       check=False)
    return parse_state(res.stdout) if res.ok else None


def previous_fold(
    journal: Journal, state: FoldState | None, agents: list[str],
    refs: Callable[[str], bool], ctx: Context,
) -> Fold:
    """The fold the last distill made: its folded entries on its date (cached)."""
    from journal_mem.store.entrycache import load_fold

    if state is None:
        return Fold()
    cached = load_fold(ctx.layout, fold_signature(state, agents, ctx))
    if cached is not None:
        return Fold(facts=cached)
    was = set(state.folded)
    entries = [(rel, e) for rel, e in journal.entries if rel in was]
    return fold(entries, agents=agents, date=state.date, ref_exists=refs, config=ctx.config,
                report_near=False)


def fold_signature(state: FoldState, agents: list[str], ctx: Context) -> str:
    """What a fold depends on besides entry contents and refs: folded set, date, agents, config."""
    import hashlib

    text = json.dumps([state.date.isoformat(), agents, ctx.config.as_dict(),
                       sorted(state.folded)])
    return hashlib.sha256(text.encode()).hexdigest()


def ref_checker(root: str, rev: str) -> Callable[[str], bool]:
    """`ref_exists(path)` against `rev`'s tree, read from git only when first asked."""
    cache: list[frozenset[str]] = []

    def exists(path: str) -> bool:
        if not cache:
            cache.append(memgit.tree_paths(root, rev))
        return path.strip("/") in cache[0]

    return exists


# --- the files -------------------------------------------------------------


def is_distilled(rel: str) -> bool:
    """True for a memory-root-relative path the distiller owns."""
    parts = rel.split("/")
    if parts == [DISTILL_STATE]:
        return True
    if len(parts) == 2:
        return is_name(parts[0]) and parts[1] == MEMORY_MD
    return len(parts) == 3 and is_name(parts[0]) and parts[1] == TOPICS and parts[2].endswith(
        ".md") and not parts[2].startswith(".")


def distilled_on_disk(layout: Layout) -> set[str]:
    """Memory-root-relative paths of every distilled file now on disk (state file aside)."""
    found: set[str] = set()
    for agent in layout.agents_on_disk():
        if os.path.isfile(layout.memory_md(agent)):
            found.add(f"{agent}/{MEMORY_MD}")
        try:
            names = os.listdir(os.path.join(layout.agent_dir(agent), TOPICS))
        except (FileNotFoundError, NotADirectoryError):
            continue
        rels = (f"{agent}/{TOPICS}/{n}" for n in names)
        found.update(rel for rel in rels if is_distilled(rel))
    return found


def _read(layout: Layout, rel: str) -> bytes | None:
    try:
        with open(os.path.join(layout.main_memory, rel), "rb") as fh:
            return fh.read()
    except OSError:
        return None


def atomic_write(path: str, data: bytes) -> None:
    """Replace `path` with `data` all at once: temp file in the same folder, then rename."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f"{TMP_PREFIX}{secrets.token_hex(6)}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


TMP_PREFIX = ".tmp-distill-"


def sweep_leftovers(layout: Layout) -> None:
    """Delete the temp files of a distill killed mid-write (issue 7: kill -9 tests).

    Only the lock holder writes `.tmp-distill-*` files and we hold the lock, so every
    one found belongs to a dead distill; nothing else is touched.
    """
    folders = [layout.main_memory]
    for agent in layout.agents_on_disk():
        folders += [layout.agent_dir(agent), os.path.join(layout.agent_dir(agent), TOPICS)]
    for folder in folders:
        try:
            names = [n for n in os.listdir(folder) if n.startswith(TMP_PREFIX)]
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            try:
                os.unlink(os.path.join(folder, name))
            except FileNotFoundError:
                pass


def write_files(layout: Layout, changed: dict[str, bytes], deleted: list[str]) -> None:
    """Write the changed distilled files and delete stale ones; the state file goes last.

    The blob ids are recorded in the state dir first, so that a distill killed
    half-way does not mistake its own files for hand edits on the next run.
    """
    blobs = {_repo_rel(layout, p): memgit.blob_id(d) for p, d in changed.items()}
    gone = [_repo_rel(layout, p) for p in deleted]
    remember(layout, blobs, [], keep_old=True)
    for rel in sorted(changed, key=lambda p: p == DISTILL_STATE):
        atomic_write(os.path.join(layout.main_memory, rel), changed[rel])
    for rel in deleted:
        try:
            os.unlink(os.path.join(layout.main_memory, rel))
        except FileNotFoundError:
            pass
    # Old blobs stay recorded until a commit holds them: an earlier distill killed
    # after `git add` left them staged, and a later one killed before its own
    # `git add` must not take them for hand edits (found by the kill -9 suite).
    remember(layout, blobs, gone, keep_old=True)


def _repo_rel(layout: Layout, rel: str) -> str:
    return f"{layout.memory_root}/{rel}"


def _written_path(layout: Layout) -> str:
    return os.path.join(layout.state_dir, WRITTEN)


def recorded(layout: Layout) -> dict[str, list[str]]:
    """{repo-relative path: blob ids} of distilled files this machine wrote and did not commit."""
    try:
        with open(_written_path(layout), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(b) for b in v] for k, v in data.items() if isinstance(v, list)}


def remember(layout: Layout, blobs: dict[str, str], gone: list[str], keep_old: bool) -> None:
    """Record the blob ids about to be written (`keep_old`: besides the old ones, else
    only them); `gone` paths are forgotten (deleted, or committed)."""
    data = recorded(layout)
    for path, blob in blobs.items():
        data[path] = sorted({*data.get(path, []), blob}) if keep_old else [blob]
    for path in gone:
        data.pop(path, None)
    os.makedirs(layout.state_dir, exist_ok=True)
    tmp = f"{_written_path(layout)}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, sort_keys=True)
    os.replace(tmp, _written_path(layout))


# --- refusing, and what to commit -------------------------------------------------


def refuse_unsafe(ctx: Context, opts: Options) -> list[tuple[str, str]]:
    """Raise `PolicyViolation` (exit 1, nothing changed) when writing is not safe.

    Returns `git status` of the memory root (to know later what to commit).
    """
    root = ctx.repo.main_root
    busy = memgit.in_progress(ctx.repo.common_dir)
    if busy:
        raise PolicyViolation(
            f"the main checkout {root} is in the middle of {busy}: distill refused",
            hint="finish or abort it (git merge --abort / rebase --abort / cherry-pick "
                 "--abort), then run `jmem distill`",
        )
    want = ctx.config.distill.branch
    branch = gitfacts.current_branch(root)
    if want and branch != want:
        raise PolicyViolation(
            f"the main checkout is on {branch or 'a detached HEAD'!r}, but distill.branch is "
            f"{want!r}: distill refused",
            hint=f"run `git switch {want}` in {root}, or change distill.branch",
        )
    if not branch and opts.commit and ctx.config.distill.commit:
        raise PolicyViolation("the main checkout has a detached HEAD: distill refused",
                              hint="switch to a branch, or use --no-commit")
    status = memgit.status(root, ctx.layout.memory_root)
    links = ctx.layout.symlinked_folders()  # issue 7: a link would send writes outside
    if links:
        raise PolicyViolation(
            "distill refused, nothing changed: symlinks under the memory root:\n"
            + "\n".join(f"{link}: a symlink; memory is never written through one"
                        for link in links),
            hint="replace each link with a real folder (`jmem check` lists them)",
        )
    problems = unsafe_edits(ctx, status)
    if problems:
        raise PolicyViolation(
            "distill refused, nothing changed:\n" + "\n".join(problems),
            hint="memory changes go through lessons: `jmem write` (or --supersedes KEY); "
                 "put the files back with `git restore --staged --worktree -- PATH`",
        )
    return status


def unsafe_edits(ctx: Context, status: list[tuple[str, str]]) -> list[str]:
    """Uncommitted hand edits of distilled files and edits of committed journal entries."""
    layout, root = ctx.layout, ctx.repo.main_root
    prefix = layout.memory_root + "/"
    mine = recorded(layout)
    problems: list[str] = []
    index: dict[str, str] | None = None
    for xy, path in status:
        rel = path[len(prefix):] if path.startswith(prefix) else path
        if is_distilled(rel):
            if "D" in xy:
                continue  # a deleted distilled file loses nothing: it is rebuilt
            if xy[0] not in " ?":
                if index is None:
                    index = memgit.index_blobs(root, layout.memory_root)
                head = memgit.head_blobs(root, path).get(path)
                if index.get(path) not in {*mine.get(path, []), head}:
                    problems.append(f"{path}: staged hand edit of a distilled file")
                    continue
            data = _read(layout, rel)
            if data is not None and memgit.blob_id(data) not in mine.get(path, []):
                problems.append(f"{path}: uncommitted hand edit of a distilled file")
        elif _is_journal(rel) and xy not in ("??", "A ") and xy[0] != "A":
            problems.append(f"{path}: committed journal entry edited or deleted "
                            "(journal entries are append-only)")
    return problems


def _is_journal(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 3 and parts[1] == JOURNAL


def to_commit(ctx: Context, status: list[tuple[str, str]], valid: set[str],
              touched: list[str], drained: list[str]) -> list[str]:
    """Repo-relative memory paths to commit: distilled files changed (now, or by an earlier
    `--no-commit`) and new valid entries (untracked, staged, or just drained)."""
    layout = ctx.layout
    prefix = layout.memory_root + "/"
    out = {prefix + rel for rel in touched}
    out.update(layout.rel(path) for path in drained if path[len(layout.main_memory) + 1:] in valid)
    for xy, path in status:
        rel = path[len(prefix):] if path.startswith(prefix) else path
        if is_distilled(rel) or (rel in valid and xy in ("??", "A ", "AM")):
            out.add(path)
    return sorted(out)
