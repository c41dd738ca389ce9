"""Distills that go on from the last fold (its replay, its rules' decisions, its index of
probable corrections: `journal/rules.py`, `journal/corrections.py`) in a real repository,
through commits of code that remove a cited file and bring it back: after each, a fold
of everything from nothing (`distill --check --rebuild`) finds nothing to change, and
`jmem check` is ok."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from distill_helpers import MEM, lesson
from helpers import git, jmem, make_repo

DATE = "2026-05-02"  # every distill on one date: the decisions are gone on from


def _distill(main: Path) -> dict[str, object]:
    proc = jmem(main, "distill", "--date", DATE, "--json")
    assert proc.returncode == 0, proc.stderr
    out: dict[str, object] = json.loads(proc.stdout)
    again = jmem(main, "distill", "--date", DATE, "--check", "--rebuild")
    assert again.returncode == 0, again.stdout + again.stderr
    assert jmem(main, "check").returncode == 0
    return out


def _went_on(main: Path) -> bool:
    """Whether the kept decisions hold an index of probable corrections (a distill that
    went on from them, or judged every fact and kept them)."""
    with open(main / ".git" / "journal-mem" / "cache" / "rules.pickle", "rb") as fh:
        kept = pickle.load(fh)
    return kept["items"]["ruled"]["index"] is not None


def test_distills_going_on_equal_a_fold_of_everything(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    (main / "src").mkdir()
    (main / "src" / "retry.py").write_text("LIMIT = 3\n")
    git(main, "add", "src")
    git(main, "commit", "-q", "-m", "code")
    assert jmem(main, "init", "--agent", "api", "--agent", "web", "--no-git-hooks",
                "--no-claude").returncode == 0
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "journal-mem")

    lesson(main, "api", "limit", 0, title="The retry limit is 3", refs=("src/retry.py",))
    lesson(main, "api", "noon", 1, title="Deploys run at noon")
    lesson(main, "web", "batch", 2, title="The batch size is 40")
    first = _distill(main)
    assert len(first["new_lessons"]) == 3  # type: ignore[arg-type]

    lesson(main, "web", "limit-now", 10, title="The retry limit is now 5",
           body="The client retries five times since the gateway change.")
    lesson(main, "api", "noon-again", 11, title="deploys run at noon!")
    second = _distill(main)
    assert second["conflicts"] == [{"old": "limit", "newer": "limit-now"}]
    assert _went_on(main)
    memory = (main / MEM / "api" / "MEMORY.md").read_text()
    assert "possibly outdated by [limit-now]" in memory

    git(main, "rm", "-q", "src/retry.py")
    git(main, "commit", "-q", "-m", "retry moved out")
    lesson(main, "web", "other", 20, title="The queue depth is 8")
    third = _distill(main)
    assert third["stale_refs"] == {"limit": "refs gone: src/retry.py"}
    assert "[limit]" not in (main / MEM / "api" / "MEMORY.md").read_text()

    (main / "src").mkdir()
    (main / "src" / "retry.py").write_text("LIMIT = 5\n")
    git(main, "add", "src")
    git(main, "commit", "-q", "-m", "retry back")
    lesson(main, "web", "more", 30, title="The cache ttl is 60 seconds")
    _distill(main)
    assert "[limit]" in (main / MEM / "api" / "MEMORY.md").read_text()
