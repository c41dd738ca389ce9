"""`jmem watch`: distill when due, driven by file events (docs/DESIGN.md, "The protocol").

A watchdog observer (inotify on Linux) watches the main checkout's memory
root and the outbox. Only events naming a journal entry
(`<agent>/journal/YYYY-MM-DD-….md`) or an outbox entry count: the
distiller's own writes of MEMORY.md and topic files never wake the watcher.

The observer thread only records paths; the main thread does the rest:

* debounce: after the first event it waits until no event came for
  `debounce` seconds (at most `max_wait` in all, so a steady stream still
  distills), then evaluates once: a burst of writes is one evaluation;
* an evaluation distills when the `--if-due` condition holds (threshold or
  max age of pending lessons); it also runs at start and every `interval`
  seconds without events (max age passing, events the kernel dropped);
* paths that arrive while a distill runs are kept, so they cause exactly one
  more evaluation after it; journal files the distill itself drained from
  the outbox are not counted as new writes;
* a failing distill is logged and the watcher keeps going; a distill held
  by another process (exit 75) is retried after the next debounce;
* SIGINT/SIGTERM only set a flag (a signal handler must not take locks):
  a distill in progress finishes, then the observer stops and `watch`
  returns 0.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from journal_mem.boundary import crash_log
from journal_mem.distill.distiller import Options, Outcome, distill
from journal_mem.distill.outcome import distill_lines
from journal_mem.distill.schedule import is_due, pending
from journal_mem.errors import JournalMemError, LockHeld
from journal_mem.journal.files import is_entry_name
from journal_mem.layout import JOURNAL
from journal_mem.names import is_name
from journal_mem.repo import Context, open_context
from journal_mem.settings import env_flag

Log = Callable[[str], None]
SLICE_S = 0.1  # the main loop's longest sleep: how soon it notices a signal
COUNTED = frozenset({"created", "modified", "moved", "closed"})


@dataclass(frozen=True)
class WatchOptions:
    """The command-line options of `jmem watch`."""

    once: bool = False
    debounce: float = 1.0
    max_wait: float = 10.0
    interval: float = 60.0


class Inbox:
    """Entry paths seen by the observer thread, taken by the main thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._first = 0.0
        self._last = 0.0
        self.stopping = False  # set by signal handlers: a plain store, no lock

    def add(self, path: str) -> None:
        now = time.monotonic()
        with self._lock:
            if not self._paths:
                self._first = now
            self._paths.add(path)
            self._last = now

    def waiting(self) -> bool:
        with self._lock:
            return bool(self._paths)

    def settled(self, debounce: float, max_wait: float) -> bool:
        """True when the paths have been quiet for `debounce`, or waited `max_wait`."""
        now = time.monotonic()
        with self._lock:
            return now - self._last >= debounce or now - self._first >= max_wait

    def take(self) -> set[str]:
        with self._lock:
            paths, self._paths = self._paths, set()
            return paths


def entry_path(path: str, memory: str, outbox: str) -> bool:
    """True for a journal entry under the memory root or an entry in the outbox."""
    for top, depth in ((memory, 3), (outbox, 2)):
        if path.startswith(top + os.sep):
            parts = path[len(top) + 1:].split(os.sep)
            if len(parts) != depth or not is_name(parts[0]) or not is_entry_name(parts[-1]):
                return False
            return depth == 2 or parts[1] == JOURNAL
    return False


def _handler(inbox: Inbox, memory: str, outbox: str) -> Any:

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            if event.is_directory or event.event_type not in COUNTED:
                return
            for raw in (event.src_path, getattr(event, "dest_path", "")):
                path = os.fsdecode(raw) if raw else ""
                if path and entry_path(path, memory, outbox):
                    inbox.add(path)

    return Handler()


def _stamp() -> str:
    return dt.datetime.now().astimezone().strftime("%H:%M:%S")


