"""`jmem rescue` files the newest content and every line that holds something, and a fact
line deleted from a worktree's MEMORY.md becomes a retraction of that fact."""

from __future__ import annotations

from pathlib import Path

from guardkit import MEM, commit_in_main, lesson, put
from helpers import add_worktree, git, jmem, journal_files

from journal_mem.journal.entry import Entry, parse

ENTRY = f"{MEM}/api/journal/2026-01-02-run-the-api-tests.md"
MEMORY_MD = f"{MEM}/api/MEMORY.md"
NOTES = f"{MEM}/api/notes.md"


def status(cwd: Path) -> str:
    return git(cwd, "status", "--porcelain", "--untracked-files=all").stdout


def filed(main: Path) -> list[Entry]:
    return [parse(p.read_bytes(), folder_agent="api") for p in journal_files(main, "api")]


def test_staged_lesson_edited_again_in_the_work_tree(repo: Path, tmp_path: Path) -> None:
    wt = add_worktree(repo, tmp_path / "wt")
    put(wt, ENTRY, lesson(body="First draft."))
    git(wt, "add", "-A")
    put(wt, ENTRY, lesson(body="Second draft, the newest."))
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entries = filed(repo)
    assert [e.body for e in entries] == ["Second draft, the newest."]
    assert not (wt / ENTRY).exists() and status(wt) == ""


def test_untracked_notes_keep_every_line_with_content(repo: Path, tmp_path: Path) -> None:
    wt = add_worktree(repo, tmp_path / "wt")
    put(wt, NOTES, "# Deploys\n\nThe staging deploy needs VPN\n- Use uv for installs\n---\n")
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # a markdown file in an agent's folder is a memory the client wrote: one lesson, whole
    [entry] = filed(repo)
    assert entry.title == "Deploys"
    assert "The staging deploy needs VPN\n- Use uv for installs" in entry.body
    assert not (wt / NOTES).exists()


MEMORY = ("# Memory of api\n\n- Use uv for installs [use-uv]\n"
          "- The DB resets at midnight (topics/db.md) [db-reset]\n"
          "- Keep this one [keep-me]\n- And this one [keep-too]\n")


def test_a_deleted_memory_line_becomes_a_retraction(repo: Path, tmp_path: Path) -> None:
    commit_in_main(repo, MEMORY_MD, MEMORY)
    wt = add_worktree(repo, tmp_path / "wt")
    put(wt, MEMORY_MD, MEMORY.replace("- Use uv for installs [use-uv]\n", ""))
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{MEMORY_MD}: 0 added, 0 changed, 1 deleted" in proc.stdout
    [entry] = filed(repo)
    assert entry.retracts == ("use-uv",) and entry.title == "Retracted by hand: Use uv for installs"
    assert status(wt) == ""


def test_deleting_most_of_a_memory_md_is_refused_and_kept(repo: Path, tmp_path: Path) -> None:
    commit_in_main(repo, MEMORY_MD, MEMORY)
    wt = add_worktree(repo, tmp_path / "wt")
    put(wt, MEMORY_MD, "# Memory of api\n\n- Keep this one [keep-me]\n")
    proc = jmem(wt, "rescue")
    assert proc.returncode == 1
    assert "deletes 3 of its 4 facts; more than a third at once" in proc.stderr
    assert filed(repo) == [] and "Use uv" not in (wt / MEMORY_MD).read_text()


def test_an_edited_memory_line_supersedes_the_fact(repo: Path, tmp_path: Path) -> None:
    commit_in_main(repo, MEMORY_MD, "# Memory of api\n\n- Use uv for installs [use-uv]\n")
    wt = add_worktree(repo, tmp_path / "wt")
    put(wt, MEMORY_MD, "# Memory of api\n\n- Use uv 0.5 or newer for installs [use-uv]\n")
    proc = jmem(wt, "rescue")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [entry] = filed(repo)
    assert entry.title == "Use uv 0.5 or newer for installs"
    assert entry.key == "use-uv" and entry.retracts == ()  # the same fact, corrected
