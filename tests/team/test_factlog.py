"""`jmem log KEY`, `jmem log --path F --line N` and `jmem blame F` on the six-agent story:
one wrong fact in six memory files, corrected by two entries, one distill for all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import git, jmem
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures import six_agents
from journal_mem.team import history

MEM = ".claude/agent-memory"


@pytest.fixture
def story(tmp_path: Path) -> Path:
    """Day 1 distilled and committed; the day-24 corrections committed and distilled."""
    repo = six_agents.build(tmp_path / "six")
    assert jmem(repo, "distill", "--date", "2026-03-02").returncode == 0
    six_agents.correct(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "day 24: two corrections")
    assert jmem(repo, "distill", "--date", str(six_agents.DISTILL_DATE)).returncode == 0
    return repo


def test_log_shows_the_correction_reaching_every_holder_and_when(story: Path) -> None:
    proc = jmem(story, "log", six_agents.WRONG_KEY, "--json")
    assert proc.returncode == 0, proc.stderr
    log = json.loads(proc.stdout)
    roles = [(e["agent"], e["role"]) for e in log["entries"]]
    assert roles[:6] == [(a, "wrote") for a in sorted(six_agents.AGENTS)]
    assert ("api", "corrected") in roles
    assert ("search", f"superseded by {six_agents.RIGHT_KEY}") in roles
    assert {e["source"] for e in log["entries"]} == {"PR #101", "PR #140", "PR #141"}
    assert all(e["commit"] for e in log["entries"])
    assert [d["date"][:10] for d in log["distills"]] == ["2026-03-02", "2026-03-25"]
    assert len(log["distills"][1]["changes"]) == 6
    for agent in six_agents.AGENTS:
        spans = [s for s in log["holders"] if s["agent"] == agent]
        assert [(s["from"], s["to"]) for s in spans] == [("2026-03-02", "2026-03-25"),
                                                         ("2026-03-25", None)]
        assert six_agents.WRONG in spans[0]["text"] and six_agents.RIGHT_KEY in spans[1]["text"]
    text = jmem(story, "log", six_agents.WRONG_KEY).stdout
    assert "web          2026-03-02 → 2026-03-25: Filter by value finds" in text


def test_log_of_a_line_of_a_distilled_file(story: Path) -> None:
    memory = story / MEM / "web" / "MEMORY.md"
    number = next(i for i, line in enumerate(memory.read_text().splitlines(), 1)
                  if line.endswith(f"[{six_agents.RIGHT_KEY}]"))
    proc = jmem(story, "log", "--path", str(memory), "--line", str(number), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["key"] == six_agents.RIGHT_KEY
    header = jmem(story, "log", "--path", str(memory), "--line", "1")
    assert header.returncode == 1 and "not a fact line" in header.stderr


def test_blame_names_the_entry_behind_each_fact_line(story: Path) -> None:
    proc = jmem(story, "blame", f"{MEM}/api/MEMORY.md", "--json")
    rows = json.loads(proc.stdout)
    assert [(r["key"], r["agent"], r["source"], r["date"]) for r in rows] == [
        (six_agents.RIGHT_KEY, "search", "PR #141", "2026-03-25")]
    assert rows[0]["commit"]


def test_log_of_an_unknown_key_says_so(story: Path) -> None:
    proc = jmem(story, "log", "no-such-key")
    assert proc.returncode == 1 and "no journal entry" in proc.stderr
    assert jmem(story, "log").returncode == 2


def test_log_reads_only_the_entries_of_its_fact_and_tells_what_a_full_read_tells(
        story: Path) -> None:
    from journal_mem.journal.entry import build
    from journal_mem.journal.files import record
    from journal_mem.journal.reader import read_journal
    from journal_mem.repo import open_context
    from journal_mem.team import log as factlog

    ctx = open_context(str(story))
    for i in range(5):
        record(ctx.layout, build(agent="api", topic="other", key=f"other-{i}",
                                 title=f"Unrelated lesson {i}", body="x"))
    everything = read_journal(ctx.layout, ctx.policy)
    for key in {six_agents.WRONG_KEY, six_agents.RIGHT_KEY,
                *(entry.key for _, entry in everything.entries)}:
        few = factlog.fact_journal(ctx, key)
        assert few.parsed == len(few.entries) < len(everything.entries), key
        assert factlog.entry_events(ctx, key, few) == factlog.entry_events(ctx, key, everything)
        assert factlog.successors(few, key) == factlog.successors(everything, key)
    few = factlog.fact_journal(ctx, six_agents.WRONG_KEY)
    assert len(few.entries) >= 8  # six writers, one correction, one supersedes


KEYS = ["k1", "ak1", "k1-b", "run-5767", "x"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["- ", "- [", "  - ", "## ", ""]),
                          st.one_of(st.sampled_from(["a [k1] b", "[x]", "t [ak1]", "(k1-b)"]),
                                    st.text(alphabet="ab []\\()k1-", max_size=12)),
                          st.sampled_from([*KEYS, "", "k1] ["]),
                          st.sampled_from(["\n", "\r\n", " \n", "]\n"])), max_size=12),
       st.lists(st.sampled_from(KEYS), min_size=1, max_size=3))
def test_the_lines_of_some_keys_are_those_of_every_key_kept_for_them(
        lines: list[tuple[str, str, str, str]], keys: list[str]) -> None:
    """`jmem log KEY` parses only the lines of its fact's keys: the same as every line,
    parsed, then kept for them."""
    text = "".join(f"{lead}{words} [{key}]{end}" for lead, words, key, end in lines)
    every = history.fact_lines(text)
    assert history.fact_lines(text, keys) == {k: v for k, v in every.items() if k in keys}