class Watcher:
    """One `jmem watch` run: the observer, the inbox and the evaluation loop."""

    def __init__(self, cwd: str, opts: WatchOptions, log: Log) -> None:
        self.cwd = cwd
        self.opts = opts
        self._log = log
        self.inbox = Inbox()
        self.own: set[str] = set()  # journal paths the last distill drained itself
        self.retry_at: float | None = None
        ctx = open_context(cwd)
        self.memory = os.path.realpath(ctx.layout.main_memory)
        self.outbox = os.path.realpath(os.path.join(ctx.layout.state_dir, "outbox"))
        if not os.path.isdir(self.memory):
            raise JournalMemError(f"no memory root at {self.memory}: nothing to watch",
                                  hint="run `jmem init --agent NAME` first")
        os.makedirs(self.outbox, exist_ok=True)

    def log(self, text: str) -> None:
        for line in text.splitlines() or [""]:
            self._log(f"{_stamp()} jmem watch: {line}")

    def run(self) -> int:
        """Watch until a signal (or, with `once`, the first distill); the exit code."""

        observer = Observer()
        handler = _handler(self.inbox, self.memory, self.outbox)
        for top in (self.memory, self.outbox):
            observer.schedule(handler, top, recursive=True)
        saved = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        observer.start()
        try:
            return self._loop()
        finally:
            observer.stop()
            observer.join(timeout=10)
            for sig, old in saved.items():
                signal.signal(sig, old)
            self.log("stopped")

    def _on_signal(self, signum: int, frame: object) -> None:
        del signum, frame
        self.inbox.stopping = True

    def _loop(self) -> int:
        code = self.evaluate("start")  # the observer already runs: no write slips by
        if self.opts.once and code is not None:
            return code
        self.log(f"watching {self.memory} and {self.outbox} "
                 f"(debounce {self.opts.debounce:g} s); Ctrl-C stops")
        idle_since = time.monotonic()
        while not self.inbox.stopping:
            time.sleep(SLICE_S)
            now = time.monotonic()
            if self.inbox.waiting():
                if not self.inbox.settled(self.opts.debounce, self.opts.max_wait):
                    continue
                # a drained outbox file is gone by now; its journal copy is our own write
                fresh = {p for p in self.inbox.take() - self.own if os.path.exists(p)}
                if not fresh:
                    continue  # only the journal copies our own drain made
                reason = f"{len(fresh)} new entr{'y' if len(fresh) == 1 else 'ies'}"
            elif self.retry_at is not None and now >= self.retry_at:
                reason = "retry"
            elif now - idle_since >= self.opts.interval:
                reason = "timer"
            else:
                continue
            code = self.evaluate(reason)
            idle_since = time.monotonic()
            if self.opts.once and code is not None:
                return code
        return 0

    def evaluate(self, reason: str) -> int | None:
        """Distill if due; the distill's exit code, or None when none ran."""
        self.retry_at = None
        try:
            ctx = open_context(self.cwd)
            why_not = self._not_due(ctx)
            if why_not:
                if reason != "timer":
                    self.log(f"{reason}: {why_not}")
                return None
            self.log(f"{reason}: due, distilling")
            outcome = distill(ctx, Options())
        except LockHeld as exc:
            self.log(f"{reason}: {exc.message}; trying again shortly")
            self.retry_at = time.monotonic() + max(self.opts.debounce, 0.5)
            return None
        except JournalMemError as exc:
            self.log("distill failed (still watching):\n" + "\n".join(exc.lines()))
            return exc.exit_code
        except Exception as exc:  # a bug must not stop the watcher: log it, keep going

            self.log(f"distill failed unexpectedly (still watching): {type(exc).__name__}: "
                     f"{exc}; details in {crash_log(exc)}")
            return 3
        self.own = set(os.path.realpath(p) for p in outcome.drained.moved)
        self._report(outcome)
        return outcome.exit_code

    def _not_due(self, ctx: Context) -> str | None:
        if env_flag("JMEM_DISABLE"):
            return "journal-mem is disabled (JMEM_DISABLE=1): no distill"
        if is_due(ctx):
            return None
        count = len(pending(ctx.layout))
        return (f"not due ({count} pending, threshold {ctx.config.distill.threshold}, "
                f"max age {ctx.config.distill.max_age_hours:g} h)")

    def _report(self, outcome: Outcome) -> None:

        out, err = distill_lines(outcome)
        self.log("\n".join(out + err))


def watch(cwd: str, opts: WatchOptions, log: Log) -> int:
    """`jmem watch`: see the module docstring."""
    return Watcher(cwd, opts, log).run()
