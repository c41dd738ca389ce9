"""Hold the main checkout's `index.lock` the way git does, for the few milliseconds in
which the distiller moves the branch and replaces the index (see
docs/DESIGN.md, "Distill commits").

Git itself creates `<git-dir>/index.lock` with O_CREAT|O_EXCL, writes the new index
into it and renames it over `index`. Every git command that writes the index (add,
commit, reset, checkout, ...) does the same, and a `git commit` holds it from before its
hooks run until after HEAD has moved. So while we hold it, no commit of the main
checkout is half-way, and none can start: the branch and the index change together.
Git never waits for this lock, so we hold it as briefly as we can; we wait for it
(polling) while someone else holds it.

A distill killed while holding it would block every git command of the main checkout,
so the lock file starts with `TOKEN` at once, and `<state-dir>/index-lock.json` names
its inode and the commit being published. The next distill (holding the distill lock,
so the dead one is gone) finishes the move or removes the lock (`recover`).
"""

from __future__ import annotations

import os
import time

from journal_mem import jsonc
from journal_mem.errors import GitError
from journal_mem.fsutil import O_BINARY, O_CLOEXEC, rename_into_place, replace_atomic

TOKEN = b"journal-mem distill lock\n"
MARKER = "index-lock.json"
WAIT_S = 120.0  # a `git commit` waiting in an editor holds the lock that long
QUIET_S = 0.5  # covers a commit's start: it writes the index before its hooks run
BUSY = "busy"  # <state-dir>/busy/<pid>: our pre-commit shim's mark of a running git


def committing(state_dir: str) -> list[int]:
    """Pids of the git commands (commit, merge) of the main checkout now past their
    start: our pre-commit and pre-merge-commit shims leave `busy/<git's pid>`."""
    folder = os.path.join(state_dir, BUSY)
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    alive = []
    for name in names:
        if name.isdigit() and _alive(int(name), os.path.join(folder, name)):
            alive.append(int(name))
        else:
            _unlink(os.path.join(folder, name))
    return alive


STALE_MARKER_S = 600.0  # Windows: a marker this old is a commit that died


def _alive(pid: int, marker: str) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would end the process there: judge by age
        try:
            return time.time() - os.stat(marker).st_mtime < STALE_MARKER_S
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"  # a zombie has exited
    except (OSError, IndexError):
        return True


def _newest_change(git_dir: str, names: tuple[str, ...] = ("index.lock",)) -> float:
    newest = 0.0
    for name in ("index", "HEAD", os.path.join("logs", "HEAD"), *names):
        try:
            newest = max(newest, os.stat(os.path.join(git_dir, name)).st_mtime)
        except FileNotFoundError:
            continue
    return newest


def folder_stamp(git_dir: str) -> int:
    """The git dir's own mtime (ns): it moves whenever a file is made or removed there,
    `index.lock` included, even by a `git commit` that takes the lock and leaves the
    index unchanged (and so writes nothing `_newest_change` sees)."""
    try:
        return os.stat(git_dir).st_mtime_ns
    except OSError:
        return -1


def changed_since(git_dir: str, state_dir: str, seen: float) -> bool:
    """True when a git command of the checkout ran after `wait_quiet` returned `seen`
    (called while holding `index.lock`, which is then ours)."""
    return _newest_change(git_dir, ()) != seen or bool(committing(state_dir))


def wait_quiet(git_dir: str, state_dir: str, quiet_s: float = QUIET_S,
               wait_s: float = WAIT_S) -> float:
    """Return once no git command of the checkout whose git dir is `git_dir` runs.

    A plain `git commit` reads HEAD when it starts and moves it with a
    compare-and-swap when it ends, after its hooks; it holds `index.lock` only
    for a moment at the start. So the branch is moved only when no commit or
    merge is past our pre-commit shim (`committing`), nobody holds `index.lock`,
    and nothing wrote the index or moved HEAD for `quiet_s` (a commit writes the
    index as it starts, before its hooks). Returns the newest change seen.
    """
    deadline = time.monotonic() + wait_s
    while True:
        newest = _newest_change(git_dir)
        idle = time.time() - newest
        if idle >= quiet_s and not os.path.exists(lock_file(git_dir)) and not committing(
                state_dir):
            return newest
        if time.monotonic() > deadline:
            raise GitError(f"git kept the checkout of {git_dir} busy for {wait_s:.0f} s: the "
                           "distill commit was not made",
                           hint="the files are written; run `jmem distill` when git is idle")
        time.sleep(min(max(quiet_s - idle, 0.01), 0.1))


