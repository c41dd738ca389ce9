"""Listing the journal and the outbox: which files are entries, which are pending.

File names only (and the distill state file): nothing here opens an entry.
The wake-up hook asks for the pending entries on each session start; the
journal's part of that answer is kept (`cache/pending-list.json`) under the
journal folders' and the distill state's stats, so while neither changed it
costs a few `stat` calls, not a listing of 10k names and a 10k-path state.
Standard library only.
"""

from __future__ import annotations

import json
import os
import time

from journal_mem.fsutil import read_json, replace_atomic
from journal_mem.journal.foldstate import read_state
from journal_mem.layout import JOURNAL, Layout
from journal_mem.names import ENTRY_NAME_RE

Found = tuple[str, str, str, bool]  # (agent folder, path, display path, in outbox)


def listdir(folder: str) -> list[str]:
    """The names in `folder`; none when it is missing or no folder."""
    try:
        return os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []


MISNAMED = ("not read as a journal entry: its name must be YYYY-MM-DD-<words>.md "
            "(a lowercase .md, a '-' after the date); rename it")


def entry_files(layout: Layout,
                misnamed: list[str] | None = None) -> list[tuple[str, str, str]]:
    """(agent, memory-root-relative path, file name) of every journal entry file, sorted.

    Other visible files of a journal folder (`2026-11-30_x.md`, `….MD`, notes)
    are added to `misnamed` (memory-root-relative): they are never read, and
    saying so beats ignoring a lesson silently. Names only (no `os.DirEntry`):
    at 100k entries the dir entries and their cached stats would be tens of MB.
    """
    return [(agent, f"{agent}/{JOURNAL}/{n}", n)
            for agent, names in entry_names(layout, misnamed) for n in names]


def entry_names(layout: Layout,
                misnamed: list[str] | None = None) -> list[tuple[str, list[str]]]:
    """`entry_files` by journal folder: (agent, its entry files' names, sorted), the
    folders in the order of their paths (`agent/journal/`), so that the files come in
    the order of theirs."""
    out = []
    for agent in sorted(layout.agents_on_disk(), key=lambda agent: f"{agent}/{JOURNAL}/"):
        names = listdir(layout.journal_dir(agent))
        out.append((agent, sorted(n for n in names if ENTRY_NAME_RE.fullmatch(n))))
        if misnamed is not None:
            misnamed += [f"{agent}/{JOURNAL}/{n}" for n in names
                         if not n.startswith(".") and not ENTRY_NAME_RE.fullmatch(n)]
    if misnamed is not None:
        misnamed.sort()
    return out


def misnamed_files(layout: Layout) -> list[str]:
    """Memory-root-relative paths of the journal files whose names make them no entry."""
    found: list[str] = []
    entry_files(layout, found)
    return found


def folded(layout: Layout) -> set[str]:
    """Memory-root-relative paths the last distill folded (empty when it never ran)."""
    state = read_state(layout.distill_state)
    return set(state.folded) if state else set()


# A folder or state file changed this recently may change again within the same tick of
# its mtime: a listing made now is not kept (git's "racy" entries, the same way).
_RACY_NS = 2_000_000_000


def _stats(layout: Layout, agents: list[str]) -> list[object] | None:
    """What the journal's pending entries depend on: each folder's and the distill
    state's stats; None when one changed too recently to be trusted."""
    key: list[object] = [layout.memory_root]
    now = time.time_ns()
    for agent, path in [(a, os.path.join(layout.agent_dir(a), JOURNAL)) for a in agents] + [
            ("", layout.distill_state)]:
        try:
            st = os.stat(path)
        except OSError:
            key.append([agent, None])
            continue
        if now - st.st_mtime_ns < _RACY_NS:
            return None
        key.append([agent, st.st_mtime_ns, st.st_ino, st.st_size])
    return key


def _pending_journal(layout: Layout, agents: list[str]) -> list[Found]:
    """The journal entries not yet folded, through the kept answer when it still holds."""
    memo = os.path.join(layout.state_dir, "cache", "pending-list.json")
    key = _stats(layout, agents)
    kept = read_json(memo) if key is not None else None
    if isinstance(kept, dict) and kept.get("key") == key:
        return [(a, p, r, False) for a, p, r in kept["found"]]
    done = folded(layout)
    out: list[Found] = []
    for agent in agents:
        folder = os.path.join(layout.agent_dir(agent), JOURNAL)
        prefix = f"{agent}/{JOURNAL}/"
        # membership first: with 10k lessons, matching and sorting only the
        # few unfolded names is what keeps the wake-up hook fast
        fresh = [n for n in listdir(folder) if prefix + n not in done]
        for name in sorted(n for n in fresh if ENTRY_NAME_RE.fullmatch(n)):
            out.append((agent, os.path.join(folder, name), prefix + name, False))
    if key is not None and key == _stats(layout, agents):  # nothing moved while listing
        try:
            os.makedirs(os.path.dirname(memo), exist_ok=True)
            replace_atomic(memo, json.dumps({"key": key, "found": [f[:3] for f in out]}))
        except OSError:
            pass  # only slower next time
    return out


def pending_paths(layout: Layout, agents: list[str] | None = None) -> list[Found]:
    """(agent folder, path, display path, in outbox) of every pending entry file.

    Journal entries not listed in distill-state.json, then every outbox entry.
    File names only: nothing is opened but the state file.
    """
    out = _pending_journal(layout, layout.agents_on_disk() if agents is None else agents)
    outbox = os.path.join(layout.state_dir, "outbox")
    for agent in sorted(listdir(outbox)):
        if agents is not None and agent not in agents:
            continue
        folder = os.path.join(outbox, agent)
        for name in sorted(n for n in listdir(folder) if ENTRY_NAME_RE.fullmatch(n)):
            out.append((agent, os.path.join(folder, name), f"outbox/{agent}/{name}", True))
    return out
