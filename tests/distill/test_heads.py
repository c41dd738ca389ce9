"""A memory file whose stamp has not moved since the last distill read its head is not
read again to tell whether the distiller wrote it (`found.Heads`); any write moves
the stamp, so a file put in its place is still read and judged.

In-process distills on a real repository, with the settle time of a stamp set to
nothing where a test needs a stamp kept at once (a real distill keeps only stamps two
seconds old).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from distill_helpers import MEM, lesson

from journal_mem import repo as repo_module
from journal_mem.distill import distiller
from journal_mem.distill.files import fs_clock
from journal_mem.gitops import indexlock
from journal_mem.importers import found
from journal_mem.importers.found import Heads, memory_files

ALPHA = "api/topics/alpha.md"
BETA = "api/topics/beta.md"


def _distill(main: Path, **options: bool) -> distiller.Outcome:
    return distiller.distill(repo_module.open_context(str(main)), distiller.Options(**options))


@pytest.fixture
def heads_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every memory file whose head `memory_files` reads (memory-root-relative)."""
    seen: list[str] = []
    read = found._read

    def spy(path: str, size: int = -1) -> str | None:
        if size == found.HEAD_BYTES:
            seen.append(path.split(f"{MEM}/", 1)[1])
        return read(path, size)

    monkeypatch.setattr(found, "_read", spy)
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    return seen


def _two_topics(main: Path) -> None:
    lesson(main, "api", "a1", topic="alpha", title="Alpha lesson one")
    lesson(main, "api", "b1", topic="beta", title="Beta lesson one")


def test_a_settled_file_s_head_is_read_once(
        repo: Path, heads_read: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Heads, "SETTLED_NS", 0)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "b2", 5, topic="beta", title="Beta lesson two")
    heads_read.clear()
    assert _distill(repo).status == "distilled"  # rewrites beta and MEMORY.md
    assert ALPHA in heads_read  # written by the first distill, not kept yet
    heads_read.clear()
    lesson(repo, "api", "b3", 6, topic="beta", title="Beta lesson three")
    assert _distill(repo).status == "distilled"
    assert ALPHA not in heads_read  # its head as the last distill read it
    assert BETA in heads_read and "api/MEMORY.md" in heads_read  # rewritten since


def test_an_unsettled_file_s_head_is_not_kept(
        repo: Path, heads_read: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written less than the settle time ago (two seconds; an hour here, so that a
    slow machine cannot let it settle between the distills) is read again by every
    distill: a write within its clock's tick could leave its stamp as it was."""
    monkeypatch.setattr(Heads, "SETTLED_NS", 3600 * 10**9)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    assert _distill(repo).status == "unchanged"
    heads_read.clear()
    assert _distill(repo).status == "unchanged"
    assert ALPHA in heads_read


def test_a_hand_written_file_put_in_place_of_a_distilled_one_is_imported(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The distilled alpha topic file, rewritten in place by hand to the same size with its
    mtime put back: the write moved its ctime, so its head is read again, found not the
    distiller's, and its facts imported as lessons (kept, never overwritten unread)."""
    monkeypatch.setattr(Heads, "SETTLED_NS", 0)
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    lesson(repo, "api", "b2", 5, topic="beta", title="Beta lesson two")
    assert _distill(repo).status == "distilled"  # alpha's head kept as the distiller's
    target = repo / MEM / ALPHA
    was = target.stat()
    text = "# Alpha notes\n\n- Run the alpha suite with --seed 7 before a release\n"
    target.write_text(text + "x" * (was.st_size - len(text) - 1) + "\n")
    os.utime(target, ns=(was.st_atime_ns, was.st_mtime_ns))
    now = target.stat()
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (
        was.st_size, was.st_mtime_ns, was.st_ino)
    out = _distill(repo)
    assert f"{MEM}/{ALPHA}: not written by jmem: its facts imported as lessons" in out.adopted
    journal = "".join(p.read_text() for p in (repo / MEM / "api" / "journal").glob("*.md"))
    assert "alpha suite with --seed 7" in journal


def test_the_kept_heads_are_those_of_their_memory_root_and_files(repo: Path) -> None:
    """Heads kept under another memory root are not used; those of files gone are
    dropped."""
    _two_topics(repo)
    assert _distill(repo).status == "distilled"
    layout = repo_module.open_context(str(repo)).layout
    later = fs_clock(layout) + 10 * Heads.SETTLED_NS  # every stamp settled by then
    heads = Heads(layout, later)
    files = memory_files(layout, heads=heads)
    heads.save()
    assert {f.rel for f in files} == set(Heads(layout, later).kept) >= {ALPHA, BETA}
    assert memory_files(layout) == files
    (repo / MEM / BETA).unlink()
    heads = Heads(layout, later)
    memory_files(layout, heads=heads)
    heads.save()
    assert BETA not in Heads(layout, later).kept
    heads.key = ("heads", "/elsewhere", heads.key[2])
    heads.save()
    assert Heads(layout, later).kept == {}
