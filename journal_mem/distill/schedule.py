"""Is a distill due: pending lessons against `distill.threshold` and `max_age_hours`.

The post-commit hook asks this on every commit (`jmem distill --if-due`), so
it reads only file names and stats, plus the `created` of pending entries when
there are fewer than the threshold.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable

from journal_mem.fsutil import read_json, replace_atomic
from journal_mem.gitops import mergedriver
from journal_mem.journal.listing import Found, pending_paths
from journal_mem.journal.reader import PendingFile, read_lessons
from journal_mem.layout import Layout
from journal_mem.repo import Context
from journal_mem.settings import env_flag

INVALID = "invalid-entries.json"  # in the state dir's cache: entries found invalid


def off_reason(ctx: Context) -> str | None:
    """Why an `--if-due` (hook) distill must not run, or None."""
    if env_flag("JMEM_DISABLE"):
        return "journal-mem is disabled (JMEM_DISABLE=1): no distill"
    if not ctx.config.hooks.distill_on_commit:
        return "hooks.distill_on_commit is false: no distill on commit"
    return None


def pending(layout: Layout) -> list[Found]:
    """Journal and outbox entries the last distill did not fold.

    An entry the last distill found invalid does not count while it is
    unchanged: it cannot be folded, and counting it would start a failing
    background distill on every commit until someone fixes it (the distill
    that found it exited 1 and named it).
    """
    known = _known_invalid(layout)
    return [found for found in pending_paths(layout)
            if known.get(found[2]) is None or known[found[2]] != _stat_key(found[1])]


def _invalid_path(layout: Layout) -> str:
    return os.path.join(layout.state_dir, "cache", INVALID)


def _stat_key(path: str) -> list[int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _known_invalid(layout: Layout) -> dict[str, list[int]]:
    data = read_json(_invalid_path(layout))
    return data if isinstance(data, dict) else {}


def remember_invalid(layout: Layout, invalid: Iterable[str]) -> None:
    """Record the journal entries this distill could not fold, with their stat (cache)."""
    keys = {rel: _stat_key(os.path.join(layout.main_memory, rel)) for rel in invalid}
    data = json.dumps({rel: key for rel, key in keys.items() if key}, sort_keys=True)
    try:
        replace_atomic(_invalid_path(layout), data)
    except OSError:
        pass  # only a cache: without it such entries count as pending


def is_due(ctx: Context, now: dt.datetime | None = None) -> bool:
    """Pending lessons reach `distill.threshold`, the oldest is older than `max_age_hours`,
    or a merge kept one side of the distilled files (`gitops/mergedriver.py`)."""

    if mergedriver.wanted(ctx.layout.state_dir):
        return True
    waiting = pending(ctx.layout)
    if not waiting:
        return False
    if len(waiting) >= ctx.config.distill.threshold:
        return True
    now = now or dt.datetime.now(dt.UTC)
    oldest = min(_written_at(x) for x in read_lessons(ctx.layout, waiting, ctx.policy))
    return (now - oldest).total_seconds() >= ctx.config.distill.max_age_hours * 3600


def _written_at(lesson: PendingFile) -> dt.datetime:
    """An entry's `created` (judged by the one reader), or its file's mtime when invalid."""
    if lesson.stamp and not lesson.problems:
        return dt.datetime.fromisoformat(lesson.stamp)
    try:
        return dt.datetime.fromtimestamp(os.stat(lesson.path).st_mtime, dt.UTC)
    except OSError:
        return dt.datetime.now(dt.UTC)
