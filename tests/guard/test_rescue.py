"""`jmem rescue`: memory changes leave the worktree for the main journal; nothing is lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from guardkit import MEM, commit, commit_in_main, install_hooks, lesson, put
from helpers import add_worktree, git, jmem, journal_files

from journal_mem.journal.entry import parse

ENTRY = f"{MEM}/api/journal/2026-01-02-run-the-api-tests.md"
MEMORY_MD = f"{MEM}/api/MEMORY.md"


@pytest.fixture
def main(repo: Path) -> Path:
    install_hooks(repo)
    return repo


def status(cwd: Path) -> str:
    return git(cwd, "status", "--porcelain", "--untracked-files=all").stdout


def test_staged_lesson_is_filed_then_the_commit_passes(main: Path, tmp_path: Path) -> None:
    wt = add_worktree(main, tmp_path / "wt")
    put(wt, ENTRY, lesson())
    put(wt, "src/app.py", "x = 1\n")
    git(wt, "add", "-A")
    assert commit(wt).returncode != 0
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0, proc.stderr
    filed = journal_files(main, "api")
    assert len(filed) == 1
    assert f"{ENTRY} -> {filed[0]}" in proc.stdout
    entry = parse(filed[0].read_bytes(), folder_agent="api")
    assert entry.title == "Run the API tests with -p no:randomly"
    assert not (wt / ENTRY).exists()
    assert status(wt) == "A  src/app.py\n"
    assert commit(wt).returncode == 0


def test_untracked_lesson_is_filed(main: Path, tmp_path: Path) -> None:
    wt = add_worktree(main, tmp_path / "wt")
    put(wt, ENTRY, lesson())
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0, proc.stderr
    assert len(journal_files(main, "api")) == 1
    assert status(wt) == ""


def test_memory_md_edits_are_read_as_the_distiller_reads_them(main: Path,
                                                              tmp_path: Path) -> None:
    commit_in_main(main, MEMORY_MD, "# api memory\n\n- old fact\n")
    wt = add_worktree(main, tmp_path / "wt")
    put(wt, MEMORY_MD, "# api memory\n\n- old fact\n- Use uv for installs\n\n## New heading\n"
        "* [x] The staging DB resets at midnight UTC\n")
    topic = f"{MEM}/api/topics/db.md"
    put(wt, topic, "Migrations run in a transaction\n")
    git(wt, "add", topic)
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0, proc.stderr
    assert f"{MEMORY_MD}: 2 added, 0 changed, 0 deleted" in proc.stdout
    assert f"{topic}: 1 added, 0 changed, 0 deleted" in proc.stdout
    entries = [parse(p.read_bytes(), folder_agent="api") for p in journal_files(main, "api")]
    assert sorted((e.title, e.topic) for e in entries) == [  # a heading is its items' topic
        ("Migrations run in a transaction", "db"),
        ("The staging DB resets at midnight UTC", "new-heading"),
        ("Use uv for installs", "general")]
    assert all(MEMORY_MD in (e.source or "") or topic in (e.source or "") for e in entries)
    assert (wt / MEMORY_MD).read_text() == "# api memory\n\n- old fact\n"
    assert not (wt / topic).exists()
    assert status(wt) == ""


def test_an_invalid_lesson_stays_where_it_was(main: Path, tmp_path: Path) -> None:
    wt = add_worktree(main, tmp_path / "wt")
    bad = f"{MEM}/api/journal/2026-01-02-bad.md"
    put(wt, bad, lesson(agent="web"))
    git(wt, "add", "-A")
    put(wt, ENTRY, lesson())
    proc = jmem(wt, "rescue")
    assert proc.returncode == 1
    assert f"{bad}: left in place: agent: 'web' does not match its folder 'api'" in proc.stderr
    assert (wt / bad).read_text() == lesson(agent="web")
    assert status(wt) == f"A  {bad}\n"
    assert len(journal_files(main, "api")) == 1  # the good one was filed


def test_a_secret_is_not_filed(main: Path, tmp_path: Path) -> None:
    wt = add_worktree(main, tmp_path / "wt")
    put(wt, MEMORY_MD, "- the deploy key is AKIAIOSFODNN7EXAMPLF\n")
    proc = jmem(wt, "rescue")
    assert proc.returncode == 1
    assert "aws access key id" in proc.stderr  # refused: nothing filed, nothing leaked
    assert (wt / MEMORY_MD).exists()
    assert journal_files(main, "api") == []


def test_deleted_and_edited_entries(main: Path, tmp_path: Path) -> None:
    commit_in_main(main, ENTRY, lesson())
    other = f"{MEM}/api/journal/2026-01-03-other.md"
    commit_in_main(main, other, lesson(title="Other lesson"))
    wt = add_worktree(main, tmp_path / "wt")
    (wt / ENTRY).unlink()
    put(wt, other, lesson(title="Other lesson, corrected"))
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0, proc.stderr
    assert f"{ENTRY}: deleted here; restored from HEAD" in proc.stdout
    assert status(wt) == ""
    titles = [parse(p.read_bytes(), folder_agent="api").title for p in journal_files(main, "api")]
    assert "Other lesson, corrected" in titles


def test_nothing_to_rescue(main: Path, tmp_path: Path) -> None:
    wt = add_worktree(main, tmp_path / "wt")
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0
    assert "nothing to rescue" in proc.stdout


def test_rescue_in_the_main_checkout_says_where_to_run_it(main: Path) -> None:
    proc = jmem(main, "rescue")
    assert proc.returncode == 1
    assert "this is the main checkout" in proc.stderr
