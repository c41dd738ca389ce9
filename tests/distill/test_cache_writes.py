"""A distill reads the caches its fold needs while `git status` runs
(`folding.Loaded`), and writes them while it waits on git for its commit
(`cache.HeldWrites`).

In-process distills on a real repository, with the caches' reads and writes, the
safety check that waits on `git status`, and the commit watched.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from distill_helpers import lesson

from journal_mem import repo as repo_module
from journal_mem.distill import distiller, safety
from journal_mem.gitops import indexlock, memgit
from journal_mem.journal import cache

CACHES = {"entries.pickle", "fold.pickle", "replay.pickle", "rules.pickle", "topics.pickle"}


def _distill(main: Path, **options: bool) -> distiller.Outcome:
    return distiller.distill(repo_module.open_context(str(main)), distiller.Options(**options))


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(who, file) for each cache file written: "main" or "thread", by which thread; and
    ("commit", "") when the distill's commit starts."""
    seen: list[tuple[str, str]] = []
    dump, commit = cache.dump, memgit.commit
    main = threading.current_thread()

    def spy_dump(path: str, *args: object, **kwargs: object) -> None:
        seen.append(("main" if threading.current_thread() is main else "thread",
                     os.path.basename(path).removesuffix(".delta")))
        dump(path, *args, **kwargs)  # type: ignore[arg-type]

    def spy_commit(*args: object, **kwargs: object) -> str | None:
        seen.append(("commit", ""))
        return commit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "dump", spy_dump)
    monkeypatch.setattr(memgit, "commit", spy_commit)
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    return seen


def test_a_committing_distill_writes_its_caches_while_git_commits(
        repo: Path, watched: list[tuple[str, str]]) -> None:
    """A distill that goes on from the last one holds every cache write (each a delta)
    for its commit. A first distill writes the new bases of the entry cache and of the
    replay at once: the entries' pickles and the whole replay are let go before the
    render, the peak of a full distill."""
    lesson(repo, "api", "a1", topic="alpha")
    lesson(repo, "web", "w1", topic="beta")
    assert _distill(repo).status == "distilled"
    assert {name for who, name in watched if who == "main"} == {"entries.pickle",
                                                                "replay.pickle"}
    assert {name for who, name in watched if who == "thread"} >= CACHES - {"entries.pickle",
                                                                           "replay.pickle"}
    # on disk when the distill returns: the next one goes on from them
    lesson(repo, "api", "a2", 5, topic="alpha")
    watched.clear()
    out = _distill(repo)
    assert out.status == "distilled" and out.new_lessons == ["api/journal/2026-05-01-a2.md"]
    assert {name for who, name in watched if who == "thread"} >= CACHES
    assert not {name for who, name in watched if who == "main"} & CACHES
    assert _distill(repo, check=True, rebuild=True).status == "unchanged"


def test_a_distill_that_commits_nothing_writes_its_caches_itself(
        repo: Path, watched: list[tuple[str, str]]) -> None:
    lesson(repo, "api", "a1", topic="alpha")
    assert _distill(repo, commit=False).status == "distilled"
    assert ("commit", "") not in watched
    assert {name for who, name in watched if who == "main"} >= CACHES
    assert not cache._HELD


def test_the_fold_s_caches_are_read_before_the_distill_waits_on_git_status(
        repo: Path, watched: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    lesson(repo, "api", "a1", topic="alpha")
    assert _distill(repo).status == "distilled"  # every cache written once
    read: list[str] = []
    load, refuse = cache._load, safety.refuse_unsafe  # every cache file's read

    def spy_load(path: str, *args: object, **kwargs: object) -> object:
        read.append(os.path.basename(path))
        return load(path, *args, **kwargs)  # type: ignore[arg-type]

    def spy_refuse(*args: object, **kwargs: object) -> object:
        read.append("waits on git status")
        return refuse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "_load", spy_load)
    monkeypatch.setattr(safety, "refuse_unsafe", spy_refuse)
    lesson(repo, "api", "a2", 5, topic="alpha")
    out = _distill(repo)
    assert out.status == "distilled" and out.new_lessons == ["api/journal/2026-05-01-a2.md"]
    waits = read.index("waits on git status")
    assert {*CACHES, "memory.pickle"} <= set(read[:waits]), read
    assert not {*CACHES, "memory.pickle"} & set(read[waits:]), read  # each read once


def test_the_distiller_s_blob_history_is_read_only_for_a_changed_generated_file(
        repo: Path, watched: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Telling a hand edit from the distiller's own output reads its blob history (~0.5 MB
    at 10k lessons), only when git lists a generated file as changed."""
    from journal_mem.distill import unadopted

    read: list[str] = []
    ever = unadopted.ever_written
    monkeypatch.setattr(unadopted, "ever_written",
                        lambda layout: (read.append("history"), ever(layout))[1])
    lesson(repo, "api", "a1", topic="alpha")
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "a2", 5, topic="alpha")
    assert _distill(repo).status == "distilled" and read == []
    memory = repo / ".claude" / "agent-memory" / "api" / "MEMORY.md"
    memory.write_text(memory.read_text().replace("Lesson a1", "Lesson a1, by hand"))
    out = _distill(repo)
    assert read == ["history"] and out.adopted, out


def test_the_blob_history_of_an_older_journal_mem_is_kept_when_first_written(
        repo: Path) -> None:
    """An older journal-mem kept the distiller's blob history as JSON: it is read as it is
    until the first write, which keeps it (with the new blobs) and replaces the file."""
    import json

    from journal_mem.distill import files

    layout = repo_module.open_context(str(repo)).layout
    old = Path(layout.state_dir, files.OLD_HISTORY)
    old.write_text(json.dumps({".claude/agent-memory/api/MEMORY.md": ["a" * 40]}))
    assert files.ever_written(layout) == {".claude/agent-memory/api/MEMORY.md": ["a" * 40]}
    files.remember(layout, {".claude/agent-memory/api/MEMORY.md": "b" * 40}, [], keep_old=True)
    assert not old.exists() and Path(layout.state_dir, files.HISTORY).is_file()
    assert files.ever_written(layout) == {
        ".claude/agent-memory/api/MEMORY.md": ["a" * 40, "b" * 40]}
    Path(layout.state_dir, files.HISTORY).write_bytes(b"\x00damaged")
    assert files.ever_written(layout) == {}
