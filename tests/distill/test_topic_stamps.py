"""A topic file the render reused is read only when it may have changed (its stamp).

In-process distills on a real repository, so that the settle time of a stamp
(`files.STAMP_AFTER_NS`) can be set to nothing: a real distill stamps only
files left alone for two seconds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from distill_helpers import MEM, lesson

from journal_mem import repo as repo_module
from journal_mem.distill import distiller, files
from journal_mem.gitops import indexlock
from journal_mem.journal.cache import TopicStore
from journal_mem.journal.render import code_key

ALPHA = "api/topics/alpha.md"
BETA = "api/topics/beta.md"


def _distill(main: Path, **options: bool) -> distiller.Outcome:
    return distiller.distill(repo_module.open_context(str(main)), distiller.Options(**options))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every distilled file `_changed` reads from disk."""
    seen: list[str] = []
    read = files.read_distilled

    def spy(layout: object, rel: str) -> bytes | None:
        seen.append(rel)
        return read(layout, rel)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "read_distilled", spy)
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    return seen


def _two_topics(main: Path) -> None:
    lesson(main, "api", "a1", topic="alpha", title="Alpha lesson one")
    lesson(main, "api", "b1", topic="beta", title="Beta lesson one")


def test_a_settled_reused_topic_file_is_not_read_again(
        repo: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "STAMP_AFTER_NS", 0)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "b2", 5, topic="beta", title="Beta lesson two")
    reads.clear()
    assert _distill(repo).status == "distilled"
    assert ALPHA not in reads  # reused, and as the last distill left it
    assert BETA in reads  # rendered again: compared with the disk
    assert _distill(repo, check=True).status == "unchanged"


def test_a_reused_topic_file_changed_by_hand_is_read_and_found_changed(
        repo: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Same size, mtime put back: the write still moved its ctime, so it is read."""
    monkeypatch.setattr(files, "STAMP_AFTER_NS", 0)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    target = repo / MEM / ALPHA
    was = target.stat()
    text = target.read_bytes()
    target.write_bytes(text.replace(b"Alpha lesson one", b"Alpha lesson 0ne"))
    os.utime(target, ns=(was.st_atime_ns, was.st_mtime_ns))
    assert target.stat().st_size == was.st_size and target.stat().st_mtime_ns == was.st_mtime_ns
    reads.clear()
    out = _distill(repo, check=True)
    assert ALPHA in reads and out.status == "would-change" and ALPHA in out.written


def test_a_reused_topic_file_deleted_by_hand_is_written_again(
        repo: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "STAMP_AFTER_NS", 0)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    text = (repo / MEM / BETA).read_bytes()
    (repo / MEM / BETA).unlink()
    out = _distill(repo, check=True)
    assert out.status == "would-change" and BETA in out.written
    lesson(repo, "api", "a2", 5, topic="alpha", title="Alpha lesson two")
    assert _distill(repo).status == "distilled"
    assert (repo / MEM / BETA).read_bytes() == text


def test_a_file_written_just_now_is_kept_by_its_digest(repo: Path, reads: list[str]) -> None:
    """A change within the same tick of the file system's clock could leave a stamp as
    it was: a file is stamped only once it has been left alone for two seconds. Until
    then it is kept by the digest of the bytes it was rendered as, and the next distill
    compares the file's bytes with it instead of rendering it again."""
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    layout = repo_module.open_context(str(repo)).layout
    store = TopicStore(layout.state_dir, code_key())
    token, topics = store.token, store.topics
    assert token and topics
    assert all(isinstance(stamp, bytes) for value in topics.values() for _, stamp in value[2])
    lesson(repo, "api", "b2", 5, topic="beta", title="Beta lesson two")
    reads.clear()
    assert _distill(repo).status == "distilled"
    assert ALPHA not in reads and BETA in reads  # reused and as rendered; rendered anew
    assert _distill(repo, check=True, rebuild=True).status == "unchanged"


def test_distills_seconds_apart_do_not_render_a_reused_topic_again(
        repo: Path, reads: list[str]) -> None:
    """Three distills, each within the two seconds that keep a file unstamped: a topic the
    second distill reused (found to hold its digest) keeps that digest, so the third
    neither renders it again nor reads it to compare (an agent committing every few
    seconds re-rendered each such topic at every other distill)."""
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    for n in (2, 3):
        lesson(repo, "api", f"b{n}", n * 5, topic="beta", title=f"Beta lesson {n}")
        reads.clear()
        assert _distill(repo).status == "distilled"
        assert ALPHA not in reads and BETA in reads
    layout = repo_module.open_context(str(repo)).layout
    topics = TopicStore(layout.state_dir, code_key()).topics
    assert all(stamp is not None for value in topics.values() for _, stamp in value[2])
    assert _distill(repo, check=True, rebuild=True).status == "unchanged"


def test_a_carried_digest_still_finds_a_change_within_its_tick(
        repo: Path, reads: list[str]) -> None:
    """The digest a reused topic carries to the next distill is the one its file was
    checked against: a hand edit after that distill (same size, mtime put back) is
    still found."""
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "b2", 5, topic="beta", title="Beta lesson two")
    assert _distill(repo).status == "distilled"
    target = repo / MEM / ALPHA
    was = target.stat()
    target.write_bytes(target.read_bytes().replace(b"Alpha lesson one", b"Alpha lesson 0ne"))
    os.utime(target, ns=(was.st_atime_ns, was.st_mtime_ns))
    reads.clear()
    out = _distill(repo, check=True)
    assert ALPHA in reads and out.status == "would-change" and ALPHA in out.written


