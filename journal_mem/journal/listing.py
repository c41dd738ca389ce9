"""Listing the journal and the outbox: which files are entries, which are pending.

File names only (and the distill state file): nothing here opens an entry.
The wake-up hook asks for the pending entries on each session start, and
`write` before it files a lesson; the journal's part of that answer is kept
(`cache/pending-list.json`) per journal folder under its stat and the distill
state's, so while nothing changed it costs a few `stat` calls, and after a
lesson was written it lists that one folder against the names the last distill
folded there (`_Folded`), not 10k names against a 10k-path state.
Standard library only.
"""

from __future__ import annotations

import bisect
import marshal
import operator
import os
import sys
import time

from journal_mem import jsonc
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


def entry_names(layout: Layout, misnamed: list[str] | None = None,
                agents: list[str] | None = None) -> list[tuple[str, list[str]]]:
    """`entry_files` by journal folder: (agent, its entry files' names, sorted), the
    folders in the order of their paths (`agent/journal/`), so that the files come in
    the order of theirs; of every agent on disk, or of `agents` (in that order)."""
    out = []
    for agent in journal_order(layout.agents_on_disk()) if agents is None else agents:
        names = listdir(layout.journal_dir(agent))
        # each name matched once, by `filter` in C (100k names: 140 ms by two
        # comprehensions, 56 this way); the others only when there are any
        entries = list(filter(ENTRY_NAME_RE.fullmatch, names))
        if misnamed is not None and len(entries) != len(names):
            named = set(entries)
            misnamed += [f"{agent}/{JOURNAL}/{n}" for n in names
                         if n not in named and not n.startswith(".")]
        entries.sort()
        out.append((agent, entries))
    if misnamed is not None:
        misnamed.sort()
    return out


def journal_order(agents: list[str]) -> list[str]:
    """`agents` in the order of their journal folders' paths (`agent/journal/`)."""
    return sorted(agents, key=lambda agent: f"{agent}/{JOURNAL}/")


def misnamed_files(layout: Layout) -> list[str]:
    """Memory-root-relative paths of the journal files whose names make them no entry."""
    found: list[str] = []
    entry_files(layout, found)
    return found


# A folder or state file changed this recently may change again within the same tick of
# its mtime: a listing made now is not kept (git's "racy" entries, the same way).
_RACY_NS = 2_000_000_000
PENDING_LIST = "pending-list.json"
FOLDED_NAMES = "folded-names"  # a folder: one file per journal folder

# A file's stat as the kept lists compare it: [mtime_ns, inode, size]; [] for no file;
# None for one changed too recently to be told apart from its next change (`_RACY_NS`).
_Key = list[int] | None


def _key(path: str, now: int) -> _Key:
    try:
        st = os.stat(path)
    except OSError:
        return []
    if now - st.st_mtime_ns < _RACY_NS:
        return None
    return [st.st_mtime_ns, st.st_ino, st.st_size]


def _pending_journal(layout: Layout, agents: list[str]) -> list[Found]:
    """The journal entries not yet folded. Each journal folder's pending names are kept
    (`cache/pending-list.json`) under its stat and the distill state's: a lesson written
    changes one folder, and only that one is listed again, against the names the last
    distill folded there (`_Folded`), not every folder against the whole state
    (at 100k lessons, 130-280 ms after every lesson written)."""
    memo = os.path.join(layout.state_dir, "cache", PENDING_LIST)
    now = time.time_ns()
    state = _key(layout.distill_state, now)
    kept = read_json(memo) if state is not None else None
    folders: dict[str, object] = {}
    if (isinstance(kept, dict) and kept.get("root") == layout.memory_root
            and kept.get("state") == state and isinstance(kept.get("folders"), dict)):
        folders = kept["folders"]
    done = _Folded(layout, state)  # read only for a folder listed again
    keep: dict[str, object] = {}
    out: list[Found] = []
    for agent in agents:
        folder = os.path.join(layout.agent_dir(agent), JOURNAL)
        key = _key(folder, now)
        entry = folders.get(agent)
        if (key is not None and isinstance(entry, list) and len(entry) == 2
                and entry[0] == key and isinstance(entry[1], list)
                and all(isinstance(n, str) for n in entry[1])):
            pending: list[str] = entry[1]
        else:
            folded_here = done.names(agent)
            # membership first: with 10k lessons, matching and sorting only the
            # few unfolded names is what keeps the wake-up hook fast
            fresh = [n for n in listdir(folder) if n not in folded_here]
            pending = sorted(n for n in fresh if ENTRY_NAME_RE.fullmatch(n))
            if key is not None and key != _key(folder, time.time_ns()):
                key = None  # it moved while it was listed: not kept
        if key is not None:
            keep[agent] = [key, pending]
        prefix = f"{agent}/{JOURNAL}/"
        out += [(agent, os.path.join(folder, name), prefix + name, False) for name in pending]
    if state is not None and keep != {a: folders.get(a) for a in keep} \
            and state == _key(layout.distill_state, time.time_ns()):
        keep.update((a, e) for a, e in folders.items() if a not in keep)  # other callers'
        try:
            os.makedirs(os.path.dirname(memo), exist_ok=True)
            replace_atomic(memo, jsonc.dumps({"root": layout.memory_root, "state": state,
                                              "folders": keep}))
        except OSError:
            pass  # only slower next time
    return out