def _marker(state_dir: str) -> str:
    return os.path.join(state_dir, MARKER)


def lock_file(git_dir: str) -> str:
    return os.path.join(git_dir, "index.lock")


class IndexLock:
    """Context manager: create `index.lock` (waiting while another process holds it).

    `commit()` renames it over the index; leaving the block without `commit()`
    removes it, leaving the index as it was.
    """

    def __init__(self, git_dir: str, state_dir: str, wait_s: float = WAIT_S) -> None:
        self.path = lock_file(git_dir)
        self.index = os.path.join(git_dir, "index")
        self.state_dir = state_dir
        self.wait_s = wait_s
        self.fd = -1
        self.waited = False  # someone held it when we came: a git command ran meanwhile

    def __enter__(self) -> IndexLock:
        deadline = time.monotonic() + self.wait_s
        # Created with its TOKEN already inside (a hard link fails like O_EXCL when the
        # name exists): a kill at any moment leaves a lock `recover` knows as ours.
        tmp = f"{self.path}.jmem-{os.getpid()}"
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | O_CLOEXEC | O_BINARY, 0o666)
        os.write(fd, TOKEN)
        while True:
            try:
                os.link(tmp, self.path)
                # Windows deletes no file that is open: close the temp name first, then
                # keep the lock open by its own name (nobody else writes it: it is ours)
                os.close(fd)
                _unlink(tmp)
                self.fd = os.open(self.path, os.O_RDWR | O_CLOEXEC | O_BINARY)
                break
            except FileExistsError:
                self.waited = True
                if time.monotonic() > deadline:
                    os.close(fd)
                    _unlink(tmp)
                    raise GitError(
                        f"{self.path} was held for {self.wait_s:.0f} s: the distill commit "
                        "was not made", hint="finish the git command that holds it (or, if "
                        "none runs, remove the file), then run `jmem distill`") from None
                time.sleep(_jitter())
        return self

    def mark(self, base: str, new: str) -> None:
        """Record (before HEAD moves) what this lock publishes, for `recover`."""
        st = os.fstat(self.fd)
        data = {"pid": os.getpid(), "dev": st.st_dev, "ino": st.st_ino, "base": base,
                "new": new}
        _write_json(_marker(self.state_dir), data)

    def write(self, data: bytes) -> None:
        """The new index: what `commit()` puts in place."""
        os.lseek(self.fd, 0, os.SEEK_SET)
        os.ftruncate(self.fd, 0)
        os.write(self.fd, data)

    def commit(self) -> None:
        os.close(self.fd)
        self.fd = -1
        rename_into_place(self.path, self.index)

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            _unlink(self.path)
        _unlink(_marker(self.state_dir))


def recover(git_dir: str, state_dir: str, head: str) -> str:
    """Finish or undo the index move of a distill that died holding `index.lock`.

    Call only while holding the distill lock. `head` is the branch's commit now.
    Returns what was done ("" when there was nothing of ours to clean).
    """
    try:
        with open(_marker(state_dir), encoding="utf-8") as fh:
            info = jsonc.loads(fh.read())
    except (OSError, ValueError):
        info = {}
    path = lock_file(git_dir)
    for name in os.listdir(git_dir):
        if name.startswith("index.lock.jmem-"):  # a killed distill's half-made lock
            _unlink(os.path.join(git_dir, name))
    try:
        st = os.lstat(path)
        with open(path, "rb") as fh:
            start = fh.read(len(TOKEN))
    except OSError:
        _unlink(_marker(state_dir))
        return ""
    ours = start == TOKEN or (isinstance(info, dict) and info.get("ino") == st.st_ino
                              and info.get("dev") == st.st_dev)
    if not ours:
        return ""
    if start != TOKEN and isinstance(info, dict) and info.get("new") == head:
        rename_into_place(path, os.path.join(git_dir, "index"))  # HEAD moved: the index follows
        done = f"finished a killed distill's index update ({path})"
    else:
        _unlink(path)
        done = f"removed the index.lock a killed distill left ({path})"
    _unlink(_marker(state_dir))
    return done


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _write_json(path: str, data: object) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    replace_atomic(path, jsonc.dumps(data))


def _jitter() -> float:
    """2-10 ms, at random: two waiters do not retry in step. From `os.urandom`, not the
    `random` module, which every command that imports this (`write`, `recall`) paid ~1 ms
    to load."""
    return 0.002 + os.urandom(1)[0] / 255 * 0.008