def test_a_file_changed_within_its_tick_is_found_by_its_digest(
        repo: Path, reads: list[str]) -> None:
    """Same size, mtime put back, right after the distill wrote it: its bytes are not the
    ones it was rendered as, so it is rendered again and found changed (a distill that
    writes adopts the hand edit as a lesson: `distill/adopt.py`)."""
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    target = repo / MEM / ALPHA
    was = target.stat()
    text = target.read_bytes()
    target.write_bytes(text.replace(b"Alpha lesson one", b"Alpha lesson 0ne"))
    os.utime(target, ns=(was.st_atime_ns, was.st_mtime_ns))
    reads.clear()
    out = _distill(repo, check=True)
    assert ALPHA in reads and out.status == "would-change" and ALPHA in out.written


def test_stamps_are_judged_by_the_file_system_clock(
        repo: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A network file system may keep a clock of its own: with this machine's clock a
    minute ahead of it, files written just now are still not stamped."""
    import time

    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + 60_000_000_000)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    layout = repo_module.open_context(str(repo)).layout
    topics = TopicStore(layout.state_dir, code_key()).topics
    assert topics and all(isinstance(stamp, bytes)  # not stamped: kept by their digest
                          for value in topics.values() for _, stamp in value[2])
    assert abs(files.fs_clock(layout) - real()) < 5_000_000_000


def test_a_topic_rendered_by_a_no_commit_distill_is_judged_against_that_fold(
        repo: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The topic files on disk were rendered from the `--no-commit` distill's fold, not
    from the committed one the change report compares with: a fact back to its committed
    row (the pending lesson that changed it deleted) is written as it is now. (Two things
    see to it: the render compares with the rows it was rendered from, and a topic file
    git lists as changed is rendered again and compared.)"""
    monkeypatch.setattr(files, "STAMP_AFTER_NS", 0)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    pending = lesson(repo, "api", "a1", 5, topic="alpha", title="Alpha lesson one, reworded",
                     name="a1-again")
    assert _distill(repo, commit=False).status == "distilled"
    assert "reworded" in (repo / MEM / ALPHA).read_text()
    pending.unlink()  # never committed: the writer took it back
    assert _distill(repo).status == "distilled"
    assert "reworded" not in (repo / MEM / ALPHA).read_text()
    assert _distill(repo, check=True).status == "unchanged"


def test_a_reused_topic_file_keeps_its_stamp_without_being_stamped_again(
        repo: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A topic file the render reused and found as stamped keeps that stamp: it is not
    stamped again (an `lstat` of each of ~1k reused files at every distill). A file
    kept by its digest is stamped once it has settled; one written again is stamped."""
    from journal_mem.distill import folding

    monkeypatch.setattr(files, "STAMP_AFTER_NS", 0)
    stamped: list[str] = []
    settled = folding.settled_stamp

    def spy(layout: object, rel: str, now: int) -> object:
        stamped.append(rel)
        return settled(layout, rel, now)  # type: ignore[arg-type]

    monkeypatch.setattr(folding, "settled_stamp", spy)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    assert ALPHA in stamped and BETA in stamped  # written: stamped
    layout = repo_module.open_context(str(repo)).layout
    first = dict(TopicStore(layout.state_dir, code_key()).topics[("api", "alpha")][2])
    assert isinstance(first["alpha"], tuple)
    lesson(repo, "api", "b2", 5, topic="beta", title="Beta lesson two")
    stamped.clear()
    reads.clear()
    assert _distill(repo).status == "distilled"
    assert ALPHA not in stamped and ALPHA not in reads  # reused as stamped: kept
    assert BETA in stamped
    kept = TopicStore(layout.state_dir, code_key()).topics[("api", "alpha")][2]
    assert dict(kept) == first
    assert _distill(repo, check=True, rebuild=True).status == "unchanged"
