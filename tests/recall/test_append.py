"""The recall index follows new lessons by appending them, and gives the rows a full
update gives: after every step below, the index kept current step by step holds exactly
the rows of an index rebuilt from the whole journal."""

from __future__ import annotations

import ast
import datetime as dt
import json
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


def remembered(conn: sqlite3.Connection) -> list[object]:
    """What the index keeps besides the facts to append by (`refresh._remember`)."""
    return [conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("files", "keys", "merged", "expires")] + [
        conn.execute("SELECT * FROM mentions ORDER BY 1, 2, 3, 4").fetchall(),
        conn.execute("SELECT * FROM refs ORDER BY 1").fetchall(),
        conn.execute("SELECT * FROM meta WHERE name IN ('last', 'plain', 'cycles', 'expires')"
                     " ORDER BY 1").fetchall()]


def write(repo: Path, agent: str, key: str, title: str, **fields: object) -> None:
    fields.setdefault("created", _after_the_last())
    record(open_context(str(repo)).layout,
           build(agent=agent, topic=str(fields.pop("topic", "ops")), key=key, title=title,
                 body=str(fields.pop("body", f"About {title}.")), **fields))


_LAST = [dt.datetime.min.replace(tzinfo=dt.UTC)]


def _after_the_last() -> dt.datetime:
    """Now, in whole milliseconds as `write` stamps it, and at least one after the entry
    written before: two entries of one millisecond sort by their paths, not by the order
    they were written in, so whether a step appends would depend on the machine's speed."""
    now = dt.datetime.now(dt.UTC)
    now = now.replace(microsecond=now.microsecond // 1000 * 1000)
    _LAST[0] = max(now, _LAST[0] + dt.timedelta(milliseconds=1))
    return _LAST[0]


class Journal:
    """The index under test (kept current after each step) beside a fresh rebuild."""

    def __init__(self, repo: Path, tmp: Path) -> None:
        self.repo, self.tmp, self.step = repo, tmp, 0
        self.appended = 0  # steps that did not read the journal
        ctx = open_context(str(repo))
        self.conn = connect(index_path(ctx.layout))
        update(ctx, self.conn, DAY)

    def check(self, appended: bool | None, monkeypatch: pytest.MonkeyPatch,
              day: dt.date = DAY) -> int:
        """Bring the index up to date on `day`; it appended (the journal was not read) iff
        `appended` (None: either); its rows equal a rebuild's on that day."""
        ctx = open_context(str(self.repo))
        calls: list[int] = []
        real = refresh.read_journal  # the reader as the index calls it
        monkeypatch.setattr(refresh, "read_journal",
                            lambda *a, **k: calls.append(1) or real(*a, **k))
        changed = update(ctx, self.conn, day)
        monkeypatch.setattr(refresh, "read_journal", real)
        assert appended is None or bool(calls) is not appended, (self.step, calls)
        self.appended += not calls
        self.step += 1
        fresh = connect(str(self.tmp / f"fresh-{self.step}.sqlite"))
        try:
            update(ctx, fresh, day, rebuild=True)
            assert rows(self.conn) == rows(fresh), self.step
            assert matches(self.conn) == matches(fresh), self.step
            assert remembered(self.conn) == remembered(fresh), self.step
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
        # correction): a row of its own
        write(repo, "web", "other-key", "Seed lesson 1")
        assert journal.check(True, monkeypatch) == 1
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
        assert journal.check(True, monkeypatch) == 2  # its holders pass on: see below
        write(repo, "api", "gone", "A retraction", retracts=["for-all"])
        assert journal.check(True, monkeypatch) == 1
        # a title it shared with another writer's fact, never merged: nothing comes apart
        write(repo, "web", "other-key", "A new title for a key seed-1's title had")
        assert journal.check(True, monkeypatch) == 1
        write(repo, "api", "seed-0", "Seed lesson 0")
        write(repo, "api", "merge-0", "Seed lesson 0")  # the same writer: merges seed-0 into it
        assert journal.check(True, monkeypatch) == 3  # seed-0 restated, then merged away
        write(repo, "api", "merge-0", "Seed lesson 0!", body="Restated: the group stands")
        assert journal.check(True, monkeypatch) == 1
        write(repo, "api", "merge-1", "Seed lesson 0")  # a third: the newest wins them all
        assert journal.check(True, monkeypatch) == 2
        assert journal.conn.execute("SELECT * FROM merged WHERE winner = 'merge-1' ORDER BY 1"
                                    ).fetchall() == [("merge-0", "merge-1"), ("seed-0", "merge-1")]
        write(repo, "web", "merge-1", "Seed lesson 0")  # another writer takes the key: split
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


def test_a_full_update_goes_on_from_the_last_distill(repo: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Lessons the index cannot append (two at once that correct each other) are read
    in full, but the fold goes on from the replay the last distill kept, and only the
    files the index has not seen are read for what appending needs; the rows are a
    rebuild's. A file seen before that changed is read again with all the rest."""
    for i in range(4):
        write(repo, "api", f"seed-{i}", f"Seed lesson {i}", refs=["README"])
    journal = Journal(repo, tmp_path)
    try:
        proc = jmem(repo, "distill")
        assert proc.returncode == 0, proc.stderr
        write(repo, "web", "appended", "A lesson appended after the distill")
        assert journal.check(True, monkeypatch) == 1
        folds: list[object] = []
        whole: list[int] = []  # the index under test read every file (not the rebuild)
        real_fold, real_all = refresh.kept_fold, refresh._remember_all
        monkeypatch.setattr(refresh, "kept_fold",
                            lambda *a: folds.append(real_fold(*a)) or folds[-1])
        monkeypatch.setattr(refresh, "_remember_all",
                            lambda *a: whole.extend([1] * (a[0] is journal.conn))
                            or real_all(*a))
        write(repo, "web", "two-a", "First of two new files")
        write(repo, "web", "two-b", "Second of two, a correction", supersedes=["two-a"])
        journal.check(False, monkeypatch)
        (fold,) = folds
        assert fold.resumed == 3 and not whole  # type: ignore[attr-defined]
        (path,) = (repo / ".claude/agent-memory/api/journal").glob("*seed-lesson-0*")
        tmp = path.with_name(".edit.tmp")
        tmp.write_text(path.read_text().replace("Seed lesson 0", "Seed lesson 0, edited"))
        tmp.replace(path)
        journal.check(False, monkeypatch)
        assert whole == [1]
    finally:
        journal.conn.close()


def test_a_distill_brings_the_index_up_to_date_with_its_fold(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lessons the index cannot append (two at once, one correcting the other, and one
    dated among the indexed ones) are folded by the post-commit hook's distill
    (`--if-due`: the old lesson makes it due), which brings the index up to date from
    its own fold: the next lesson is appended, and the rows are a rebuild's. A distill
    run by hand (somebody waits for it), or on another date, leaves the index alone."""
    from journal_mem.recall import index

    def signed() -> str:
        return str(journal.conn.execute(
            "SELECT value FROM meta WHERE name = 'signature'").fetchone()[0])

    write(repo, "api", "seed", "Seed lesson", refs=["README"])
    journal = Journal(repo, tmp_path)
    try:
        write(repo, "web", "two-a", "First of two new files")
        write(repo, "web", "two-b", "Second of two, a correction", supersedes=["two-a"])
        before = signed()
        for args in (["--date", "2031-01-01"], []):
            proc = jmem(repo, "distill", *args)
            assert proc.returncode == 0, proc.stderr
            assert signed() == before  # not the hook's distill: not touched
        write(repo, "api", "old", "A lesson of last spring",
              created=dt.datetime(2026, 5, 1, tzinfo=dt.UTC))
        proc = jmem(repo, "distill", "--if-due")
        assert proc.returncode == 0 and "distilled" in proc.stdout, proc.stdout
        ctx = open_context(str(repo))
        assert index.current(journal.conn, index.signature(ctx.layout, DAY))
        assert {"two-b", "old"} <= {str(r[0]) for r in rows(journal.conn)}
        write(repo, "api", "after", "A lesson after the distill")
        assert journal.check(True, monkeypatch) == 1
    finally:
        journal.conn.close()


def test_a_hook_distill_not_due_brings_the_index_up_to_date(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lessons the index cannot append (two at once, one correcting the other: as a pull
    brings them) below the distill's threshold: the post-commit hook's distill is not
    due, and brings the index up to date itself (nobody waits for it), so the agent's
    next lesson is appended; its rows are a rebuild's."""
    from journal_mem.recall import index

    write(repo, "api", "seed", "Seed lesson", refs=["README"])
    journal = Journal(repo, tmp_path)
    try:
        write(repo, "web", "two-a", "First of two new files")
        write(repo, "web", "two-b", "Second of two, a correction", supersedes=["two-a"])
        proc = jmem(repo, "distill", "--if-due")
        assert proc.returncode == 0 and "not due" in proc.stdout, proc.stdout
        ctx = open_context(str(repo))
        assert index.current(journal.conn, index.signature(ctx.layout, DAY))
        write(repo, "api", "after", "A lesson after the hook")
        assert journal.check(True, monkeypatch) == 1
        assert {"two-b", "after"} <= {str(r[0]) for r in rows(journal.conn)}
    finally:
        journal.conn.close()


def test_a_distill_makes_no_index(repo: Path) -> None:
    write(repo, "api", "seed", "Seed lesson", created=dt.datetime(2026, 5, 1, tzinfo=dt.UTC))
    proc = jmem(repo, "distill", "--if-due")
    assert proc.returncode == 0 and "distilled" in proc.stdout, proc.stdout
    assert not Path(index_path(open_context(str(repo)).layout)).exists()
    write(repo, "api", "new", "A lesson, not due")
    proc = jmem(repo, "distill", "--if-due")
    assert proc.returncode == 0 and "not due" in proc.stdout, proc.stdout
    assert not Path(index_path(open_context(str(repo)).layout)).exists()


def test_a_commit_of_the_pending_entries_is_asked_of_them_alone(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index keeps which of its entries are not committed yet (from HEAD's tree at a
    full update, then each one appended): a commit of entries is asked of those alone,
    not of every indexed entry (at 100k lessons, listing the journal's tree was a third
    of the first `write` after a distill). An entry appended and left out of the commit
    still makes the next update read the journal."""
    for i in range(3):
        write(repo, "api", f"seed-{i}", f"Seed lesson {i}")
    git(repo, "add", "-A", ".claude")
    git(repo, "commit", "-q", "-m", "seeds")
    write(repo, "api", "pending-seed", "A lesson not committed at the full update")
    journal = Journal(repo, tmp_path)
    asked: list[bool | None] = []
    real = refresh._held
    monkeypatch.setattr(refresh, "_held", lambda *a: asked.append(real(*a)) or asked[-1])

    def uncommitted() -> list[str]:
        return [name.rsplit("-", 1)[0].split("-", 3)[-1] for (name,) in journal.conn.execute(
            "SELECT rel FROM uncommitted ORDER BY rel")]

    try:
        assert uncommitted() == ["a-lesson-not-committed-at-the-full-update"]
        folder = repo / ".claude/agent-memory/web/journal"
        for step in range(3):
            write(repo, "web", f"pending-{step}", f"Lesson pending {step}")
            assert journal.check(True, monkeypatch) == 1
            assert len(uncommitted()) == 2  # with the seed, then the last "after" lesson
            git(repo, "add", "-A", ".claude")
            git(repo, "commit", "-q", "-m", f"lessons {step}")
            write(repo, "web", f"after-{step}", f"Lesson after commit {step}")
            assert journal.check(True, monkeypatch) == 1
            assert asked[-1] is True and uncommitted() == [f"lesson-after-commit-{step}"]
        before = set(folder.glob("*.md"))
        write(repo, "web", "left-out", "Lesson left out of the next commit")
        assert journal.check(True, monkeypatch) == 1
        (left,) = set(folder.glob("*.md")) - before
        git(repo, "add", "-A", ".claude")
        git(repo, "reset", "-q", "--", str(left))
        git(repo, "commit", "-q", "-m", "all but one")
        write(repo, "web", "after-left", "Lesson after a commit that left one out")
        journal.check(False, monkeypatch)
        assert asked == [True, True, True, False]
        assert sorted(uncommitted()) == ["lesson-after-a-commit-that-left-one-out",
                                         "lesson-left-out-of-the-next-commit"]
    finally:
        journal.conn.close()


def test_a_correction_is_appended_where_the_rows_say_all_it_changes(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lesson that supersedes, retracts or drops keys is folded onto the rows when each
    key it names has a row and no other key of its title (no merge behind the row);
    otherwise, and for corrections among several new files, the journal is read."""
    write(repo, "api", "port", "The cache listens on port 6380")
    write(repo, "web", "port", "The cache listens on port 6380, web too")  # two holders
    write(repo, "api", "shared", "Shared fact for everyone", applies_to=["all"])
    write(repo, "api", "mine", "A fact only api holds")
    write(repo, "web", "twin-a", "Twin title")
    write(repo, "web", "twin-b", "Twin title")
    write(repo, "web", "twin-c", "Twin title")  # merges twin-a and twin-b into it
    write(repo, "api", "expired", "A fact that expired", valid_until="2000-01-01")
    journal = Journal(repo, tmp_path)
    try:
        write(repo, "web", "port-2", "The cache listens on port 6390", supersedes=["port"])
        assert journal.check(True, monkeypatch) == 2
        held = dict(journal.conn.execute("SELECT key, holders FROM facts").fetchall())
        assert "port" not in held and held["port-2"] == "api web"
        write(repo, "web", "drop-shared", "web no longer needs this", drops=["shared"])
        assert journal.check(True, monkeypatch) == 1  # web off its holders, the row stays
        write(repo, "api", "drop-mine", "Dropped by its last holder", drops=["mine"])
        assert journal.check(True, monkeypatch) == 1  # nobody holds it: gone
        write(repo, "web", "drop-nothing", "Not web's to drop", drops=["port-2", "nope"])
        journal.check(True, monkeypatch)
        write(repo, "api", "fix-both", "Both at once", supersedes=["shared"],
              retracts=["shared", "unknown-key"])  # superseded first: holders pass on
        assert journal.check(True, monkeypatch) == 2
        write(repo, "api", "fix-both", "A retraction reusing a live key", retracts=["port-2"])
        assert journal.check(True, monkeypatch) == 1
        write(repo, "api", "self", "Naming itself", supersedes=["self"], retracts=["self"])
        journal.check(True, monkeypatch)
        # the rows cannot say: a merge behind the row, a live fact with no row
        write(repo, "api", "fix-twin", "Twin corrected", supersedes=["twin-c"])
        journal.check(False, monkeypatch)  # twin-b now stands for twin-a
        write(repo, "api", "fix-twin-2", "Retract a merged one", retracts=["twin-a"])
        journal.check(False, monkeypatch)
        write(repo, "api", "fix-twin-3", "Retract the last twin", retracts=["twin-b"])
        assert journal.check(True, monkeypatch) == 1  # nothing merged with it any more
        write(repo, "api", "fix-expired", "An expired fact corrected", supersedes=["expired"])
        journal.check(False, monkeypatch)
        write(repo, "web", "two-a", "First of two new files")
        write(repo, "web", "two-b", "Second of two, a correction", retracts=["two-a"])
        journal.check(False, monkeypatch)
        write(repo, "api", "late", "A correction to a lesson retracted before",
              supersedes=["port"])
        journal.check(False, monkeypatch)  # seen, no row: not live, or live by a rule
    finally:
        journal.conn.close()


@pytest.mark.parametrize("seed", [0, 5, 7, 16, 23, 27, 104])  # each broke a rule once
def test_random_corrections_give_the_rows_of_a_rebuild(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Lessons of two writers on a few keys and titles, each a fact, a supersede, a
    retraction, a drop, or for everyone, some expired: after each one the kept index
    holds the rows of a rebuild, whichever way it took."""
    import random

    rng = random.Random(seed)
    keys = [f"k{n}" for n in range(6)]
    titles = ["Port is 6380", "Port is 6390", "Retry limit is 3", "Use the staging DB"]
    write(repo, "api", "k0", titles[0])
    journal = Journal(repo, tmp_path)
    try:
        for step in range(45):
            fields: dict[str, object] = {}
            kind = rng.choice(["fact", "fact", "supersedes", "retracts", "drops", "all"])
            if kind in ("supersedes", "retracts", "drops"):
                fields[kind] = rng.sample(keys, rng.choice([1, 1, 2]))
            elif kind == "all":
                fields["applies_to"] = ["all"]
            if rng.random() < 0.1:
                fields["valid_until"] = "2000-01-01"
            write(repo, rng.choice(["api", "web"]), rng.choice(keys),
                  f"{rng.choice(titles)} ({step % 3})" if rng.random() < 0.7
                  else rng.choice(titles), **fields)
            journal.check(None, monkeypatch)
        # most were appended; two lessons that correct each other's keys (a cycle) leave
        # every later one to the full update (seeds 5 and 27: 9 and 3 of 45)
        assert journal.appended >= 3
    finally:
        journal.conn.close()


def test_switching_a_loop_point_on_by_its_variable_keeps_the_index(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An orchestrator runs `JMEM_HOOKS_PRE_WORK=1 jmem hook pre-work` between the agents'
    plain `recall`s: the index stays current. A variable the facts depend on does not."""
    write(repo, "api", "seed", "Seed lesson citing a file not there", refs=["no/such.py"])
    journal = Journal(repo, tmp_path)
    try:
        for name, value in (("JMEM_HOOKS_PRE_WORK", "1"), ("JMEM_LOOP_PACK_TOKENS", "900"),
                            ("JMEM_AGENT", "web"), ("JMEM_DISABLE", "0"),
                            ("JMEM_CONSOLIDATE_COMMAND", "true")):
            monkeypatch.setenv(name, value)
            assert journal.check(True, monkeypatch) == 0
        assert rows(journal.conn) == []  # its ref is gone: dropped
        monkeypatch.setenv("JMEM_DISTILL_STALE_REFS", "flag")
        journal.check(False, monkeypatch)
        assert [r[0] for r in rows(journal.conn)] == ["seed"]  # flagged, kept
    finally:
        journal.conn.close()


def test_an_index_signed_the_old_way_is_brought_up_to_date(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Signatures were JSON, then one Python literal, before they were lines (the date,
    the other inputs, a line per agent folder): an index signed an older way, or with
    anything that is no signature, takes a full update, never a crash; each gives the
    rows of a rebuild, and appends again after it."""
    write(repo, "api", "seed", "Seed lesson")
    journal = Journal(repo, tmp_path)
    try:
        signed = journal.conn.execute("SELECT value FROM meta WHERE name = 'signature'")
        day, inputs, *rows = signed.fetchone()[0].split("\n")
        folders = [row.split(" ") for row in rows if row]
        base = [ast.literal_eval(inputs)[0], day, *ast.literal_eval(inputs)[1:]]
        for old in (json.dumps([base, dict(folders)], sort_keys=True),
                    repr([base, [(a, int(m)) for a, m in folders]]), "{not a literal",
                    "[1, 2, 3]", f"{day}\n{inputs}\napi x\n", f"{day}\n{inputs}\napi 1",
                    f"{day}\n{inputs}\napi \u00b2\n",  # a digit to isdigit, not to int
                    f"{day}\nnot inputs\n", "\n\n\n", ""):
            journal.conn.execute("UPDATE meta SET value = ? WHERE name = 'signature'", (old,))
            write(repo, "api", f"after-{journal.step}", "A lesson after the upgrade")
            journal.check(False, monkeypatch)
        write(repo, "api", "appended", "A lesson appended again")
        assert journal.check(True, monkeypatch) == 1
    finally:
        journal.conn.close()


@pytest.mark.parametrize("value", ["plain", "quotes ' \" and \\ backslash", "new\nline\ttab",
                                   "ünïcödé ✓", "surrogate \udcff escaped"])
def test_a_signature_reads_back_as_the_inputs_it_was_made_of(
        repo: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """The signature holds the date, a Python literal of the config's bytes and the
    settings' variables (any string a user can export) and each journal folder's mtime:
    it reads back as exactly those, or the append path would compare the wrong inputs."""
    from journal_mem.recall import index

    write(repo, "api", "seed", "Seed lesson")
    layout = open_context(str(repo)).layout  # the config loaded: any string from here on
    monkeypatch.setenv("JMEM_DISTILL_BRANCH", value)
    assert "JMEM_DISTILL_BRANCH" in index._FACT_SETTINGS
    base, folders = index._parts(layout, DAY)
    assert refresh._signed(index.signature(layout, DAY)) == (base, folders)
    sig = index.signature(layout, DAY)  # stored as TEXT: no lone surrogate left in it
    assert sqlite3.connect(":memory:").execute("SELECT ?", (sig,)).fetchone() == (sig,)


def later(days: int) -> str:
    return (DAY + dt.timedelta(days=days)).isoformat()


def test_a_new_day_keeps_appending_and_drops_the_facts_due(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first lesson of a day appended like any other: the facts whose time is up by
    then (the day after their `valid_until`, an episodic record past its time) leave the
    rows without the journal being read, unless one is merged with a same title (who
    wins is judged again) or the date went back."""
    ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=88)  # the default TTL is 90 days
    write(repo, "api", "seed", "Seed lesson that never expires")
    write(repo, "api", "window", "A lesson valid for three days", valid_until=later(3))
    write(repo, "web", "run", "A nightly run, 88 days ago", type="episodic", created=ago)
    write(repo, "api", "twin-a", "Twin title", valid_until=later(10))
    write(repo, "api", "twin-b", "Twin title")  # the latest: twin-a merged into it
    journal = Journal(repo, tmp_path)
    try:
        assert journal.check(True, monkeypatch, DAY + dt.timedelta(days=1)) == 0
        write(repo, "api", "new", "A lesson on the second day", valid_until=later(5))
        assert journal.check(True, monkeypatch, DAY + dt.timedelta(days=2)) == 1
        assert journal.check(True, monkeypatch, DAY + dt.timedelta(days=3)) == 1  # the run
        assert journal.check(True, monkeypatch, DAY + dt.timedelta(days=4)) == 1  # window
        write(repo, "api", "new", "Restated, no end now")
        assert journal.check(True, monkeypatch, DAY + dt.timedelta(days=5)) == 1
        assert journal.check(True, monkeypatch, DAY + dt.timedelta(days=7)) == 0
        assert "new" in [r[0] for r in rows(journal.conn)]  # its earlier end no longer counts
        journal.check(False, monkeypatch, DAY + dt.timedelta(days=11))  # twin-a due: merged
        journal.check(False, monkeypatch, DAY + dt.timedelta(days=9))  # an earlier date:
        journal.check(False, monkeypatch, DAY + dt.timedelta(days=30))  # twin-a back, due
        assert journal.check(True, monkeypatch, DAY + dt.timedelta(days=31)) == 0
    finally:
        journal.conn.close()


@pytest.mark.parametrize("seed", range(6))
def test_random_days_give_the_rows_of_a_rebuild(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Lessons that end on random days, episodic records of random ages, same titles of
    one writer and corrections, checked on days that go on by random steps (now and then
    back): whichever way the index took, it holds the rows of a rebuild on that day."""
    import random

    rng = random.Random(seed)
    keys = [f"k{n}" for n in range(8)]
    titles = ["Port is 6380", "Retry limit is 3", "Use the staging DB", "Deploy on Fridays"]
    write(repo, "api", "k0", titles[0])
    journal = Journal(repo, tmp_path)
    day = 0
    try:
        for step in range(40):
            fields: dict[str, object] = {}
            kind = rng.choice(["fact", "fact", "fact", "supersedes", "retracts", "episodic"])
            if kind in ("supersedes", "retracts"):
                fields[kind] = rng.sample(keys, 1)
            elif kind == "episodic":
                fields["type"] = "episodic"
                fields["created"] = (dt.datetime.now(dt.UTC)
                                     - dt.timedelta(days=rng.randint(80, 95) - day))
            if rng.random() < 0.4:
                fields["valid_until"] = later(day + rng.randint(-1, 6))
            write(repo, rng.choice(["api", "web"]), rng.choice(keys),
                  rng.choice(titles) if rng.random() < 0.5 else f"{rng.choice(titles)} {step}",
                  **fields)
            day = max(0, day + rng.choice([0, 0, 1, 1, 2, 3, -1]))
            journal.check(None, monkeypatch, DAY + dt.timedelta(days=day))
        assert journal.appended >= 5
    finally:
        journal.conn.close()
