"""A mem0 export to lesson drafts: pure, every invalid record reported, none dropped silently.

mem0's `get_all` (and the platform's memory export) returns memory objects:
`{"id", "memory", "hash", "metadata", "categories", "user_id", "agent_id",
"app_id", "run_id", "created_at", "updated_at", "expiration_date"}`, as a
list or under `"results"` (or `"memories"`). Teams keep jmem-like fields in
`metadata`: `type`, `confidence`, `tags`, `expires_at`, `topic`,
`importance`. Each memory becomes one lesson of the same type, confidence and
tags (plus its categories), `valid_until` from `expires_at` (or
`expiration_date`), dated `created_at`, written by its `agent_id` when that
is a valid agent name, with its id and scope ids in `source`.

A snapshot (what a mem0-backed agent's daily backup writes from `get(id)` and
`history(id)`) wraps each memory with its history:
`{"memories": [{"memory": {...}, "history": [...]}]}`, the memory's dates in
camelCase (`createdAt`, `updatedAt`: the TypeScript SDK's `MemoryItem`). The
memory keeps `createdAt` as its date (an import must not reset an episodic
fact's age) and names `updatedAt` in its source; the last history event, by
time (the Python store lists rows oldest first, the TypeScript one newest
first), decides whether it is live: a memory whose last event is DELETE is
skipped and counted, never imported.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from journal_mem.journal.drafts import Draft, title_and_body
from journal_mem.journal.entry import IMPORTANCE, MAX_TAGS, TYPES
from journal_mem.names import is_name, slugify, tag_re

SCOPES = ("user_id", "agent_id", "app_id", "run_id")
_ALIASES = {"semantic_memory": "semantic", "procedural_memory": "procedural",
            "episodic_memory": "episodic", "fact": "semantic", "rule": "principle"}
_TAG_BAD = re.compile(r"[^A-Za-z0-9_-]+")


def records(data: bytes) -> list[Any]:
    """The memory records of an export (raises ValueError when it is not one)."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None
    if isinstance(raw, dict):
        for name in ("results", "memories"):
            if isinstance(raw.get(name), list):
                return list(raw[name])
        raise ValueError('expected a list of memories, or {"results": [...]}')
    if not isinstance(raw, list):
        raise ValueError('expected a list of memories, or {"results": [...]}')
    return raw


