"""The order the fold replays the journal in: by cause first, by clock only between
strangers (docs/DESIGN.md, "Order by cause").

A machine's clock says nothing about what its writer knew: a correction
written on a laptop two minutes behind the machine that wrote the fact it
corrects carries the earlier `created`. So an entry records what it was
written after (`knew`: the newest entry of each key it names, as `write`
read the journal on disk), and the replay is a topological order of those
edges; `created`, then the path, only decides between entries that are not
ordered by them.

Why naming only the newest entry of a key is enough: an entry knows only
entries that existed before it, so every edge points from an older file to a
newer one. Adding entries that nobody knew yet never changes the relative
order of the ones already there (they become ready exactly as before, and
the heap picks among them exactly as before). So the order the distiller
computes, restricted to the entries the writer read, is the order the writer
computed, and an entry placed after the newest of them is after all of them.

Pure and standard library only: `write` asks it at write time, the fold at
distill time, and both must agree.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Container, Iterable

TYPE_CHECKING = False  # `typing` costs the wake hook ~3 ms: annotations only
if TYPE_CHECKING:  # annotations only: the wake hook orders its pending views with this
    import datetime as dt
    from typing import Protocol, TypeVar

    from journal_mem.journal.entry import Entry

    class Lineage(Protocol):
        """What git history says (`gitops.lineage.History`)."""

        @property
        def added(self) -> dict[str, str]: ...  # entry path -> the commit that added it
        def generation(self, commit: str) -> int: ...
        def descends(self, later: str, earlier: str) -> bool: ...

    class Ordered(Protocol):
        """What the order reads of an entry (an `Entry`, or the pack's `PendingFile`)."""

        @property
        def key(self) -> str: ...
        @property
        def created(self) -> dt.datetime: ...
        @property
        def knew(self) -> tuple[str, ...]: ...
        @property
        def supersedes(self) -> tuple[str, ...]: ...
        @property
        def retracts(self) -> tuple[str, ...]: ...

    T = TypeVar("T", bound="Ordered")

Item = tuple[str, "Entry"]  # (memory-root-relative path, entry)
GROUP_LIMIT = 64  # a key with more entries than this is ordered along its chain only


def causal_order(entries: Iterable[tuple[str, T]],
                 history: dict[str, tuple[str, ...]] | None = None,
                 broken: list[str] | None = None,
                 settled: Container[str] = (),
                 clock: Callable[[T], float] | None = None) -> list[tuple[str, T]]:
    """`entries` with each one after every entry it knew: by git history first
    (`history`: for an entry's path, the entries whose commits its commit descends
    from, `gitops.lineage.edges`), then by its `knew`, then by what it names (an entry
    that supersedes or retracts a key saw at least one entry of it: it comes after the
    earliest, whatever the clocks say, unless that one says by its `knew` or its history
    that it came after); else by (`created`, path).

    A history edge that contradicts a `knew` (the entry it would place later
    names, in its own `knew`, the one it would place first: committed out of the
    order they were written) gives way to it: the writer saw what it saw. Other
    cycles (hand-made entries that each claim to know the other, two lessons that each
    correct the other's key) are broken at the earliest (`created`, path) so that the
    order stays total and deterministic; `broken` gets the path of each entry placed
    so. A cycle is the one case where an entry added later lands among the earlier
    ones: it is ready, so the cycle waits for it.

    `settled` are keys whose earliest entry was placed before every one of `entries`
    (`replay.resume`): naming one orders nothing among these. `clock`: what stands for
    an entry's `created`, ordered as it is (the hooks' `PendingFile.when`, no datetime).
    """
    if clock is None:
        items = sorted(entries, key=lambda pe: (pe[1].created, pe[0]))
    else:
        items = sorted(entries, key=lambda pe: (clock(pe[1]), pe[0]))
    index = {path: n for n, (path, _) in enumerate(items)}
    waiting = [0] * len(items)
    after: dict[int, list[int]] = {}
    history = history or {}
    own: dict[str, list[int]] = {}  # key -> the entries of it, when any entry names one
    if any(entry.supersedes or entry.retracts for _, entry in items):
        for n, (_, entry) in enumerate(items):
            own.setdefault(entry.key, []).append(n)
    for n, (path, entry) in enumerate(items):
        seen = history.get(path, ())
        if not (entry.knew or seen or entry.supersedes or entry.retracts):
            continue  # it knew nothing: only the clocks place it (most entries)
        known_here = set(entry.knew)
        for known in seen:
            first = index.get(known)
            if first is not None and first != n and path not in items[first][1].knew:
                known_here.add(known)
        for key in (*entry.supersedes, *entry.retracts):  # it names the key: it saw one
            if key in settled:
                continue
            first = next((i for i in own.get(key, ()) if i != n), None)  # the earliest
            if first is not None:
                named, by = items[first]
                if path not in by.knew and path not in history.get(named, ()):
                    known_here.add(named)
        for known in known_here:
            first = index.get(known)
            if first is not None and first != n:
                after.setdefault(first, []).append(n)
                waiting[n] += 1
    if not after:
        return items  # no entry knew another: the clocks' order
    ready = [n for n in range(len(items)) if not waiting[n]]  # sorted: a valid heap
    out: list[tuple[str, T]] = []
    done = [False] * len(items)
    low = 0  # the earliest item not yet placed, for breaking a cycle
    while len(out) < len(items):
        if not ready:
            while done[low]:
                low += 1
            ready.append(low)
            waiting[low] = 0
            if broken is not None:
                broken.append(items[low][0])
        n = heapq.heappop(ready)
        if done[n]:
            continue
        done[n] = True
        out.append(items[n])
        for later in after.get(n, ()):
            waiting[later] -= 1
            if waiting[later] == 0 and not done[later]:
                heapq.heappush(ready, later)
    return out


def concerns(entry: Entry) -> set[str]:
    """The keys an entry speaks about: its own, and those it supersedes, retracts or
    drops."""
    return {entry.key, *entry.supersedes, *entry.retracts, *entry.drops}


def latest_by_key(entries: Iterable[Item]) -> dict[str, str]:
    """Each key's last entry (in causal order) that concerns it, by path."""
    last: dict[str, str] = {}
    for path, entry in causal_order(entries):
        for key in concerns(entry):
            last[key] = path
    return last


def newest_of(entries: Iterable[Item] | dict[str, str], keys: Iterable[str]) -> tuple[str, ...]:
    """For each of `keys`, the path of the last entry (in causal order) that concerns
    it: what a new entry about those keys was written after (its `knew`). `entries`
    may be a `latest_by_key` already made, for many questions about one journal."""
    last = entries if isinstance(entries, dict) else latest_by_key(entries)
    return tuple(sorted({last[key] for key in keys if key in last}))


def history_edges(entries: Iterable[Item], history: Lineage) -> dict[str, tuple[str, ...]]:
    """For each entry path, the entries it knew by history (their commits are proper
    ancestors of its commit), among those that speak about a key it speaks about: the
    fold's result for a key depends only on the order of the entries that concern it.
    An entry not committed yet knew every committed one: the distill commits it on top
    of them, and a rebuild from that commit must order it as this fold does.

    A key with more than `GROUP_LIMIT` entries (pending ones too) is ordered along its
    chain of commits only: each entry after every entry of the commit before its own
    (by generation) when its commit descends from that one, and a pending entry after
    every entry of the last commit, as if committed on top of it. On a line of commits
    that is every entry before it, and a distill's commit of pending entries changes
    none of their edges (`_along_chain`)."""
    by_key: dict[str, list[tuple[str, str]]] = {}
    pending: dict[str, list[str]] = {}
    added = history.added
    for path, entry in entries:
        commit = added.get(path)
        keys = (concerns(entry) if entry.supersedes or entry.retracts or entry.drops
                else (entry.key,))  # most entries speak only of their own key
        for key in keys:
            if commit is None:  # it will be committed on top of what is committed now
                pending.setdefault(key, []).append(path)
            else:
                by_key.setdefault(key, []).append((path, commit))
    out: dict[str, set[str]] = {}
    for key, pairs in by_key.items():
        waiting = pending.get(key, ())
        if len(pairs) + len(waiting) > GROUP_LIMIT:
            _along_chain(pairs, waiting, history, out)
            continue
        for path in waiting:
            out.setdefault(path, set()).update(p for p, _ in pairs)
        if len(pairs) < 2 or len({commit for _, commit in pairs}) < 2:
            continue
        group = sorted((history.generation(commit), path, commit) for path, commit in pairs)
        for j, (_, path, commit) in enumerate(group):
            for _, before, old in group[:j]:
                if history.descends(commit, old):
                    out.setdefault(path, set()).add(before)
    return {path: tuple(sorted(known)) for path, known in out.items() if known}


def _along_chain(pairs: list[tuple[str, str]], waiting: Iterable[str], history: Lineage,
                 out: dict[str, set[str]]) -> None:
    """The edges of a long key group (`history_edges`): its commits in order of generation
    (then of name), each one's entries after every entry of the commit before when it
    descends from that one; the `waiting` entries (not committed) after every entry of
    the last."""
    commits: dict[str, list[str]] = {}
    for path, commit in sorted(pairs, key=lambda pc: (history.generation(pc[1]), pc[1], pc[0])):
        commits.setdefault(commit, []).append(path)
    before: list[str] = []
    last = ""
    for commit, paths in commits.items():
        if before and history.descends(commit, last):
            for path in paths:
                out.setdefault(path, set()).update(before)
        before, last = paths, commit
    for path in waiting:
        out.setdefault(path, set()).update(before)


def related_entries(entries: Iterable[Item]) -> bool:
    """Whether two entries speak about one key (else no order among them matters, and
    history need not be read)."""
    seen: set[str] = set()
    for _, entry in entries:
        keys = concerns(entry)
        if not seen.isdisjoint(keys):
            return True
        seen |= keys
    return False
