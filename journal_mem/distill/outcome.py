"""How a distill's outcome is told: lines for a person, a mapping for `--json`."""

from __future__ import annotations

import heapq
from itertools import combinations
from typing import Any

from journal_mem.distill.changes import lessons
from journal_mem.distill.distiller import Outcome

SHOW = 10  # list items shown before "… and N more"
PAIRS = 20  # near-duplicate pairs shown, one a line: a screenful


COUNT_MAX = 200_000  # pairs counted one by one at most; past that, the groups are told


def pairs(groups: list[tuple[str, ...]], limit: int = PAIRS) -> tuple[list[tuple[str, str]],
                                                                     int | None]:
    """The first `limit` pairs of keys within the near-duplicate groups, sorted, each
    once, and how many distinct pairs there are; None when the groups hold more than
    `COUNT_MAX` pairs between them (10k titles "Lesson N about X" are one group of 50
    million pairs: listing them took six minutes of a distill)."""
    total = sum(len(g) * (len(g) - 1) // 2 for g in groups)
    if total <= COUNT_MAX:
        found = sorted({pair for g in groups for pair in combinations(sorted(g), 2)})
        return found[:limit], len(found)
    first: list[tuple[str, str]] = []
    for pair in heapq.merge(*(combinations(sorted(g), 2) for g in groups)):
        if not first or pair != first[-1]:
            first.append(pair)
            if len(first) == limit:
                break
    return first, None


def _some(items: list[str]) -> str:
    head = ", ".join(items[:SHOW])
    return head + (f", … and {len(items) - SHOW} more" if len(items) > SHOW else "")


def distill_lines(o: Outcome) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr lines) for an outcome."""
    out: list[str] = []
    err: list[str] = []
    if o.status in ("not-due", "disabled", "busy"):
        return [o.note], []
    out += o.adopted
    for path in o.drained.moved:
        out.append(f"outbox: moved into the journal: {path}")
    for problem in o.drained.invalid:
        err.append(f"outbox entry left in the outbox: {problem}")
    for path, problems in o.invalid.items():
        err += [f"invalid entry skipped: {path}: {p}" for p in problems]
    verb = {"distilled": "distilled", "would-change": "would change",
            "dry-run": "would write", "unchanged": "up to date"}[o.status]
    if o.status == "unchanged":
        out.append(f"nothing to distill: the memory files are up to date ({o.date})")
    else:
        out.append(f"{verb}: {lessons(len(o.new_lessons))} folded as of {o.date}; "
                   f"{len(o.written)} files written, {len(o.deleted)} removed")
    for agent, ch in o.changes.items():
        out.append(f"  {agent}: +{len(ch.added)} ~{len(ch.changed)} -{len(ch.removed)}")
        out += [f"    removed {k}: {why}" for k, why in list(ch.removed.items())[:SHOW]]
    stale = o.stale_refs
    if stale:
        out.append("dropped because every file they cite is gone from HEAD: "
                   f"{len(stale)} fact{'' if len(stale) == 1 else 's'}")
        out += [f"  {key}: {why}" for key, why in stale.items()]
    if o.conflicts:
        out.append(f"open conflicts (a newer lesson of another agent probably corrects an "
                   f"older fact; settle with --supersedes, --retracts or a restatement): "
                   f"{len(o.conflicts)}")
        out += [f"  {old} <- {new}" for old, new in o.conflicts[:PAIRS]]
        if len(o.conflicts) > PAIRS:
            out.append(f"  … and {len(o.conflicts) - PAIRS} more (`jmem distill --json`)")
    if o.commit:
        out.append(f"committed {o.commit[:12]}")
    for agent, keys in o.evicted.items():
        out.append(f"evicted (no room in a topic file; still in the journal): {agent}: "
                   f"{_some(keys)}")
    if o.near_duplicates:
        found, count = pairs(o.near_duplicates)
        groups = o.near_duplicates
        out.append("near-duplicate titles (not merged; check them): " + (
            f"{count} pairs" if count is not None else
            f"{len(groups)} groups, the largest of {max(map(len, groups))} titles"))
        out += [f"  {a} ~ {b}" for a, b in found]
        if count is None or count > len(found):
            more = f"{count - len(found)} more pairs" if count is not None else "more"
            out.append(f"  … and {more} (`jmem distill --json`)")
    for key, why in sorted(o.flagged.items()):
        out.append(f"flagged {key}: {why}")
    if o.invalid or o.drained.invalid:
        err.append("some entries were invalid and skipped: exit 1")
    return out, err


def distill_json(o: Outcome) -> dict[str, Any]:
    """The outcome as plain data."""
    return {
        "status": o.status, "date": o.date, "note": o.note, "commit": o.commit,
        "new_lessons": o.new_lessons, "written": o.written, "deleted": o.deleted,
        "changes": {a: {"added": c.added, "changed": c.changed, "removed": c.removed}
                    for a, c in o.changes.items()},
        "outbox": {"moved": o.drained.moved, "invalid": o.drained.invalid},
        "invalid": {p: list(v) for p, v in o.invalid.items()},
        "evicted": o.evicted, "near_duplicates": [list(g) for g in o.near_duplicates],
        "flagged": o.flagged, "stale_refs": o.stale_refs,
        "conflicts": [{"old": old, "newer": new} for old, new in o.conflicts],
        "adopted": o.adopted, "exit_code": o.exit_code,
    }  # fmt: skip
