"""The export snapshot read back: one draft per live fact; a broken one is named."""

from __future__ import annotations

import json

from journal_mem.importers.snapshot import FORMAT, drafts


def test_a_fact_becomes_a_draft_with_its_fields() -> None:
    doc = {"format": FORMAT, "schema": 1, "facts": [{
        "key": "k1", "title": "T", "body": "B", "type": "procedural", "confidence": 0.65,
        "importance": "high", "holders": ["api", "web"], "topic": "db",
        "created": "2026-05-01T09:00:00+00:00", "valid_until": "2027-01-01", "refs": ["a.py"],
        "tags": ["x"], "source": "PR 7", "entry": "api/journal/2026-05-01-k1.md"}]}
    (draft,), problems = drafts(json.dumps(doc).encode(), "import snapshot: s.json")
    assert problems == []
    assert (draft.agent, draft.applies_to, draft.key, draft.type) == (
        "api", ("api", "web"), "k1", "procedural")
    assert draft.source == "import snapshot: s.json: api/journal/2026-05-01-k1.md; PR 7"


def test_broken_snapshots_and_facts_are_named() -> None:
    assert drafts(b"[]", "s")[1][0].startswith("not a snapshot")
    assert "schema 2" in drafts(json.dumps({"format": FORMAT, "schema": 2}).encode(), "s")[1][0]
    doc = {"format": FORMAT, "schema": 1, "facts": [{"key": "k"}, "x"]}
    found, problems = drafts(json.dumps(doc).encode(), "s")
    assert found == [] and problems == ["fact 1: holders: missing",
                                        "fact 2: not a JSON object"]