class _Folded:
    """The names the last distill folded in each journal folder, kept one file per folder
    (`cache/folded-names/AGENT.marshal`, `marshal`: built in, so free to import) under
    the distill state's stat and this Python: a folder listed again is compared with its
    own names, not with the whole state parsed again (8 MB of JSON at 100k lessons, and
    ~30-50 ms to load all 100k names even as `marshal`). A folder's names are kept as
    one string, NUL between them: `marshal` writes a set in a sorted order (5k names
    took ~12 ms, 100k ~140 ms of the first call after a distill; the string ~12 ms)."""

    def __init__(self, layout: Layout, state: _Key) -> None:
        self.layout, self.state = layout, state
        self.folder = os.path.join(layout.state_dir, "cache", FOLDED_NAMES)
        self.parsed: dict[str, frozenset[str]] | None = None

    def names(self, agent: str) -> frozenset[str]:
        """The names the last distill folded in `agent`'s journal folder."""
        if self.parsed is None and self.state:
            try:
                with open(os.path.join(self.folder, f"{agent}.marshal"), "rb") as fh:
                    version, key, names = marshal.loads(fh.read())
                if version == sys.version and key == self.state and isinstance(names, str):
                    return frozenset(names.split("\0")) if names else frozenset()
            except Exception:  # a disposable cache: missing, damaged or another format
                pass
        if self.parsed is None:
            self.parsed = self._parse()
        return self.parsed.get(agent, frozenset())

    def _parse(self) -> dict[str, frozenset[str]]:
        """Every folder's names from the state file, kept for the next callers."""
        state = read_state(self.layout.distill_state)
        parsed = _by_folder(state.folded if state else ())
        if self.state and self.state == _key(self.layout.distill_state, time.time_ns()):
            try:
                os.makedirs(self.folder, exist_ok=True)
                for agent in self.layout.agents_on_disk():  # none left with an older state
                    replace_atomic(os.path.join(self.folder, f"{agent}.marshal"), marshal.dumps(
                        (sys.version, self.state, "\0".join(parsed.get(agent, ())))))
            except (ValueError, OSError):
                pass  # only slower next time
        return parsed


def _by_folder(rels: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """{agent: the names of its journal folder} of sorted memory-root-relative paths. The
    paths of one folder share its prefix, so they are one run of them: found by
    bisection, and cut in C (100k paths a name at a time took ~150 ms)."""
    out: dict[str, frozenset[str]] = {}
    start, end = 0, len(rels)
    while start < end:
        agent, sep, _ = rels[start].partition(f"/{JOURNAL}/")
        if not sep:
            start += 1
            continue
        prefix = f"{agent}/{JOURNAL}/"
        stop = bisect.bisect_right(rels, prefix, start, end, key=operator.itemgetter(
            slice(len(prefix))))
        out[agent] = frozenset(map(operator.itemgetter(slice(len(prefix), None)),
                                   rels[start:stop]))
        start = stop
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
