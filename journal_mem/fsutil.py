"""Writing files so that no reader ever sees half of one: the package's only file writers.

Three ways, each for its own kind of file:

* `replace_atomic`: a file that is rewritten (distilled memory, hooks, caches,
  settings): the bytes go to a temp file in the same folder, which is then
  renamed over the target. `durable=True` also fsyncs the file before the
  rename and the folder after it, so that a power cut leaves either the old or
  the new file, never an empty one; caches skip that cost.
* `create_exclusive`: a new file under a fresh name that must never replace
  another (journal entries): an anonymous `O_TMPFILE` inode, fsynced, then
  hard-linked to its name, which fails instead of replacing.
* `create_new`: a file written once and then owned by the user (config, CI
  workflow, agent file): created only when the name is free.

Standard library only: the git hooks import it.
"""

from __future__ import annotations

import contextlib
import json
import os

from journal_mem.errors import JournalMemError

# `typing` costs ~2.5 ms to import and the hooks import this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

TMP_PREFIX = ".tmp-jmem-"  # temp files of `replace_atomic`, next to their target
SUFFIX_BYTES = 5  # 40 random bits in a `create_exclusive` name
MAX_TRIES = 32


def fsync_dir(folder: str) -> None:
    """Make a folder's entries (a rename, a new link) durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_atomic(path: str, data: bytes | str, *, durable: bool = False,
                   mode: int | None = None) -> None:
    """Replace `path` with `data` all at once (temp file in the same folder, then rename).

    A `str` is written as UTF-8 with its newlines as they are. `durable`:
    fsync the file before the rename and the folder after it. `mode`: the new
    file's exact permissions (default: 0o666 less the umask, as `open` does).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    replace_atomic_with(path, lambda fh: fh.write(raw), durable=durable, mode=mode)


def replace_atomic_with(path: str, write: Callable[[BinaryIO], object], *,
                        durable: bool = False, mode: int | None = None) -> None:
    """Like `replace_atomic`, with `write(fh)` filling the temp file (a pickler, json.dump)."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f"{TMP_PREFIX}{os.urandom(6).hex()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:  # os.open's mode is filtered by the umask
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(folder)


def rename_into_place(src: str, dst: str) -> None:
    """Move a file written in full elsewhere in the same folder (git's `index.lock`) over
    `dst` in one step: how git itself commits a lock file."""
    os.replace(src, dst)


def is_temp(name: str) -> bool:
    """True for the file name of a `replace_atomic` temp file (left by a killed writer)."""
    return name.startswith(TMP_PREFIX)


def create_new(path: str, data: bytes | str) -> bool:
    """Create `path` holding `data` unless it exists (then False: never overwritten)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
    return True


def create_exclusive(folder: str, name_for: Callable[[str], str], data: bytes,
                     durable: bool = True) -> str:
    """Create a new file in `folder` holding `data`; never replaces an existing file.

    `name_for(suffix)` gives the final file name for a random suffix. Returns
    the path created. The content is written and fsynced before the file gets
    its name, so no reader ever sees a half-written file. On Linux the
    content lives in an anonymous O_TMPFILE inode until it is linked, so a
    process killed at any point leaves nothing behind; elsewhere a named
    `.tmp-*` file is used and removed. Raises `JournalMemError` after `MAX_TRIES`.
    `durable=False` skips the fsyncs, for a caller that writes many files and
    syncs once at the end (an import).
    """
    os.makedirs(folder, exist_ok=True)
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fd, tmp = _open_temp(folder)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
        # linkat(AT_SYMLINK_FOLLOW) through /proc names the anonymous inode;
        # passing a dir fd makes os.link use linkat rather than link(2)
        source = tmp or f"/proc/self/fd/{fd}"
        for _ in range(MAX_TRIES):
            name = name_for(os.urandom(SUFFIX_BYTES).hex())
            try:
                os.link(source, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # never replaces
            except FileExistsError:
                continue
            if durable:
                os.fsync(dir_fd)
            return os.path.join(folder, name)
        raise JournalMemError(f"could not find a free file name in {folder}")
    finally:
        os.close(fd)
        os.close(dir_fd)
        if tmp:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _open_temp(folder: str) -> tuple[int, str]:
    """(fd, path) of a new temp file in `folder`; path is "" for an anonymous O_TMPFILE."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(folder, flag | os.O_WRONLY, 0o644), ""
        except OSError:
            pass  # the filesystem has no O_TMPFILE: use a named temp file
    tmp = os.path.join(folder, f".tmp-{os.urandom(8).hex()}")
    return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), tmp


def append_json_line(path: str, record: dict[str, object]) -> None:
    """Append `record` as one JSON line to a log file (created with its folder when
    missing). One `write` of one line under O_APPEND: concurrent writers never
    interleave inside a line. Raises OSError when the log cannot be written."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_json(path: str) -> object:
    """What a JSON state file holds, or None when it is missing or unreadable (these
    files are disposable or rebuilt: damage means "nothing recorded")."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None
