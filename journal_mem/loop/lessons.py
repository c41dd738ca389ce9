"""What the agent-loop points share: their result, and how they record a lesson.

A loop lesson goes through the same path as `jmem write` (`compose`, then
`file_entry`), so the guard, distill and check judge it like any other.
An episodic record gets a key of its own per run, so that three runs with one
title stay three records.
"""

from __future__ import annotations

import os
import re
from typing import Any

from journal_mem.errors import InvalidEntry
from journal_mem.hashes import sha256
from journal_mem.lessons.write import compose, file_entry
from journal_mem.repo import Context

LESSON_FIELDS = ("type", "confidence", "importance", "key", "supersedes", "retracts",
                 "applies_to", "valid_until", "tags", "refs", "source")


def record_lesson(ctx: Context, context: dict[str, Any], lesson: dict[str, Any],
                  run_id: str, point: str) -> str:
    """File one lesson given as JSON; its key. Episodic records get one key per run."""
    unknown = sorted(set(lesson) - {"title", "body", "topic", "agent", *LESSON_FIELDS})
    if unknown:
        raise InvalidEntry([f"{name}: unknown field" for name in unknown])
    fields = {k: lesson[k] for k in LESSON_FIELDS if lesson.get(k) not in (None, "", [])}
    fields.setdefault("source", f"{point} run {run_id}" if run_id else point)
    tags = list(fields.get("tags") or [])
    fields["tags"] = tags if point in tags else [*tags, point]
    title = str(lesson.get("title") or "")
    if fields.get("type") == "episodic" and "key" not in fields:
        fields["key"] = run_key(title, run_id or os.urandom(8).hex())
    entry = compose(ctx, agent=lesson.get("agent") or context.get("agent"),
                    topic=lesson.get("topic") or context.get("topic") or "loop",
                    title=title, body=str(lesson.get("body") or ""), fields=fields)
    file_entry(ctx, entry, outbox=False)
    return entry.key


def run_key(title: str, run_id: str) -> str:
    """A key for one run's record: a readable start and a hash of title and run."""
    digest = sha256(f"{title}\0{run_id}".encode()).hexdigest()[:10]
    start = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:30].strip("-") or "run"
    return f"{start}-{digest}"
