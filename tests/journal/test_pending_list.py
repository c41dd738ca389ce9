"""The pending entries are kept between calls (the wake-up hook asks on every session
start) and the kept answer is never used once a journal folder or the distill state
changed, nor while one changed too recently to be told apart from the next change."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from journal_mem.journal import listing
from journal_mem.journal.entry import build
from journal_mem.journal.files import record
from journal_mem.repo import open_context


def age(repo: Path, seconds: float) -> None:
    """Date the journal folders and the distill state `seconds` back."""
    when = time.time() - seconds
    mem = repo / ".claude" / "agent-memory"
    for path in [*mem.glob("*/journal"), mem / "distill-state.json"]:
        if path.exists():
            os.utime(path, (when, when))


def rels(repo: Path) -> list[str]:
    return [found[2] for found in listing.pending_paths(open_context(str(repo)).layout)]


def test_the_kept_list_follows_new_lessons_and_distills(repo: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    layout = open_context(str(repo)).layout
    record(layout, build(agent="api", topic="ops", title="First pending lesson", body="x"))
    age(repo, 60)
    first = rels(repo)
    assert len(first) == 1
    assert (Path(layout.state_dir) / "cache" / "pending-list.json").exists()

    real = listing._listdir

    def no_listing(folder: str) -> list[str]:
        assert not folder.endswith(os.sep + "journal"), f"listed {folder}"
        return real(folder)  # the outbox is listed every time (it is small)

    monkeypatch.setattr(listing, "_listdir", no_listing)
    assert rels(repo) == first  # nothing changed: the kept answer, no listing
    monkeypatch.undo()

    record(layout, build(agent="web", topic="ops", title="Second pending lesson", body="x"))
    assert len(rels(repo)) == 2  # a folder changed just now: listed, not kept
    age(repo, 30)
    assert len(rels(repo)) == 2

    from helpers import jmem

    assert jmem(repo, "distill").returncode == 0
    age(repo, 10)
    assert rels(repo) == []  # the distill state changed: everything is folded now


def test_a_change_within_the_same_tick_is_not_hidden(repo: Path) -> None:
    layout = open_context(str(repo)).layout
    record(layout, build(agent="api", topic="ops", title="First lesson", body="x"))
    assert len(rels(repo)) == 1  # the folder changed just now: this listing is not kept
    folder = repo / ".claude" / "agent-memory" / "api" / "journal"
    stat = os.stat(folder)
    record(layout, build(agent="api", topic="ops", title="Second lesson", body="x"))
    os.utime(folder, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # a coarse clock: same mtime
    assert len(rels(repo)) == 2
