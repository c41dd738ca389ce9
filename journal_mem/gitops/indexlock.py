"""Hold the main checkout's `index.lock` the way git does, for the few milliseconds in
which the distiller moves the branch and replaces the index (docs/DESIGN.md, "Distill
commits").

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

import json
import os
import random
import time

from journal_mem.errors import GitError

TOKEN = b"journal-mem distill lock\n"
MARKER = "index-lock.json"
WAIT_S = 120.0  # a `git commit` waiting in an editor holds the lock that long
QUIET_S = 1.0  # longer than a commit with our pre-commit hook takes (about 0.2 s)


def wait_quiet(git_dir: str, quiet_s: float = QUIET_S, wait_s: float = WAIT_S) -> None:
    """Return once the checkout whose git dir is `git_dir` has been idle for `quiet_s`.

    A plain `git commit` reads HEAD when it starts and moves it with a
    compare-and-swap when it ends, after its hooks; it holds `index.lock` only
    for a moment at the start. No lock tells us it is running, so the branch is
    moved only when no git command has written the index, moved HEAD or held
    `index.lock` for `quiet_s` (a commit writes the index as it starts).
    """
    deadline = time.monotonic() + wait_s
    watched = [os.path.join(git_dir, name) for name in ("index", "index.lock", "HEAD",
                                                          os.path.join("logs", "HEAD"))]
    while True:
        newest = 0.0
        for path in watched:
            try:
                newest = max(newest, os.stat(path).st_mtime)
            except FileNotFoundError:
                continue
        idle = time.time() - newest
        if idle >= quiet_s and not os.path.exists(lock_file(git_dir)):
            return
        if time.monotonic() > deadline:
            raise GitError(f"the checkout of {git_dir} was never idle for {quiet_s:.1f} s in "
                           f"{wait_s:.0f} s: the distill commit was not made",
                           hint="the files are written; run `jmem distill` when git is idle")
        time.sleep(min(max(quiet_s - idle, 0.01), 0.2))


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

    def __enter__(self) -> IndexLock:
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise GitError(
                        f"{self.path} was held for {self.wait_s:.0f} s: the distill commit "
                        "was not made", hint="finish the git command that holds it (or, if "
                        "none runs, remove the file), then run `jmem distill`") from None
                time.sleep(random.uniform(0.002, 0.01))
        os.write(self.fd, TOKEN)
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
        os.replace(self.path, self.index)

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
            info = json.load(fh)
    except (OSError, ValueError):
        info = {}
    path = lock_file(git_dir)
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
        os.replace(path, os.path.join(git_dir, "index"))  # HEAD moved: the index follows
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
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)
