"""`jmem check`: the CI backstop."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from distill_helpers import DAY, MEM, lesson
from helpers import git, jmem


def distilled(repo: Path) -> Path:
    lesson(repo, "api", "k1", title="Use the cache")
    lesson(repo, "web", "k2", 5, title="Pin node", applies_to=("all",))
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    return repo


def test_a_distilled_repository_passes(repo: Path) -> None:
    proc = jmem(distilled(repo), "check", "--base", "HEAD~1")
    assert proc.returncode == 0, proc.stdout
    assert "ok" in proc.stdout


def test_pending_lessons_do_not_fail_the_check(repo: Path) -> None:
    distilled(repo)
    lesson(repo, "api", "k3", 9)
    os.makedirs(repo / MEM / "newbie" / "journal")
    lesson(repo, "newbie", "k4", 9)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pending lessons")
    assert jmem(repo, "check").returncode == 0


def test_expiry_after_the_recorded_date_does_not_make_it_flap(repo: Path) -> None:
    until = (DAY + dt.timedelta(days=1)).date()
    lesson(repo, "api", "short-lived", valid_until=until)
    assert jmem(repo, "distill", "--date", DAY.date().isoformat()).returncode == 0
    assert "[short-lived]" in (repo / MEM / "api" / "MEMORY.md").read_text()
    assert jmem(repo, "check").returncode == 0  # today is long after `until`


def test_a_hand_edit_committed_with_no_verify_is_caught(repo: Path) -> None:
    distilled(repo)
    target = repo / MEM / "api" / "MEMORY.md"
    target.write_text(target.read_text() + "- sneaky [k9]\n")
    git(repo, "commit", "-q", "--no-verify", "-am", "hand edit")
    proc = jmem(repo, "check")
    assert proc.returncode == 1
    assert f"{MEM}/api/MEMORY.md: differs from a rebuild" in proc.stdout


def test_journal_entries_modified_or_deleted_since_base(repo: Path) -> None:
    distilled(repo)
    base = git(repo, "rev-parse", "HEAD").stdout.strip()
    entry = next((repo / MEM / "api" / "journal").glob("*-k1.md"))
    entry.write_text(entry.read_text() + "\nedited\n")
    git(repo, "commit", "-q", "--no-verify", "-am", "edit an entry")
    proc = jmem(repo, "check", "--base", base)
    assert proc.returncode == 1
    assert "journal entry modified since" in proc.stdout
    entry.unlink()
    git(repo, "commit", "-q", "--no-verify", "-am", "delete it")
    proc = jmem(repo, "check", "--base", base)
    assert "journal entry deleted since" in proc.stdout
    assert "folded by the last distill but now missing" in proc.stdout


def test_over_budget_memory_md_is_reported(repo: Path) -> None:
    distilled(repo)
    target = repo / MEM / "api" / "MEMORY.md"
    target.write_text(target.read_text() + "x\n" * 300)
    proc = jmem(repo, "check")
    assert proc.returncode == 1 and "over budget" in proc.stdout


def test_conflict_markers_symlinks_secrets_and_invalid_entries(repo: Path) -> None:
    distilled(repo)
    (repo / MEM / "api" / "notes.md").write_text("<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n")
    os.symlink("/etc/passwd", repo / MEM / "web" / "link.md")
    lesson(repo, "api", "leak", body="token: ghp_" + "a1B2c3D4e5" * 4)
    bad = repo / MEM / "web" / "journal" / "2026-05-01-bad.md"
    bad.write_text("not an entry\n")
    out = jmem(repo, "check").stdout
    assert f"{MEM}/api/notes.md: unresolved conflict markers" in out
    assert f"{MEM}/web/link.md: a symlink under the memory root" in out
    assert "secret: line" in out and "github token" in out.lower()
    assert "2026-05-01-bad.md: invalid entry: frontmatter: missing" in out


def test_distilled_files_without_state_are_reported(repo: Path) -> None:
    distilled(repo)
    (repo / MEM / "distill-state.json").unlink()
    proc = jmem(repo, "check")
    assert proc.returncode == 1 and "distill-state.json: missing" in proc.stdout
