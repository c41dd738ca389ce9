"""`jmem import` on real repositories: one commit each, provenance, idempotent."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from distill_helpers import MEM, head, lesson, memory_md
from helpers import REPO_ROOT, git, jmem, journal_files, make_repo

from fixtures.handwritten import write_tree
from journal_mem.journal.entry import parse

IMPORTS = REPO_ROOT / "fixtures" / "imports"


def _entries(main: Path, agent: str) -> list:
    return [parse(p.read_bytes(), filename=p.name) for p in journal_files(main, agent)]


def _commits(main: Path) -> int:
    return int(git(main, "rev-list", "--count", "HEAD").stdout)


def test_import_memory_one_commit_provenance_and_idempotent(repo: Path) -> None:
    tree = write_tree(repo, agents=3, topics=5, lines=70)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hand-written memory")
    written = head(repo)
    before = _commits(repo)
    proc = jmem(repo, "import", "memory", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert len(report["written"]) == len(tree.markers) and _commits(repo) == before + 1
    assert git(repo, "status", "--porcelain", MEM).stdout.strip() == ""  # all committed
    texts = {e.title + "\n" + e.body: e for agent in ("architect", "platform", "api")
             for e in _entries(repo, agent)}
    for marker in tree.markers:
        assert any(marker in text for text in texts), marker
    one = next(e for t, e in texts.items() if "(fact-1)" in t)
    assert one.source and one.source.startswith(
        f"import memory: {MEM}/architect/MEMORY.md@{written[:12]}, line ")
    assert one.topic != "general"  # its MEMORY.md section
    again = jmem(repo, "import", "memory")
    assert again.returncode == 0 and "0 new" in again.stdout and _commits(repo) == before + 1


def test_import_memory_of_named_agents_only(repo: Path) -> None:
    write_tree(repo, agents=2, topics=2, lines=30)
    proc = jmem(repo, "import", "memory", "platform")
    assert proc.returncode == 0, proc.stderr
    assert journal_files(repo, "platform") and not journal_files(repo, "architect")
    bad = jmem(repo, "import", "memory", "nobody")
    assert bad.returncode == 1 and "nobody" in bad.stderr


def test_import_claude_md_rules_are_principles_for_all(repo: Path) -> None:
    shutil.copy(IMPORTS / "CLAUDE.md", repo / "CLAUDE.md")
    git(repo, "add", "CLAUDE.md")
    git(repo, "commit", "-q", "-m", "guide")
    guide = head(repo)
    proc = jmem(repo, "import", "claude-md", "CLAUDE.md", "--agent", "api")
    assert proc.returncode == 0, proc.stderr
    entries = _entries(repo, "api")
    rules = [e for e in entries if e.type == "principle"]
    assert len(rules) == 4 and all(e.applies_to == ("all",) for e in entries)
    assert all(e.source and e.source.startswith(f"import claude-md: CLAUDE.md@{guide[:12]}, ")
               for e in entries)
    assert jmem(repo, "distill").returncode == 0
    assert "Never commit secrets" in memory_md(repo, "web")  # `all` reaches every agent
    assert "0 new" in jmem(repo, "import", "claude-md", "CLAUDE.md", "--agent", "api").stdout


def test_import_retro_reflective_and_dated_from_the_file(repo: Path) -> None:
    retro = repo / "docs" / "2026-08-13-payments-outage.md"
    retro.parent.mkdir()
    shutil.copy(IMPORTS / retro.name, retro)
    proc = jmem(repo, "import", "retro", str(retro), "--agent", "api", "--applies-to", "web")
    assert proc.returncode == 0, proc.stderr
    entries = _entries(repo, "api")
    assert len(entries) == 4 and all(e.type == "reflective" for e in entries)
    assert all(e.created.date().isoformat() == "2026-08-13" for e in entries)
    assert all(e.applies_to == ("web",) for e in entries)
    assert all("(uncommitted)" in (e.source or "") for e in entries)
    empty = repo / "notes.md"
    empty.write_text("# Notes\n\n## Timeline\n\n- nothing learned\n")
    proc = jmem(repo, "import", "retro", str(empty))
    assert proc.returncode == 1 and "no lesson or finding section" in proc.stdout


def test_import_mem0_keeps_fields_and_reports_invalid_records(repo: Path) -> None:
    proc = jmem(repo, "import", "mem0", str(IMPORTS / "mem0-export.json"), "--agent", "api")
    assert proc.returncode == 1  # three invalid records, listed
    assert proc.stdout.count("invalid: record") >= 3 and "3 new" in proc.stdout
    billing = {e.title: e for e in _entries(repo, "billing")}
    retry = billing["The billing service retries card charges at most three times"]
    assert (retry.type, retry.confidence, retry.topic) == ("procedural", 0.85, "billing-runs")
    assert "id f38b689d-6b24-45b7-bced-17fbb4d8bac7" in (retry.source or "")
    (expiring,) = _entries(repo, "api")
    assert str(expiring.valid_until).startswith("2027-01-31")
    again = jmem(repo, "import", "mem0", str(IMPORTS / "mem0-export.json"), "--agent", "api")
    assert "0 new" in again.stdout


def test_export_then_import_snapshot_gives_the_same_memory_files(repo: Path,
                                                                 tmp_path: Path) -> None:
    lesson(repo, "api", "pin-deps", title="Pin every dependency", type="principle",
           confidence=1.0)
    lesson(repo, "api", "db-lag", 1, title="Replicas lag up to 2 s", applies_to=("api", "web"),
           body="Read your writes from the primary.", importance="high")
    lesson(repo, "web", "old", 2, title="Use webpack")
    lesson(repo, "web", "vite", 3, title="Use vite", supersedes=("old",), topic="build")
    lesson(repo, "web", "promo", 4, title="Promo banner until the end of the year",
           valid_until=dt.date(2099, 12, 31))
    assert jmem(repo, "distill").returncode == 0
    snap = tmp_path / "snap.json"
    proc = jmem(repo, "export", "--json", str(snap))
    assert proc.returncode == 0 and "exported 4 live facts and 5 journal entries" in proc.stdout
    doc = json.loads(snap.read_text())
    lag = next(f for f in doc["facts"] if f["key"] == "db-lag")
    assert lag["holders"] == ["api", "web"] and lag["importance"] == "high"
    assert doc["distill_state"]["folded"] and len(doc["entries"]) == 5
    other = make_repo(tmp_path / "other")
    assert jmem(other, "init", "--no-git-hooks", "--no-claude").returncode == 0
    proc = jmem(other, "import", "snapshot", str(snap))
    assert proc.returncode == 0 and "4 new" in proc.stdout, proc.stderr
    assert jmem(other, "distill").returncode == 0
    for agent in ("api", "web"):
        assert (other / MEM / agent / "MEMORY.md").read_bytes() == (
            repo / MEM / agent / "MEMORY.md").read_bytes()
    assert "0 new" in jmem(other, "import", "snapshot", str(snap)).stdout


def test_export_prints_to_stdout(repo: Path) -> None:
    lesson(repo, "api", "k1")
    proc = jmem(repo, "export")
    doc = json.loads(proc.stdout)
    assert doc["format"] == "journal-mem-snapshot" and doc["facts"][0]["key"] == "k1"
    assert doc["facts"][0]["entry"] == "api/journal/2026-05-01-k1.md"


def test_a_secret_is_reported_not_imported(repo: Path) -> None:
    folder = repo / MEM / "api"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text("# api\n\n- The deploy key is AKIAIOSFODNN7EXAMPLF\n"
                                      "- Where the key is\n  - AKIAIOSFODNN7EXAMPLF\n"
                                      "- Deploys run at noon\n")
    proc = jmem(repo, "import", "memory")
    assert proc.returncode == 1
    assert "MEMORY.md (uncommitted), line 3: title: aws access key id" in proc.stdout
    assert "MEMORY.md (uncommitted), line 4: secret: " in proc.stdout  # found in the body
    assert [e.title for e in _entries(repo, "api")] == ["Deploys run at noon"]
