"""`jmem export`'s snapshot: every live fact, the journal's entry list and the distill state.

Pure: `build` turns values into the JSON document, `drafts` reads one back
into lesson drafts (one per live fact, same key, text, type, confidence,
importance, holders, topic, date, valid_until, refs and tags), so export →
import into an empty repository → distill gives the same MEMORY.md files.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from typing import Any

from journal_mem.journal.drafts import Draft
from journal_mem.journal.entry import Entry
from journal_mem.journal.fold import Fact, rank
from journal_mem.journal.foldstate import FoldState

FORMAT = "journal-mem-snapshot"
SCHEMA = 1


def _iso(value: dt.date | dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def fact_record(fact: Fact, entry: Entry | None) -> dict[str, Any]:
    """One live fact as JSON (`entry` is the newest entry with its key, for valid_until)."""
    return {
        "key": fact.key, "title": fact.title, "body": fact.body, "type": fact.type,
        "confidence": fact.confidence, "importance": fact.importance,
        "holders": list(fact.holders), "topic": fact.topic, "created": _iso(fact.created),
        "valid_until": _iso(entry.valid_until if entry else None), "refs": list(fact.refs),
        "tags": list(fact.tags), "source": fact.source, "entry": fact.path,
    }  # fmt: skip


def build(
    *, facts: Iterable[Fact], entries: dict[str, Entry], invalid: dict[str, tuple[str, ...]],
    state: FoldState | None, head: str | None, date: dt.date, memory_root: str,
) -> dict[str, Any]:
    """The snapshot document (facts in rank order, entries sorted by path)."""
    listed: list[dict[str, Any]] = [
        {"path": rel, "agent": e.agent, "key": e.key, "created": _iso(e.created), "valid": True}
        for rel, e in entries.items()]
    listed += [{"path": rel, "valid": False, "problems": list(p)} for rel, p in invalid.items()]
    return {
        "format": FORMAT, "schema": SCHEMA, "head": head, "date": date.isoformat(),
        "memory_root": memory_root,
        "facts": [fact_record(f, entries.get(f.path)) for f in sorted(facts, key=rank)],
        "entries": sorted(listed, key=lambda r: str(r["path"])),
        "distill_state": None if state is None else {
            "date": state.date.isoformat(), "folded": list(state.folded)},
    }  # fmt: skip


def dumps(doc: dict[str, Any]) -> str:
    """Deterministic JSON text (sorted keys, one trailing newline)."""
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _fact_draft(raw: Any, number: int, source: str) -> tuple[Draft | None, str]:
    if not isinstance(raw, dict):
        return None, "not a JSON object"
    holders = raw.get("holders")
    if not isinstance(holders, list) or not holders or not all(isinstance(h, str)
                                                             for h in holders):
        return None, "holders: missing"
    try:
        created = dt.datetime.fromisoformat(str(raw["created"]))
        title, key, topic = str(raw["title"]), str(raw["key"]), str(raw["topic"])
    except (KeyError, ValueError) as exc:
        return None, f"missing or invalid field: {exc}"
    lists = {name: raw.get(name) or [] for name in ("tags", "refs")}
    for name, value in lists.items():
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return None, f"{name}: must be a list of strings"
    origin = raw.get("source")
    where = f"{source}: {raw.get('entry', number)}"
    return Draft(
        agent=holders[0], topic=topic, title=title, body=str(raw.get("body") or ""),
        type=str(raw.get("type") or "semantic"), created=created,
        source=f"{where}; {origin}" if origin else where, key=key,
        confidence=raw.get("confidence"), importance=raw.get("importance"),
        tags=tuple(lists["tags"]), refs=tuple(lists["refs"]),
        applies_to=tuple(holders), valid_until=raw.get("valid_until"), where=f"fact {key}",
    ), ""  # fmt: skip


def drafts(data: bytes, source: str) -> tuple[list[Draft], list[str]]:
    """(drafts, problems) from a snapshot's bytes: one draft per live fact."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return [], [f"not a snapshot: {exc}"]
    except RecursionError:
        return [], ["not a snapshot: JSON nested too deeply to read"]
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return [], [f"not a snapshot: no \"format\": \"{FORMAT}\""]
    if doc.get("schema") != SCHEMA:
        return [], [f"snapshot schema {doc.get('schema')!r} is not supported (this reads 1)"]
    out: list[Draft] = []
    problems: list[str] = []
    for number, raw in enumerate(doc.get("facts") or [], 1):
        draft, why = _fact_draft(raw, number, source)
        if draft is None:
            problems.append(f"fact {number}: {why}")
        else:
            out.append(draft)
    return out, problems
