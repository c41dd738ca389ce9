"""Helpers for distiller tests: entries written straight into a real repository."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from helpers import git

from journal_mem.journal.entry import Entry, render

DAY = dt.datetime(2026, 5, 1, 9, 0, tzinfo=dt.UTC)
MEM = ".claude/agent-memory"


def lesson(main: Path, agent: str, key: str, minutes: int = 0, *, name: str = "",
           **kw: Any) -> Path:
    """Write one valid entry into `agent`'s journal (untracked, as an agent would)."""
    kw.setdefault("title", f"Lesson {key}")
    kw.setdefault("topic", "general")
    entry = Entry(agent=agent, key=key, created=DAY + dt.timedelta(minutes=minutes),
                  applies_to=kw.pop("applies_to", (agent,)), **kw)
    folder = main / MEM / agent / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{entry.created.date()}-{name or key}.md"
    path.write_text(render(entry))
    return path


def memory_md(main: Path, agent: str) -> str:
    return (main / MEM / agent / "MEMORY.md").read_text()


def head(main: Path) -> str:
    return git(main, "rev-parse", "HEAD").stdout.strip()


def snapshot(main: Path) -> dict[str, bytes]:
    """Every file under the memory root, by repository-relative path."""
    root = main / MEM
    return {str(p.relative_to(main)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}
