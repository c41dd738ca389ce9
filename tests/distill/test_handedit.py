"""A hand edit of a distilled file as lessons: added, changed, deleted; mass deletion refused."""

from __future__ import annotations

import datetime as dt

from journal_mem.distill.handedit import edit_lessons
from journal_mem.intake.pipeline import too_many_gone
from journal_mem.journal.drafts import to_entry
from journal_mem.journal.entry import Entry
from journal_mem.journal.fold import Fact, fold
from journal_mem.journal.render import render
from journal_mem.journal.validate import Policy

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.UTC)
DAY = dt.datetime(2026, 8, 1, 9, 0, tzinfo=dt.UTC)
# Letters, not digits: titles that differ only by a number are a probable correction.
NATO = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima"]


class _Budget:
    memory_lines = 200
    memory_bytes = 25000
    line_chars = 150
    topic_lines = 200


class _Distill:
    episodic_ttl_days = 90
    stale_refs = "drop"


class _Config:
    distill = _Distill()


def _distilled(n: int = 6) -> tuple[dict[str, Fact], dict[str, str]]:
    entries = [(f"api/journal/2026-08-01-k{i}.md",
                Entry(agent="api", topic="db" if i % 2 else "tests",
                      title=f"Fact number {NATO[i]}", body=f"Detail {NATO[i]}.",
                      created=DAY + dt.timedelta(minutes=i), key=f"k{i}",
                      applies_to=("api",)))
               for i in range(n)]
    folded = fold(entries, agents=["api"], date=NOW.date(), ref_exists=lambda _: True,
                  config=_Config())
    files = render(folded, ["api"], _Budget()).files
    return folded.facts, {p: d.decode() for p, d in files.items()}  # type: ignore[misc]


def test_memory_md_added_changed_and_deleted_lines() -> None:
    facts, files = _distilled()
    base = files["api/MEMORY.md"]
    # each fact line links its topic file: `- [title](topics/db.md#anchor) [key]`
    assert "- [Fact number bravo](topics/db.md#fact-number-bravo) [k1]\n" in base
    edited = (base.replace("- [Fact number bravo](topics/db.md#fact-number-bravo) [k1]\n", "")
              .replace("[Fact number charlie](", "[Fact number two, corrected](")
              .replace("## db · topics/db.md\n", "## db · topics/db.md\n- Vacuum runs nightly\n"))
    edit = edit_lessons("api", "api/MEMORY.md", base, edited, facts, NOW)
    assert (edit.added, edit.changed, edit.deleted) == (1, 1, 1)
    by_kind = {("retract" if d.retracts else "change" if d.replaces else "add"): d
               for d in edit.drafts}
    assert by_kind["retract"].retracts == ("k1",)
    assert by_kind["change"].key == "k2" and by_kind["change"].title == "Fact number two, corrected"
    assert by_kind["change"].body == "Detail charlie." and by_kind["change"].topic == "tests"
    assert by_kind["add"].title == "Vacuum runs nightly" and by_kind["add"].topic == "db"
    assert all(d.source == "hand edit: api/MEMORY.md" for d in edit.drafts)
    entries = [to_entry(d, NOW, Policy()) for d in edit.drafts]  # every draft is a valid lesson
    retraction = next(e for e in entries if e.retracts)
    assert retraction.valid_until is not None and retraction.valid_until < NOW.date()


def test_topic_file_body_edit_supersedes_and_a_new_section_is_a_lesson() -> None:
    facts, files = _distilled()
    base = files["api/topics/db.md"]
    edited = base.replace("Detail delta.", "Detail delta, now with the fix.") + (
        "\n## Replicas lag up to two seconds\n\nRead your writes from the primary.\n")
    edit = edit_lessons("api", "api/topics/db.md", base, edited, facts, NOW)
    assert (edit.added, edit.changed, edit.deleted) == (1, 1, 0)
    change = next(d for d in edit.drafts if d.replaces)
    assert (change.key, change.body) == ("k3", "Detail delta, now with the fix.")
    new = next(d for d in edit.drafts if not d.replaces)
    assert (new.title, new.topic) == ("Replicas lag up to two seconds", "db")
    assert new.body == "Read your writes from the primary."


def test_an_unchanged_file_is_no_lesson() -> None:
    facts, files = _distilled()
    for rel, text in files.items():
        edit = edit_lessons("api", rel, text, text, facts, NOW)
        assert edit.drafts == [] and edit.facts > 0


def test_deleting_more_than_a_third_is_refused_one_line_never() -> None:
    facts, files = _distilled(9)
    base = files["api/MEMORY.md"]
    lines = base.split("\n")
    three = [x for x in lines if x.startswith("- [Fact number")][:4]
    edited = "\n".join(x for x in lines if x not in three)
    edit = edit_lessons("api", "api/MEMORY.md", base, edited, facts, NOW)
    assert (len(edit.gone), len(edit.shown)) == (4, 9)  # the intake refuses it
    assert too_many_gone(len(edit.gone), len(edit.shown))
    small, small_files = _distilled(2)
    text = small_files["api/MEMORY.md"]
    gone = "- [Fact number alpha](topics/tests.md#fact-number-alpha) [k0]\n"
    one = edit_lessons("api", "api/MEMORY.md", text, text.replace(gone, ""), small, NOW)
    assert not too_many_gone(len(one.gone), len(one.shown)) and one.deleted == 1


def test_a_fact_line_copied_without_its_key_adds_nothing() -> None:
    facts, files = _distilled()
    base = files["api/MEMORY.md"]
    edited = base.replace("## db · topics/db.md\n", "## db · topics/db.md\n- Fact number delta\n")
    edit = edit_lessons("api", "api/MEMORY.md", base, edited, facts, NOW)
    assert edit.drafts == [] and edit.added == 0
