"""Drafts into the journal: skipped when already there, re-keyed instead of replacing."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from journal_mem.intake.pipeline import Known, Proposal, file, settle
from journal_mem.journal.drafts import Draft
from journal_mem.journal.entry import Entry, default_key
from journal_mem.journal.validate import Policy
from journal_mem.repo import open_context

NOW = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)
POLICY = Policy()
OLD = Entry(agent="api", topic="db", title="Use the cache", body="one",
            created=NOW - dt.timedelta(days=9), key=default_key("Use the cache"),
            applies_to=("api",))


def test_a_draft_already_in_the_journal_is_skipped_for_its_writer_only() -> None:
    known = Known([("api/journal/x.md", OLD)])
    same = Draft(agent="api", topic="db", title="Use the cache", body="one")
    assert settle(same, known, NOW, POLICY) is None
    other_agent = Draft(agent="web", topic="db", title="Use the cache", body="one")
    entry = settle(other_agent, known, NOW, POLICY)
    assert entry is not None and entry.key == OLD.key  # same fact, one more holder


def test_a_taken_key_gets_a_hash_unless_the_draft_replaces_it() -> None:
    known = Known([("api/journal/x.md", OLD)])
    different = Draft(agent="api", topic="db", title="Use the cache", body="two")
    entry = settle(different, known, NOW, POLICY)
    assert entry is not None and entry.key.startswith(f"{OLD.key}-") and entry.key != OLD.key
    known.add(entry)
    assert settle(different, known, NOW, POLICY) is None  # the second run finds it
    fix = Draft(agent="api", topic="db", title="Use the cache", body="two", key=OLD.key,
                replaces=True)
    entry = settle(fix, known, NOW, POLICY)
    assert entry is not None and entry.key == OLD.key


def test_file_creates_each_entry_once(tmp_path: Path) -> None:
    from helpers import jmem, make_repo

    main = make_repo(tmp_path / "main")
    assert jmem(main, "init", "--agent", "api", "--no-git-hooks", "--no-claude").returncode == 0
    ctx = open_context(str(main))
    drafts = [Draft(agent="api", topic="db", title=f"Fact {i}") for i in range(3)]
    first = file(ctx, Proposal(drafts, "import", strict=False), now=NOW)
    again = file(ctx, Proposal(drafts, "import", strict=False), now=NOW)
    assert len(first.paths) == 3 and all(Path(p).is_file() for p in first.paths)
    assert again.paths == [] and again.skipped == 3
    bad = file(ctx, Proposal([Draft(agent="api", topic="Not A Name", title="x")], "import",
                             strict=False))
    assert bad.paths == [] and "topic" in bad.invalid[0]


def test_a_lesson_knowing_more_than_the_limit_is_refused_clearly(tmp_path: Path) -> None:
    """`knew` is bounded: a write correcting more keys than readers accept is refused with
    the fix, never written as an entry every reader would reject."""
    from helpers import jmem, journal_files, make_repo

    from journal_mem.journal.entry import MAX_KNEW

    main = make_repo(tmp_path / "main")
    assert jmem(main, "init", "--agent", "api", "--no-git-hooks", "--no-claude").returncode == 0
    folder = main / ".claude" / "agent-memory" / "api" / "journal"
    for n in range(MAX_KNEW + 1):
        (folder / f"2026-09-01-fact-{n}.md").write_text(
            f"---\nagent: api\ncreated: 2026-09-01T00:00:00+00:00\ntopic: db\nkey: k{n}\n---\n\n"
            f"# Fact {n}\n")
    before = len(journal_files(main, "api"))
    args = [a for n in range(MAX_KNEW + 1) for a in ("--supersedes", f"k{n}")]
    proc = jmem(main, "write", "--agent", "api", "--topic", "db", "--title", "All at once",
                *args)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{MAX_KNEW + 1} facts at once; at most {MAX_KNEW}" in proc.stderr
    assert "split it" in proc.stderr
    assert len(journal_files(main, "api")) == before
    assert jmem(main, "check").returncode == 0
