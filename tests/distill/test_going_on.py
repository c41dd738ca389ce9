"""Distills that go on from the last fold (its replay, its rules' decisions, its index of
probable corrections: `journal/rules.py`, `journal/corrections.py`) in a real repository,
through commits of code that remove a cited file and bring it back: after each, a fold
of everything from nothing (`distill --check --rebuild`) finds nothing to change, and
`jmem check` is ok."""

from __future__ import annotations

import datetime as dt
import json
import pickle
from pathlib import Path

import pytest
from distill_helpers import MEM, lesson
from helpers import git, jmem, make_repo

from journal_mem import repo as repo_module
from journal_mem.distill import distiller
from journal_mem.gitops import memgit

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


def _in_process(main: Path) -> distiller.Outcome:
    """A distill on `DATE` in this process (so what it asks git can be watched), then a
    fold of everything from nothing that finds nothing to change."""
    out = distiller.distill(repo_module.open_context(str(main)),
                            distiller.Options(date=dt.date.fromisoformat(DATE)))
    again = jmem(main, "distill", "--date", DATE, "--check", "--rebuild")
    assert again.returncode == 0, again.stdout + again.stderr
    return out


def test_refs_are_asked_again_only_after_a_commit_outside_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Going on, a distill asks the tree for the paths the kept facts cite only when a
    commit since the last distill changed something outside the memory root
    (`memgit.refs_same`); its own commits of memory leave every answer as it was."""
    main = make_repo(tmp_path / "main")
    (main / "src").mkdir()
    (main / "src" / "retry.py").write_text("LIMIT = 3\n")
    git(main, "add", "src")
    git(main, "commit", "-q", "-m", "code")
    assert jmem(main, "init", "--agent", "api", "--no-git-hooks", "--no-claude").returncode == 0
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "journal-mem")
    lesson(main, "api", "limit", 0, title="The retry limit is 3", refs=("src/retry.py",))
    _in_process(main)
    asked: list[str] = []
    real = memgit.RefChecker.__call__

    def spy(self: memgit.RefChecker, path: str) -> bool:
        asked.append(path)
        return real(self, path)

    monkeypatch.setattr(memgit.RefChecker, "__call__", spy)
    for n in range(2):  # only the last distill's commit since (each lesson newer than the
        # last: an older one, or a commit of memory by anyone else, makes the fold replay
        # everything and judge every ref: `kept.kept_replay`)
        lesson(main, "api", f"batch-{n}", 20 + n, title=f"The batch size is {40 + n}")
        out = _in_process(main)
        assert out.status == "distilled" and "src/retry.py" not in asked, (n, asked)
    assert "[limit]" in (main / MEM / "api" / "MEMORY.md").read_text()

    (main / "src" / "other.py").write_text("X = 1\n")  # code changed, the cited file stays
    git(main, "add", "src")
    git(main, "commit", "-q", "-m", "more code")
    lesson(main, "api", "queue", 30, title="The queue depth is 8")
    out = _in_process(main)
    assert "src/retry.py" in asked and not out.stale_refs
    asked.clear()

    git(main, "rm", "-q", "src/retry.py")
    git(main, "commit", "-q", "-m", "retry moved out")
    lesson(main, "api", "ttl", 40, title="The cache ttl is 60 seconds")
    out = _in_process(main)
    assert "src/retry.py" in asked
    assert out.stale_refs == {"limit": "refs gone: src/retry.py"}
    assert "[limit]" not in (main / MEM / "api" / "MEMORY.md").read_text()
    assert jmem(main, "check").returncode == 0


def test_refs_same_holds_only_for_commits_of_memory_alone(tmp_path: Path) -> None:
    """`memgit.refs_same` in a real repository: a descendant through commits under the
    memory root alone, and never for a path in the memory root or above it, a commit
    that is no descendant, a change outside it undone later, or a merge of one."""
    main = make_repo(tmp_path / "main")
    (main / "src").mkdir()
    (main / "src" / "a.py").write_text("A = 1\n")
    (main / MEM / "api").mkdir(parents=True)
    (main / MEM / "api" / "notes.md").write_text("notes\n")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "start")

    def head() -> str:
        return git(main, "rev-parse", "HEAD").stdout.strip()

    def same(old: str, paths: set[str], new: str = "") -> bool:
        return memgit.refs_same(str(main), old, new or head(), MEM, paths)

    start = head()
    assert same(start, {"src/a.py"})
    (main / MEM / "api" / "notes.md").write_text("more notes\n")
    git(main, "commit", "-q", "-am", "memory")
    memory = head()
    assert same(start, {"src/a.py", "src/gone.py", "docs"})
    for path in (f"{MEM}/api/notes.md", MEM, ".claude", "", "./src/a.py", "src/../x"):
        assert not same(start, {"src/a.py", path}), path
    assert not same(memory, {"src/a.py"}, new=start)  # not a descendant
    (main / "src" / "a.py").write_text("A = 2\n")
    git(main, "commit", "-q", "-am", "code")
    (main / "src" / "a.py").write_text("A = 1\n")
    git(main, "commit", "-q", "-am", "code undone")
    assert not same(memory, {"src/a.py"})  # the trees are equal, a commit between is not
    git(main, "checkout", "-q", "-b", "side", memory)
    git(main, "mv", "src/a.py", "src/b.py")
    git(main, "commit", "-q", "-m", "renamed")
    git(main, "mv", "src/b.py", "src/a.py")
    git(main, "commit", "-q", "-m", "renamed back")
    git(main, "checkout", "-q", "-")
    git(main, "merge", "-q", "--no-edit", "side")
    assert not same(memory, {"src/a.py"})
