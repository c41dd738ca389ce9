"""`jmem stats` on a repository in the shape of a real team's after six weeks."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import jmem

from fixtures import six_weeks


def test_six_week_team_numbers(tmp_path: Path) -> None:
    repo = six_weeks.build(tmp_path / "team")
    proc = jmem(repo, "stats", "--json")
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    assert (s["entries"], s["topic_files"], s["maintained_lines"], s["personal_files"],
            s["cap"]) == (256, 109, 1019, 13, 200)
    # the same numbers counted independently from the files
    root = repo / ".claude" / "agent-memory"
    assert len(list(root.glob("*/journal/*.md"))) == 256
    assert len(list(root.glob("*/topics/*.md"))) == 109
    assert sum(len(p.read_text().splitlines()) for p in root.glob("*/MEMORY.md")) == 1019
    assert sum(s["entries_per_agent"].values()) == 256
    assert sum(s["entries_per_month"].values()) == 256
    assert set(s["entries_per_month"]) == {"2026-10", "2026-11"}
    assert all(row["lines"] <= 200 for row in s["agents"].values())
    assert s["pending"] == 0 and s["evicted_total"] == 0
    text = jmem(repo, "stats").stdout
    for line in ("journal entries: 256", "distilled topic files: 109",
                 "lines of maintained memory (MEMORY.md files): 1019",
                 "personal files (agents with a MEMORY.md): 13",
                 "cap: 200 lines per MEMORY.md"):
        assert line in text
    since = json.loads(jmem(repo, "stats", "--since", "2026-11-01", "--json").stdout)
    assert since["entries"] == s["entries_per_month"]["2026-11"]


def test_dropped_facts_are_counted_by_rule(repo: Path) -> None:
    for title, extra in (("Old way", []), ("New way", ["--supersedes", "old-way"]),
                         ("Gone soon", []), ("Drop it", ["--retracts", "gone-soon"])):
        assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", title,
                    *extra, stdin="x").returncode == 0
    assert jmem(repo, "distill").returncode == 0
    s = json.loads(jmem(repo, "stats", "--json").stdout)
    assert s["dropped"]["superseded"] == 1 and s["dropped"]["retracted"] == 1


def test_open_conflicts_are_counted_and_named(repo: Path) -> None:
    for agent, title, body, key in (
            ("api", "Acknowledge a queue message before processing it",
             "Otherwise a slow handler makes the broker redeliver it.", "queue-ack"),
            ("web", "Process a queue message first and acknowledge it after, never before",
             "Acking early loses the message when the worker crashes.", "ack-after")):
        assert jmem(repo, "write", "--agent", agent, "--topic", "queue", "--title", title,
                    "--key", key, stdin=body).returncode == 0
        assert jmem(repo, "distill").returncode == 0
    s = json.loads(jmem(repo, "stats", "--json").stdout)
    assert s["open_conflicts"] == [{"key": "queue-ack", "newer": "ack-after", "agents": ["api"]}]
    assert "open conflicts (a newer lesson probably corrects a fact): 1" in jmem(
        repo, "stats").stdout
