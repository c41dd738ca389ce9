"""The recall index follows new lessons by appending them, and gives the rows a full
update gives: after every step below, the index kept current step by step holds exactly
the rows of an index rebuilt from the whole journal."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import pytest
from helpers import git, jmem

from journal_mem.journal.entry import build
from journal_mem.journal.files import record
from journal_mem.recall import refresh
from journal_mem.recall.index import connect, index_path, update
from journal_mem.repo import open_context

DAY = dt.datetime.now(dt.UTC).date()
COLUMNS = "key, title, tags, topic, body, holders, created, path, confidence, type, stamp, norm"


def rows(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return conn.execute(f"SELECT {COLUMNS} FROM facts ORDER BY key").fetchall()


def matches(conn: sqlite3.Connection) -> list[str]:
    """The keys the full-text table finds for a word every title here holds."""
    return [r[0] for r in conn.execute("SELECT f.key FROM fts JOIN facts f ON f.id = fts.rowid"
                                       " WHERE fts MATCH 'lesson' ORDER BY f.key")]


def write(repo: Path, agent: str, key: str, title: str, **fields: object) -> None:
    record(open_context(str(repo)).layout,
           build(agent=agent, topic=str(fields.pop("topic", "ops")), key=key, title=title,
                 body=str(fields.pop("body", f"About {title}.")), **fields))


class Journal:
    """The index under test (kept current after each step) beside a fresh rebuild."""

    def __init__(self, repo: Path, tmp: Path) -> None:
        self.repo, self.tmp, self.step = repo, tmp, 0
        ctx = open_context(str(repo))
        self.conn = connect(index_path(ctx.layout))
        update(ctx, self.conn, DAY)

    def check(self, appended: bool, monkeypatch: pytest.MonkeyPatch) -> int:
        """Bring the index up to date; it appended (the journal was not read) iff `appended`;
        its rows equal a rebuild's."""
        ctx = open_context(str(self.repo))
        calls: list[int] = []
        real = refresh.read_journal  # the reader as the index calls it
        monkeypatch.setattr(refresh, "read_journal",
                            lambda *a, **k: calls.append(1) or real(*a, **k))
        changed = update(ctx, self.conn, DAY)
        monkeypatch.setattr(refresh, "read_journal", real)
        assert bool(calls) is not appended, (self.step, calls)
        self.step += 1
        fresh = connect(str(self.tmp / f"fresh-{self.step}.sqlite"))
        try:
            update(ctx, fresh, DAY, rebuild=True)
            assert rows(self.conn) == rows(fresh), self.step
            assert matches(self.conn) == matches(fresh), self.step
        finally:
            fresh.close()
        return changed


