"""The agent-loop hook log: `<git-common-dir>/journal-mem/logs/hooks.jsonl`.

One JSON line per call of a loop point: when, which point, ran or skipped
and why, the counts (facts found, lessons written, errors), the time it
took, and the last 400 characters of the result. A harvest whose writes all
fail therefore reads as failing here, never as "ok" (see
docs/DESIGN.md, "Agent loop"). Lines are appended with one `write` on an `O_APPEND` descriptor, so
concurrent callers never interleave within a line.
"""

from __future__ import annotations

import json
import os
from collections import Counter

from journal_mem.fsutil import append_json_line

TYPE_CHECKING = False  # `typing` is not on the loop's hot path
if TYPE_CHECKING:
    from typing import Any

TAIL = 400  # characters of the result kept per line
LOG_NAME = "hooks.jsonl"


def log_path(state_dir: str) -> str:
    return os.path.join(state_dir, "logs", LOG_NAME)


def append(state_dir: str, record: dict[str, Any]) -> None:
    """Add one record (raises OSError when the log cannot be written)."""
    append_json_line(log_path(state_dir), record)


def read(state_dir: str, last: int | None = None) -> list[dict[str, Any]]:
    """The records, oldest first (the `last` N when given); unreadable lines are skipped."""
    try:
        with open(log_path(state_dir), encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines[-last:] if last else lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def summary(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per point: calls, ran, skipped, calls with errors, totals, and the last error."""
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        point = str(rec.get("point", "?"))
        row = out.setdefault(point, {"calls": 0, "ran": 0, "skipped": 0, "failed": 0,
                                     "found": 0, "written": 0, "last_error": None,
                                     "skip_reasons": Counter()})
        row["calls"] += 1
        row["ran"] += bool(rec.get("ran"))
        row["skipped"] += bool(rec.get("skipped"))
        row["found"] += int(rec.get("found", 0) or 0)
        row["written"] += int(rec.get("written", 0) or 0)
        if rec.get("errors"):
            row["failed"] += 1
            row["last_error"] = f"{rec.get('time', '')} {rec.get('first_error', '')}".strip()
        if rec.get("skipped"):
            row["skip_reasons"][str(rec.get("reason", ""))] += 1
    for row in out.values():
        row["skip_reasons"] = dict(row["skip_reasons"])
    return out


def render(table: dict[str, dict[str, Any]]) -> list[str]:
    """Lines for `jmem status --hooks`."""
    if not table:
        return ["no agent-loop hook has run (log: <git-common-dir>/journal-mem/logs/hooks.jsonl)"]
    out = []
    for point in sorted(table):
        row = table[point]
        out.append(f"{point}: {row['calls']} calls, {row['ran']} ran, {row['skipped']} skipped,"
                   f" {row['failed']} with errors; {row['found']} facts found,"
                   f" {row['written']} lessons written")
        for reason, count in sorted(row["skip_reasons"].items()):
            out.append(f"  skipped {count}×: {reason}")
        if row["last_error"]:
            out.append(f"  last error: {row['last_error']}")
    return out
