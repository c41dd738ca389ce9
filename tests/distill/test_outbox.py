"""`jmem outbox list|drain`, and a drain that crashes between copy and removal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import base_env, jmem, journal_files

from journal_mem.journal.lock import DistillLock

# Run a real drain in a child process that dies (exit 137, like kill -9) at the
# moment it would remove an outbox file: its journal copy is already made.
CRASHING_DRAIN = """
import os, sys
from journal_mem.repo import open_context
from journal_mem.distill.outbox import drain_now

real_unlink = os.unlink

def crash_instead(path, *args, **kwargs):
    if os.sep + "outbox" + os.sep in os.fspath(path):
        os._exit(137)
    return real_unlink(path, *args, **kwargs)

os.unlink = crash_instead
ctx = open_context(sys.argv[1])
drain_now(ctx.layout, ctx.policy)
"""


def outbox_files(repo: Path) -> list[Path]:
    return sorted((repo / ".git" / "journal-mem" / "outbox").glob("*/*.md"))


def to_outbox(cwd: Path, title: str, agent: str = "web", key: str = "") -> Path:
    extra = ["--key", key] if key else []
    proc = jmem(cwd, "write", "--agent", agent, "--topic", "build", "--outbox",
                "--title", title, *extra)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def crash_drain(repo: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", CRASHING_DRAIN, str(repo)], env=base_env(),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 137, proc.stderr


def test_list_shows_valid_and_invalid_entries(repo: Path, worktree: Path) -> None:
    to_outbox(worktree, "The web build needs more memory")
    bad = repo / ".git" / "journal-mem" / "outbox" / "web" / "2026-01-01-bad.md"
    bad.write_text("---\nagent: web\n---\n\nno title\n")
    proc = jmem(worktree, "outbox", "list")
    assert proc.returncode == 0
    assert "web: The web build needs more memory" in proc.stdout
    assert "invalid:" in proc.stdout and "2 waiting, 1 invalid" in proc.stdout
    data = json.loads(jmem(repo, "outbox", "list", "--json").stdout)
    assert [d["valid"] for d in data] == [False, True]


def test_drain_files_valid_entries_and_keeps_invalid_ones(repo: Path, worktree: Path) -> None:
    written = to_outbox(worktree, "The web build needs more memory")
    data = written.read_bytes()
    bad = written.parent / "2026-01-01-bad.md"
    bad.write_text("---\nagent: web\ntopic: x\nsupersede: y\n---\n\n# Typo\n")
    proc = jmem(worktree, "outbox", "drain")
    assert proc.returncode == 1
    assert "1 moved, 1 left" in proc.stdout and "supersede" in proc.stderr
    assert [p.read_bytes() for p in journal_files(repo, "web")] == [data]
    assert outbox_files(repo) == [bad]


def test_drain_waits_for_no_one_holding_the_lock(repo: Path, worktree: Path) -> None:
    to_outbox(worktree, "A lesson")
    with DistillLock(str(repo / ".git" / "journal-mem")):
        proc = jmem(repo, "outbox", "drain")
    assert proc.returncode == 75 and "another distill holds the lock" in proc.stderr
    assert len(outbox_files(repo)) == 1


def test_crash_between_copy_and_removal_loses_nothing(repo: Path, worktree: Path) -> None:
    data = to_outbox(worktree, "The web build needs more memory").read_bytes()
    crash_drain(repo)
    assert [p.read_bytes() for p in journal_files(repo, "web")] == [data]  # the copy
    assert len(outbox_files(repo)) == 1  # and the original
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    assert [p.read_bytes() for p in journal_files(repo, "web")] == [data]  # no duplicate
    assert outbox_files(repo) == []
    assert not list((repo / ".claude").rglob(".tmp-*"))
    assert jmem(repo, "check").returncode == 0


def test_crash_after_a_renamed_copy_leaves_a_duplicate_folded_by_key(
        repo: Path, worktree: Path) -> None:
    written = to_outbox(worktree, "The web build needs more memory", key="web-build-memory")
    # another file already holds that name in the journal: the drain picks a new suffix
    other = to_outbox(worktree, "Some other lesson")
    taken = repo / ".claude" / "agent-memory" / "web" / "journal" / written.name
    taken.write_bytes(other.read_bytes())
    other.unlink()
    crash_drain(repo)
    crash_drain(repo)  # twice: each crash may leave one more copy, never lose one
    copies = [p for p in journal_files(repo, "web") if p.read_bytes() == written.read_bytes()]
    assert len(copies) == 2 and written.exists()  # two copies, and the original
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    assert outbox_files(repo) == []
    memory = (repo / ".claude" / "agent-memory" / "web" / "MEMORY.md").read_text()
    assert memory.count("[web-build-memory]") == 1  # duplicates fold into one fact
    assert jmem(repo, "check").returncode == 0
