"""`jmem write` names the live facts a lesson probably corrects, and refuses a default key
that another agent's different fact already holds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import git, jmem, make_repo


def team(tmp_path: Path) -> Path:
    main = make_repo(tmp_path / "main")
    proc = jmem(main, "init", "--agent", "api", "--agent", "web", "--no-git-hooks", "--no-claude")
    assert proc.returncode == 0, proc.stderr
    return main


def write(main: Path, agent: str, topic: str, title: str, body: str,
          *extra: str) -> subprocess.CompletedProcess[str]:
    return jmem(main, "write", "--agent", agent, "--topic", topic, "--title", title,
                "--body", body, "--json", *extra)


def test_a_correction_without_the_key_names_the_fact_and_the_option(tmp_path: Path) -> None:
    main = team(tmp_path)
    assert write(main, "api", "queue", "Acknowledge a queue message before processing it",
                 "Otherwise a slow handler makes the broker redeliver it.",
                 "--key", "queue-ack").returncode == 0
    assert write(main, "api", "docs", "Headings use sentence case",
                 "Only the first word is capitalised.", "--key", "headings").returncode == 0
    proc = write(main, "web", "queue", "Process a queue message first and acknowledge it after",
                 "Acking early loses the message when the worker crashes.")
    assert proc.returncode == 0, proc.stderr
    related = json.loads(proc.stdout)["related"]
    assert [r["key"] for r in related] == ["queue-ack"]
    assert related[0]["agents"] == ["api"] and related[0]["title"].startswith("Acknowledge")
    assert 0 < related[0]["score"] <= 1
    assert "[queue-ack]" in proc.stderr and "--supersedes queue-ack" in proc.stderr


def test_an_unrelated_lesson_gets_an_empty_related_list(tmp_path: Path) -> None:
    main = team(tmp_path)
    write(main, "api", "queue", "Acknowledge a queue message before processing it",
          "Otherwise a slow handler makes the broker redeliver it.", "--key", "queue-ack")
    proc = write(main, "web", "billing", "Currency codes follow ISO 4217",
                 "Three upper-case letters.")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["related"] == []
    assert "may correct" not in proc.stderr


def test_a_lesson_that_supersedes_is_not_told_again(tmp_path: Path) -> None:
    main = team(tmp_path)
    write(main, "api", "queue", "Acknowledge a queue message before processing it",
          "Otherwise a slow handler makes the broker redeliver it.", "--key", "queue-ack")
    proc = write(main, "web", "queue", "Process a queue message first and acknowledge it after",
                 "Acking early loses the message.", "--supersedes", "queue-ack")
    assert json.loads(proc.stdout)["related"] == []


def test_a_default_key_held_by_another_agents_other_fact_is_refused(tmp_path: Path) -> None:
    main = team(tmp_path)
    assert write(main, "api", "testing", "Всегда используйте pytest", "Always.",
                 "--key", "pytest").returncode == 0
    before = sorted(p.name for p in (main / ".claude").rglob("*.md"))
    proc = write(main, "web", "testing", "pytest", "Never.")
    assert proc.returncode != 0
    assert "'pytest' already names another fact" in proc.stderr and "--key pytest" in proc.stderr
    assert sorted(p.name for p in (main / ".claude").rglob("*.md")) == before
    assert write(main, "web", "testing", "pytest", "Never.", "--key", "pytest").returncode == 0
    assert git(main, "status", "--porcelain").returncode == 0


def test_holders_of_a_probably_corrected_fact_see_it_until_it_is_settled(tmp_path: Path) -> None:
    main = team(tmp_path)
    write(main, "api", "queue", "Acknowledge a queue message before processing it",
          "Otherwise a slow handler makes the broker redeliver it.", "--key", "queue-ack")
    assert jmem(main, "distill").returncode == 0
    write(main, "web", "queue", "Process a queue message first and acknowledge it after",
          "Acking early loses the message when the worker crashes.", "--key", "ack-after")
    report = jmem(main, "distill")
    assert "open conflicts (a newer lesson of another agent probably corrects" in report.stdout
    assert "  queue-ack <- ack-after" in report.stdout
    data = json.loads(jmem(main, "distill", "--dry-run", "--json").stdout)
    assert data["conflicts"] == [{"old": "queue-ack", "newer": "ack-after"}]
    wake = jmem(main, "wake", "--agent", "api").stdout
    assert "- possibly outdated: [queue-ack] — see the newer lesson by web (ack-after)" in wake
    assert "possibly outdated" not in jmem(main, "wake", "--agent", "web").stdout
    assert json.loads(jmem(main, "wake", "--agent", "api", "--json").stdout)["keys"] == [
        "queue-ack"]
    write(main, "web", "queue", "Process a queue message first and acknowledge it after",
          "Acking early loses the message.", "--key", "ack-after", "--supersedes", "queue-ack")
    assert "open conflicts" not in jmem(main, "distill").stdout
    assert "possibly outdated" not in jmem(main, "wake", "--agent", "api").stdout


def test_a_supersede_or_retract_of_a_key_no_lesson_holds_is_filed_with_a_warning(
        tmp_path: Path) -> None:
    """A mistyped key corrects nothing: the lesson is kept (nothing an agent writes is
    thrown away), and `write` says so and names the closest key; a real key is quiet."""
    main = team(tmp_path)
    assert write(main, "api", "queue", "Acknowledge a queue message before processing it",
                 "Or the broker redelivers it.", "--key", "queue-ack").returncode == 0
    typo = write(main, "web", "queue", "Acknowledge only after processing",
                 "Early acks lose messages.", "--supersedes", "queue-akc",
                 "--retracts", "nothing-like-it")
    assert typo.returncode == 0, typo.stderr
    assert json.loads(typo.stdout)["unknown_keys"] == ["nothing-like-it", "queue-akc"]
    assert Path(json.loads(typo.stdout)["path"]).is_file()
    assert "no lesson has key 'queue-akc'" in typo.stderr
    assert "did you mean 'queue-ack'? (`jmem log queue-ack`)" in typo.stderr
    assert "no lesson has key 'nothing-like-it'" in typo.stderr
    right = write(main, "web", "queue", "Acknowledge a message after processing it",
                  "Early acks lose messages.", "--supersedes", "queue-ack")
    assert right.returncode == 0 and json.loads(right.stdout)["unknown_keys"] == []
    assert "no lesson has key" not in right.stderr