def test_appending_gives_the_rows_of_a_rebuild(repo: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        write(repo, "api", f"seed-{i}", f"Seed lesson {i}")
    write(repo, "web", "seed-web", "Seed lesson of web")  # a new agent folder: read in full
    journal = Journal(repo, tmp_path)
    try:
        write(repo, "api", "one-new", "A new lesson about caches")
        assert journal.check(True, monkeypatch) == 1
        write(repo, "web", "one-new", "A new lesson about caches, web side")  # same key
        assert journal.check(True, monkeypatch) == 1
        # a title another writer's fact has: never merged across writers (a probable
        # correction), and who merges is the fold's to say: a full update
        write(repo, "web", "other-key", "Seed lesson 1")
        journal.check(False, monkeypatch)
        write(repo, "api", "for-all", "A lesson for everyone", applies_to=["all"])
        write(repo, "web", "twice-1", "Lesson one of two at once")
        assert journal.check(True, monkeypatch) == 2
        write(repo, "api", "run-1", "Nightly run lesson", type="episodic")
        write(repo, "api", "run-2", "Nightly run lesson", type="episodic")  # never merged
        assert journal.check(True, monkeypatch) == 2
        write(repo, "api", "old-window", "Expired lesson", valid_until="2000-01-01")
        assert journal.check(True, monkeypatch) == 0
        write(repo, "api", "refs-gone", "Lesson with a ref", refs=["no/such/file.py"])
        journal.check(True, monkeypatch)
        write(repo, "api", "seed-2", "Seed lesson 2", valid_until="2000-01-01")  # live: dropped
        assert journal.check(True, monkeypatch) == 1
        write(repo, "web", "seed-web", "Seed lesson of web, renamed")  # nothing merged into it
        assert journal.check(True, monkeypatch) == 1
        # the cases whose outcome reaches beyond the new entry's rows: a full update
        write(repo, "api", "old-window", "Expired lesson is back")  # a key dropped before
        journal.check(False, monkeypatch)
        write(repo, "web", "fix-one", "A lesson superseding one", supersedes=["one-new"])
        journal.check(False, monkeypatch)
        write(repo, "api", "gone", "A retraction", retracts=["for-all"])
        journal.check(False, monkeypatch)
        write(repo, "web", "other-key", "A new title for a key seed-1's title had")
        journal.check(False, monkeypatch)
        write(repo, "api", "seed-0", "Seed lesson 0")
        write(repo, "api", "merge-0", "Seed lesson 0")  # the same writer: merges seed-0 into it
        journal.check(False, monkeypatch)
        write(repo, "api", "merge-0", "Expiring now", valid_until="2000-01-02")  # un-merges
        journal.check(False, monkeypatch)
        plain = repo / ".claude/agent-memory/api/journal/2026-01-01-ops-plain-note.md"
        plain.write_text("# A plain note\n\nNo frontmatter.\n")
        journal.check(False, monkeypatch)
        bad = repo / ".claude/agent-memory/web/journal/2099-01-01-broken.md"
        bad.write_text("---\nagent: web\n---\n\nno title\n")
        journal.check(True, monkeypatch)  # read once, and kept out of the facts
        write(repo, "web", "after-bad", "A lesson after a broken file")
        journal.check(True, monkeypatch)
        bad.unlink()  # a file gone
        journal.check(False, monkeypatch)
        assert journal.check(True, monkeypatch) == 0  # nothing changed: nothing read
    finally:
        journal.conn.close()


def test_a_file_replaced_under_its_name_is_read_again(repo: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo, "api", "seed", "Seed lesson")
    journal = Journal(repo, tmp_path)
    try:
        folder = repo / ".claude/agent-memory/api/journal"
        (path,) = folder.glob("*.md")
        tmp = folder / ".edit.tmp"
        tmp.write_text(path.read_text().replace("Seed lesson", "Seed lesson, edited"))
        tmp.replace(path)  # how an editor saves: the folder changes, the names do not
        journal.check(False, monkeypatch)
        assert [r[1] for r in rows(journal.conn)] == ["Seed lesson, edited"]
    finally:
        journal.conn.close()


def test_a_head_that_moves_on_keeps_appending_unless_a_fact_may_change(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent commits code, then writes a lesson: the index appends it, although HEAD
    (against whose tree refs are judged) moved. It reads the journal again when a commit
    adds or deletes a path a lesson cites (or one its renames reach), commits some of the
    pending entries but not all, or when HEAD goes where it did not descend from."""
    (repo / "src").mkdir()
    for name in ("cache.py", "other.py", "old_name.py"):
        (repo / "src" / name).write_text(f"{name}\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "code")
    git(repo, "mv", "src/old_name.py", "src/renamed.py")
    git(repo, "commit", "-q", "-m", "rename")
    write(repo, "api", "cites", "Lesson citing the cache module", refs=["src/cache.py"])
    write(repo, "api", "cites-new", "Lesson citing a module not there", refs=["src/new.py"])
    write(repo, "web", "cites-old", "Lesson citing a renamed module", refs=["src/old_name.py"])
    journal = Journal(repo, tmp_path)
    try:
        for i in range(2):  # each commit only changes a file: appended after each
            (repo / "src" / "cache.py").write_text(f"version {i}\n")
            git(repo, "commit", "-q", "-am", f"change {i}")
            write(repo, "api", f"after-{i}", f"Lesson after change {i}")
            assert journal.check(True, monkeypatch) == 1
        (repo / "src" / "unrelated.py").write_text("new\n")  # a file nobody cites
        git(repo, "add", "src/unrelated.py")
        git(repo, "commit", "-q", "-m", "add unrelated")
        git(repo, "mv", "src/other.py", "src/other2.py")  # renamed, uncited
        git(repo, "commit", "-q", "-m", "rename uncited")
        write(repo, "api", "after-add", "Lesson after files nobody cites")
        assert journal.check(True, monkeypatch) == 1
        (repo / "src" / "new.py").write_text("now\n")  # the missing ref appears
        git(repo, "add", "src/new.py")
        git(repo, "commit", "-q", "-m", "add new")
        write(repo, "api", "after-new", "Lesson after a cited file came")
        journal.check(False, monkeypatch)
        assert "cites-new" in [r[0] for r in rows(journal.conn)]
        git(repo, "rm", "-q", "src/renamed.py")  # where a cited file was renamed to
        git(repo, "commit", "-q", "-m", "delete renamed")
        write(repo, "api", "after-renamed", "Lesson after a renamed cited file went")
        journal.check(False, monkeypatch)
        assert "cites-old" not in [r[0] for r in rows(journal.conn)]
        git(repo, "rm", "-q", "src/cache.py")  # the cited file is deleted
        git(repo, "commit", "-q", "-m", "delete cache")
        write(repo, "api", "after-delete", "Lesson after a deleted file")
        journal.check(False, monkeypatch)
        assert "cites" not in [r[0] for r in rows(journal.conn)]
        pending = sorted((repo / ".claude/agent-memory/api/journal").glob("*.md"))
        git(repo, "add", str(pending[0]))  # one pending entry committed, the others not
        git(repo, "commit", "-q", "-m", "one lesson")
        write(repo, "api", "after-one", "Lesson after one committed lesson")
        journal.check(False, monkeypatch)
        git(repo, "add", "-A", ".claude")  # every pending entry, in one commit
        git(repo, "commit", "-q", "-m", "lessons")
        write(repo, "api", "after-all", "Lesson after every lesson was committed")
        assert journal.check(True, monkeypatch) == 1
        git(repo, "checkout", "-q", "-b", "side", "HEAD~3")  # HEAD goes back: no descendant
        write(repo, "api", "on-side", "Lesson on a side branch")
        journal.check(False, monkeypatch)
    finally:
        journal.conn.close()


def test_a_distill_keeps_the_index_appending(repo: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A distill commits the pending entries in one commit (with the distilled files):
    the next lesson is appended, and the rows are a rebuild's."""
    write(repo, "api", "seed", "Seed lesson", refs=["README"])
    write(repo, "web", "seed-web", "Seed lesson of web")
    journal = Journal(repo, tmp_path)
    try:
        for i in range(2):
            write(repo, "api", f"before-{i}", f"Lesson before distill {i}")
            assert journal.check(True, monkeypatch) == 1
            proc = jmem(repo, "distill")
            assert proc.returncode == 0, proc.stderr
            write(repo, "web", f"after-{i}", f"Lesson after distill {i}")
            assert journal.check(True, monkeypatch) == 1
    finally:
        journal.conn.close()
