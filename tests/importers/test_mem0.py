"""A mem0 export to lessons: same type, confidence, tags and expiry; invalid records named."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from helpers import REPO_ROOT

from journal_mem.importers.mem0 import mem0_drafts
from journal_mem.journal.drafts import to_entry
from journal_mem.journal.validate import Policy

EXPORT = REPO_ROOT / "fixtures" / "imports" / "mem0-export.json"
NOW = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)


def test_the_documented_shape_becomes_lessons() -> None:
    drafts, invalid = mem0_drafts(EXPORT.read_bytes(), "mem0: export.json", "main")
    assert len(invalid) == 3 + 1  # record 6 has two problems
    assert len(drafts) == 3
    first, rule, expiring = (to_entry(d, NOW, Policy()) for d in drafts)
    assert (first.agent, first.type, first.confidence, first.topic) == (
        "billing", "procedural", 0.85, "billing-runs")
    assert first.tags == ("billing", "payments", "retries")  # tags and categories
    assert first.created == dt.datetime(2026, 7, 26, 6, 57, 0, 108347, tzinfo=dt.UTC)
    assert first.source == ("mem0: export.json: id f38b689d-6b24-45b7-bced-17fbb4d8bac7 "
                            "(user alex agent billing run run-42), "
                            "updated 2026-07-26T08:00:00-07:00")
    assert (rule.type, rule.confidence, rule.importance) == ("principle", 1.0, "critical")
    assert expiring.agent == "main"  # no agent_id: the default agent
    assert expiring.valid_until == dt.datetime(2027, 1, 31, tzinfo=dt.UTC)


def test_invalid_records_are_reported_not_dropped() -> None:
    _, invalid = mem0_drafts(EXPORT.read_bytes(), "mem0", "main")
    text = "\n".join(invalid)
    assert "record 4 (id a1b2c3d4-0000-4000-8000-000000000003): memory: missing or empty" in text
    assert "record 5 (id a1b2c3d4-0000-4000-8000-000000000004): metadata.confidence: 1.5" in text
    assert "record 6" in text and "'rumour' is not one of" in text and "not a date" in text


def test_not_an_export() -> None:
    drafts, invalid = mem0_drafts(b'{"nope": 1}', "mem0", "main")
    assert drafts == [] and invalid[0].startswith("not a mem0 export")


def test_an_old_episodic_memory_is_said_to_expire_at_the_next_distill(tmp_path: Path) -> None:
    """Imported memories keep their dates; the TTL then hides an old episodic one at the
    next distill, and the import says so instead of reporting it new and nothing more."""
    import json

    from helpers import jmem, make_repo

    repo = make_repo(tmp_path / "repo")
    assert jmem(repo, "init", "--agent", "ops", "--no-claude", "--no-git-hooks").returncode == 0
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=200)).isoformat()
    recent = (dt.datetime.now(dt.UTC) - dt.timedelta(days=3)).isoformat()
    export = tmp_path / "mem0.json"
    export.write_text(json.dumps([
        {"id": "m1", "memory": "The March outage came from a full disk", "created_at": old,
         "metadata": {"type": "episodic"}},
        {"id": "m2", "memory": "Last week's deploy rolled back twice", "created_at": recent,
         "metadata": {"type": "episodic"}}]))
    proc = jmem(repo, "import", "mem0", str(export), "--agent", "ops")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("1 imported episodic memories are older than distill.episodic_ttl_days (90)"
            in proc.stdout) and "The March outage came from a full disk" in proc.stdout
    assert jmem(repo, "distill").returncode == 0
    facts = json.loads(jmem(repo, "export").stdout)["facts"]
    assert [f["title"] for f in facts] == ["Last week's deploy rolled back twice"]