def _when(value: Any, name: str, problems: list[str]) -> dt.datetime | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        problems.append(f"{name}: {value!r} is not a date")
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        problems.append(f"{name}: {value!r} is not an ISO-8601 date")
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _tags(meta: dict[str, Any], record: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    given = meta.get("tags") or []
    given = [given] if isinstance(given, str) else given
    cats = record.get("categories") or []
    if not isinstance(given, list) or not isinstance(cats, list) or not all(
            isinstance(t, (str, int, float)) for t in [*given, *cats]):
        problems.append("tags: must be a list of words")
        return ()
    tags = sorted({_TAG_BAD.sub("-", str(t)).strip("-_") for t in [*given, *cats]} - {""})
    tags = [t for t in tags if tag_re().fullmatch(t)]
    if len(tags) > MAX_TAGS:
        problems.append(f"tags: {len(tags)} tags and categories, at most {MAX_TAGS}")
    return tuple(tags)


def _kind(meta: dict[str, Any], problems: list[str]) -> tuple[str, float | None]:
    kind = str(meta.get("type") or "semantic").strip().lower()
    kind = _ALIASES.get(kind, kind)
    if kind not in TYPES:
        problems.append(f"metadata.type: {meta.get('type')!r} is not one of {', '.join(TYPES)}")
        return "semantic", None
    conf = meta.get("confidence")
    if conf in (None, ""):
        return kind, None
    try:
        value = float(conf)
    except (TypeError, ValueError):
        problems.append(f"metadata.confidence: {conf!r} is not a number")
        return kind, None
    low, high, _ = TYPES[kind]
    if not low <= value <= high:
        problems.append(f"metadata.confidence: {value} is outside {low}–{high} for {kind}")
    return kind, value


def _agent(record: dict[str, Any], default: str) -> str:
    given = record.get("agent_id")
    if isinstance(given, str):
        slug = slugify(given, 64)
        if is_name(slug):
            return slug
    return default


def _topic(meta: dict[str, Any], tags: tuple[str, ...]) -> str:
    topic = meta.get("topic")
    if isinstance(topic, str) and is_name(slugify(topic, 64)):
        return slugify(topic, 64)
    return slugify(tags[0], 64) if tags and is_name(slugify(tags[0], 64)) else "general"


def _row_time(row: dict[str, Any]) -> str:
    when = row.get("updated_at") or row.get("created_at") or ""
    return str(when).replace("Z", "+00:00")


def _row_order(row: Any) -> tuple[str, int]:
    if not isinstance(row, dict):
        return "", 0
    rid = row.get("id")
    return _row_time(row), rid if isinstance(rid, int) else 0


def deleted(history: list[Any]) -> bool:
    """True when the last event of a memory's history, by time, deletes it."""
    rows = sorted((r for r in history if isinstance(r, dict)), key=_row_order)
    if not rows:
        return False
    last = rows[-1]
    event = str(last.get("event") or last.get("action") or "").upper()
    return event == "DELETE" or last.get("is_deleted") in (True, 1)


def unwrap(record: Any) -> tuple[Any, bool]:
    """(the memory object, whether its history deleted it) of a snapshot record
    `{"memory": {...}, "history": [...]}`; any other record as it is."""
    if isinstance(record, dict) and isinstance(record.get("memory"), dict):
        history = record.get("history")
        return record["memory"], isinstance(history, list) and deleted(history)
    return record, False


def one(record: Any, number: int, source: str, agent: str) -> tuple[Draft | None, list[str]]:
    """The draft for one record, or None and why it is invalid."""
    problems: list[str] = []
    if not isinstance(record, dict):
        return None, ["not a JSON object"]
    text = record.get("memory", record.get("text"))
    if not isinstance(text, str) or not text.strip():
        problems.append("memory: missing or empty")
        text = ""
    meta = record.get("metadata") or {}
    if not isinstance(meta, dict):
        problems.append("metadata: must be an object")
        meta = {}
    kind, confidence = _kind(meta, problems)
    tags = _tags(meta, record, problems)
    created = _when(record.get("created_at") or record.get("createdAt"), "created_at",
                    problems)
    updated = _when(record.get("updated_at") or record.get("updatedAt"), "updated_at",
                    problems)
    until = _when(meta.get("expires_at") or record.get("expiration_date"), "expires_at",
                  problems)
    importance = meta.get("importance")
    if importance is not None and importance not in IMPORTANCE:
        problems.append(f"metadata.importance: {importance!r} is not one of "
                        f"{', '.join(IMPORTANCE)}")
    if problems:
        return None, problems
    scope = " ".join(f"{s.removesuffix('_id')} {record[s]}" for s in SCOPES
                     if isinstance(record.get(s), str) and record[s])
    where = f"id {record.get('id', number)}" + (f" ({scope})" if scope else "")
    if updated is not None and updated != created:
        where += f", updated {updated.isoformat()}"
    title, body = title_and_body(text)
    return Draft(
        agent=_agent(record, agent), topic=_topic(meta, tags), title=title, body=body,
        type=kind, created=created, source=f"{source}: {where}", confidence=confidence,
        importance=importance, tags=tags,
        valid_until=until.isoformat() if until else None, where=f"record {number}",
    ), []  # fmt: skip


def mem0_drafts(data: bytes, source: str, agent: str,
                gone: list[str] | None = None) -> tuple[list[Draft], list[str]]:
    """(drafts, one line per invalid record) from a mem0 export's bytes; `gone` collects
    one line per record its history deleted."""
    try:
        found = records(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return [], [f"not a mem0 export: {exc}"]
    drafts: list[Draft] = []
    invalid: list[str] = []
    for number, wrapped in enumerate(found, 1):
        record, was_deleted = unwrap(wrapped)
        if was_deleted:
            rid = record.get("id") if isinstance(record, dict) else None
            if gone is not None:
                gone.append(f"record {number}" + (f" (id {rid})" if rid else "")
                            + ": deleted (its last history event is DELETE)")
            continue
        draft, problems = one(record, number, source, agent)
        if draft is not None:
            drafts.append(draft)
        else:
            rid = record.get("id") if isinstance(record, dict) else None
            label = f"record {number}" + (f" (id {rid})" if rid else "")
            invalid += [f"{label}: {p}" for p in problems]
    return drafts, invalid
