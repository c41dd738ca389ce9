"""A symlink above the memory root (a committed `.claude -> ../elsewhere`) is never followed.

Every folder from the repository top down to each memory file is checked by
`write`, `distill`, `check` and the guard.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from guardkit import commit, install_hooks
from helpers import git, jmem


def _redirect(main: Path) -> Path:
    """Move `.claude` out of the repository and leave a symlink in its place (staged)."""
    elsewhere = main.parent / "elsewhere"
    git(main, "rm", "-r", "-q", "--cached", ".claude")
    shutil.move(str(main / ".claude"), str(elsewhere))
    os.symlink("../elsewhere", main / ".claude")
    git(main, "add", ".claude")
    return elsewhere


@pytest.fixture
def linked(repo: Path) -> Path:
    """`repo` with `.claude -> ../elsewhere` committed (past the guard)."""
    _redirect(repo)
    git(repo, "commit", "-q", "--no-verify", "-m", "claude folder elsewhere")
    return repo


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_write_refuses_and_writes_nothing_outside(linked: Path) -> None:
    before = _files(linked.parent / "elsewhere")
    proc = jmem(linked, "write", "--agent", "api", "--topic", "testing", "--title", "A lesson",
                "--body", "Detail.")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ".claude is a symlink" in proc.stderr
    assert _files(linked.parent / "elsewhere") == before


def test_distill_refuses_and_writes_nothing_outside(linked: Path) -> None:
    elsewhere = linked.parent / "elsewhere"
    entry = elsewhere / "agent-memory" / "api" / "journal" / "2026-01-02-a-lesson.md"
    entry.write_text("---\nagent: api\ncreated: 2026-01-02T03:04:05+00:00\ntopic: testing\n"
                     "---\n\n# A lesson\n\nDetail.\n")
    before = _files(elsewhere)
    proc = jmem(linked, "distill")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ".claude: a symlink" in proc.stderr
    assert _files(elsewhere) == before


def test_check_reports_the_link(linked: Path) -> None:
    proc = jmem(linked, "check")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ".claude: a symlink on the way to the memory root" in proc.stdout + proc.stderr


def test_guard_refuses_committing_the_link(repo: Path) -> None:
    install_hooks(repo)
    _redirect(repo)
    before = git(repo, "rev-parse", "HEAD").stdout
    proc = commit(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "  .claude\n" in proc.stderr and "a symlink where a folder above" in proc.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


def test_outbox_drain_refuses_and_moves_nothing(linked: Path) -> None:
    proc = jmem(linked, "write", "--outbox", "--agent", "api", "--topic", "testing", "--title",
                "A lesson", "--body", "Detail.")
    assert proc.returncode == 0, proc.stderr
    before = _files(linked.parent / "elsewhere")
    proc = jmem(linked, "outbox", "drain")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "symlinks on the way to memory: .claude" in proc.stderr
    assert _files(linked.parent / "elsewhere") == before
    assert len(list((linked / ".git" / "journal-mem" / "outbox" / "api").iterdir())) == 1
