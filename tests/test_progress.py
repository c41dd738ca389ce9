"""Progress bars: on stderr when it is a terminal, nowhere else."""

from __future__ import annotations

import io
import os
import select
import struct
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from distill_helpers import lesson

from journal_mem import main as entry
from journal_mem import progress

fcntl = pytest.importorskip("fcntl", reason="a pseudo-terminal is POSIX (no pty on Windows)")
pty = pytest.importorskip("pty", reason="a pseudo-terminal is POSIX (no pty on Windows)")
termios = pytest.importorskip("termios", reason="a pseudo-terminal is POSIX")

LESSONS = 60


@pytest.fixture
def journal(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for i in range(LESSONS):
        lesson(repo, "api" if i % 2 else "web", f"k{i}", i, name=f"n{i}", title=f"Lesson {i}")
    monkeypatch.chdir(repo)
    monkeypatch.setattr(progress, "DELAY", 0.0)  # show at once: the test journal is small
    monkeypatch.setattr(progress, "_allowed", [False])
    return repo


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], int]]:
    """Call it in the test (pytest swaps stderr back after fixtures run): stderr becomes a
    pseudo-terminal; returns the fd its output is read from."""
    fds: list[int] = []
    streams: list[io.TextIOWrapper] = []

    def attach() -> int:
        master, slave = pty.openpty()
        # a terminal 80 columns wide, as a real one reports (a fresh pty says 0 x 0)
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        # like Python's own stderr: line-buffered text, written through to the terminal
        stream = io.TextIOWrapper(open(slave, "wb", buffering=0),  # noqa: SIM115
                                  line_buffering=True, write_through=True)
        monkeypatch.setattr(sys, "stderr", stream)
        fds.append(master)
        streams.append(stream)
        return master

    yield attach
    for stream in streams:
        stream.close()
    for fd in fds:
        os.close(fd)


def _read(fd: int) -> str:
    out = b""
    while select.select([fd], [], [], 0.2)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out.decode("utf-8", "replace")


def test_a_rebuild_shows_progress_on_a_terminal(journal: Path,
                                                terminal: Callable[[], int]) -> None:
    tty = terminal()
    assert entry.main(["distill", "--rebuild", "--no-commit"]) == 0
    shown = _read(tty)
    assert "reading the journal:" in shown and f"| 0/{LESSONS} [" in shown
    assert entry.main(["recall", "--rebuild", "lesson"]) == 0
    assert "indexing facts" in _read(tty)


def test_json_shows_no_progress_even_on_a_terminal(journal: Path,
                                                   terminal: Callable[[], int]) -> None:
    tty = terminal()
    assert entry.main(["distill", "--rebuild", "--no-commit", "--json"]) == 0
    assert entry.main(["recall", "--rebuild", "--json", "lesson"]) == 0
    assert _read(tty) == ""


def test_no_terminal_no_progress(journal: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """CI logs, the background distill's log file, a pipe: nothing extra."""
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert entry.main(["distill", "--rebuild", "--no-commit"]) == 0
    assert entry.main(["recall", "--rebuild", "lesson"]) == 0
    assert "reading the journal" not in err.getvalue() + capsys.readouterr().err
    assert "indexing facts" not in err.getvalue()


def test_track_returns_the_items_untouched_when_no_bar_is_wanted() -> None:
    items = [1, 2, 3]
    assert progress.track(items, "x") is items
