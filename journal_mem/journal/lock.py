"""One distiller per repository: a locked file in `<git-common-dir>/journal-mem/`.

The common git dir is shared by every worktree, so one lock covers them all.
The lock (`fsutil.try_lock`: `flock` on POSIX, `msvcrt.locking` on Windows) is
released when the holder dies (even kill -9), so a stale lock is simply taken
over; the file is never deleted (deleting a lock file races with a process about
to lock it). The holder writes its pid,
host and start time into the file so that a second distill can say who holds it.

The descriptor is opened with O_CLOEXEC and never passed to a child: a lock
belongs to the open file, so a `git commit` we start, every hook it runs and
any background child such a hook leaves behind would otherwise hold the lock
after we exit, and every later distill would exit 75.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from types import TracebackType

from journal_mem.errors import LockHeld
from journal_mem.fsutil import O_BINARY, O_CLOEXEC, try_lock, write_at_start

LOCK_FILE = "distill.lock"


def lock_path(state_dir: str) -> str:
    return os.path.join(state_dir, LOCK_FILE)


def holder(state_dir: str) -> str:
    """Who holds (or last held) the lock, in words."""
    try:
        with open(lock_path(state_dir), encoding="utf-8") as fh:
            info = json.loads(fh.read() or "{}")
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict) or "pid" not in info:
        return "a distill that is just starting"
    return f"pid {info['pid']} on {info.get('host', '?')}, since {info.get('since', '?')}"


def held_by(state_dir: str) -> str:
    """Who holds the lock now, in words; "" when it is free (probed without taking it)."""
    try:
        fd = os.open(lock_path(state_dir), os.O_RDONLY | O_BINARY)
    except OSError:
        return ""
    try:
        free = try_lock(fd, shared=True)
    finally:
        os.close(fd)  # also releases the probe's lock
    return "" if free else holder(state_dir)


class DistillLock:
    """Context manager: hold the distill lock or raise `LockHeld` at once."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.fd = -1

    def __enter__(self) -> DistillLock:
        os.makedirs(self.state_dir, exist_ok=True)
        fd = os.open(lock_path(self.state_dir), os.O_RDWR | os.O_CREAT | O_CLOEXEC | O_BINARY,
                     0o644)
        try:
            taken = try_lock(fd)
        except BaseException:
            os.close(fd)
            raise
        if not taken:
            os.close(fd)
            raise LockHeld(
                f"another distill holds the lock ({holder(self.state_dir)})",
                hint="it will fold these lessons too; run `jmem distill` again after it ends",
            ) from None
        self.fd = fd
        since = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        info = json.dumps({"pid": os.getpid(), "host": host(), "since": since})
        write_at_start(fd, info.encode())
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.fd >= 0:
            try:
                os.ftruncate(self.fd, 0)
            finally:
                os.close(self.fd)  # closing releases the lock
                self.fd = -1


def host() -> str:
    """This machine's name, as `socket.gethostname()` gives it, without importing `socket`
    (~4 ms of every distill): `uname`'s node name, or Windows' COMPUTERNAME."""
    uname = getattr(os, "uname", None)
    return str(uname().nodename) if uname is not None else os.environ.get("COMPUTERNAME", "")
