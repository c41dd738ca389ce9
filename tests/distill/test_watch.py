"""`jmem watch` on real file events: bursts, writes during a distill, failures,
the outbox, signals. Every wait is bounded; nothing sleeps long."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from distill_helpers import lesson
from guardkit import lesson as lesson_text
from helpers import base_env, git, jmem

WAIT_S = 30.0  # an upper bound, not a delay: waits end as soon as the line appears


class Watch:
    """A running `jmem watch` whose output lines are read as they come."""

    def __init__(self, cwd: Path, *args: str, **env: str) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "journal_mem", "watch", "--debounce", "0.3", *args],
            cwd=cwd, env=base_env(**env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.expect("watching")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))

    def expect(self, text: str, timeout: float = WAIT_S) -> str:
        """Wait for the next line holding `text`; return it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self._queue.get(timeout=0.05)
            except queue.Empty:
                continue
            self.lines.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} in {timeout} s:\n" + "\n".join(self.lines))

    def drain(self, quiet: float = 1.0) -> None:
        """Read what comes until nothing has come for `quiet` seconds."""
        while True:
            try:
                self.lines.append(self._queue.get(timeout=quiet))
            except queue.Empty:
                return

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=WAIT_S)
        self.drain(0.2)
        return code

    def count(self, text: str) -> int:
        return sum(text in line for line in self.lines)


def test_a_burst_of_writes_makes_one_distill(repo: Path) -> None:
    watch = Watch(repo, JMEM_DISTILL_THRESHOLD="3")
    try:
        for i in range(6):
            lesson(repo, "api", f"burst-{i}", i)
        watch.expect("committed")
        watch.drain(1.0)  # a second distill, if any, would show up here
    finally:
        code = watch.stop()
    assert code == 0
    assert watch.count(": due, distilling") == 1
    assert watch.count("6 new lessons folded") == 1
    assert watch.lines[-1].endswith("jmem watch: stopped")
    memory = (repo / ".claude/agent-memory/api/MEMORY.md").read_text()
    assert all(f"[burst-{i}]" in memory for i in range(6))


def test_writes_during_a_distill_make_exactly_one_more(repo: Path) -> None:
    # A git command of the main checkout that is running (our pre-commit shim marks its
    # pid busy) holds the distill commit back; it files a lesson just before it ends,
    # so the lesson lands mid-distill.
    marker = repo.parent / "hook-ran"
    entry = repo / ".claude/agent-memory/web/journal/2026-01-02-mid-distill.md"
    text = lesson_text(agent="web", title="Written while the distill ran")
    script = (f"sleep 4\ncat > '{entry}' <<'EOF'\n{text}EOF\ntouch '{marker}'\n")
    running = subprocess.Popen(["sh", "-c", script])
    busy = repo / ".git" / "journal-mem" / "busy"
    busy.mkdir(parents=True, exist_ok=True)
    (busy / str(running.pid)).touch()
    watch = Watch(repo, JMEM_DISTILL_THRESHOLD="1")
    try:
        lesson(repo, "api", "first", 0)
        watch.expect("committed")
        watch.expect("committed")
        watch.drain(1.0)
    finally:
        running.wait()
        assert watch.stop(signal.SIGINT) == 0
    assert marker.exists()
    assert watch.count(": due, distilling") == 2
    memory = (repo / ".claude/agent-memory/web/MEMORY.md").read_text()
    assert "Written while the distill ran" in memory


def test_a_failing_distill_is_logged_and_watching_goes_on(repo: Path) -> None:
    merge_head = repo / ".git" / "MERGE_HEAD"
    merge_head.write_text(git(repo, "rev-parse", "HEAD").stdout)  # "in the middle of a merge"
    watch = Watch(repo, JMEM_DISTILL_THRESHOLD="1")
    try:
        lesson(repo, "api", "during-merge", 0)
        watch.expect("distill failed (still watching)")
        merge_head.unlink()
        lesson(repo, "api", "after-merge", 1)
        watch.expect("committed")
    finally:
        assert watch.stop() == 0
    memory = (repo / ".claude/agent-memory/api/MEMORY.md").read_text()
    assert "[during-merge]" in memory and "[after-merge]" in memory


def test_once_drains_the_outbox_and_exits(repo: Path, worktree: Path) -> None:
    watch = Watch(repo, "--once", JMEM_DISTILL_THRESHOLD="1")
    proc = jmem(worktree, "write", "--agent", "web", "--topic", "build", "--outbox",
                "--title", "Sandboxed lesson reaches memory")
    assert proc.returncode == 0, proc.stderr
    assert watch.proc.wait(timeout=WAIT_S) == 0
    watch.drain(0.2)
    assert watch.count("outbox: moved into the journal") == 1
    memory = (repo / ".claude/agent-memory/web/MEMORY.md").read_text()
    assert "Sandboxed lesson reaches memory" in memory
    assert not list((repo / ".git/journal-mem/outbox").glob("*/*.md"))


def test_not_due_writes_wait_for_the_threshold(repo: Path) -> None:
    watch = Watch(repo, JMEM_DISTILL_THRESHOLD="2")
    try:  # `jmem write` stamps now: the max age (24 h) is far off
        assert jmem(repo, "write", "--agent", "api", "--topic", "t",
                    "--title", "One").returncode == 0
        watch.expect("not due (1 pending, threshold 2")
        assert jmem(repo, "write", "--agent", "api", "--topic", "t",
                    "--title", "Two").returncode == 0
        watch.expect("committed")
    finally:
        assert watch.stop() == 0
    assert watch.count(": due, distilling") == 1
