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

The lock every lock file of the package takes (`try_lock`) is here too.

Portable: Linux, macOS and Windows. What a platform lacks is looked up, never
assumed by its name, so the fallbacks run (and are tested) wherever the feature
is missing: no `O_TMPFILE` or `/proc` (macOS, Windows), no directory descriptors
(Windows: no folder fsync, `os.link` by path), no `fcntl` (Windows: `msvcrt`).
Standard library only: the git hooks import it.
"""

from __future__ import annotations

import os

from journal_mem import jsonc
from journal_mem.errors import JournalMemError

# `typing` costs ~2.5 ms to import and the hooks import this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, BinaryIO

# Flags a platform may lack: 0 there. O_BINARY keeps Windows from translating newlines.
O_BINARY: int = getattr(os, "O_BINARY", 0)
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)  # Python's descriptors are not inherited anyway
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)

try:  # POSIX: flock, released by the kernel when the holder dies (even kill -9)
    import fcntl as _fcntl
except ImportError:  # Windows
    _fcntl = None  # type: ignore[assignment]
_msvcrt: Any = None  # Windows: a byte-range lock, released when its handle closes or its
if _fcntl is None:  # process ends (imported by name: its stubs exist only for win32)
    try:
        _msvcrt = __import__("msvcrt")
    except ImportError:
        pass
LOCK_BYTE = 1 << 30  # the byte msvcrt locks: past any content, so readers of the file
# (who holds the distill lock) are never blocked by it

TMP_PREFIX = ".tmp-jmem-"  # temp files of `replace_atomic`, next to their target
SUFFIX_BYTES = 5  # 40 random bits in a `create_exclusive` name
MAX_TRIES = 32


def try_lock(fd: int, *, shared: bool = False) -> bool:
    """Lock the open file `fd` without waiting; False when another holder has it. The
    lock is released when `fd` is closed, and when its process dies.

    POSIX: `flock`, shared or exclusive. Windows: `msvcrt.locking` of one byte
    (`LOCK_BYTE`), exclusive even when `shared` is asked (a probe: the caller closes
    it at once); Windows releases it when the process ends, after a short delay.
    """
    if _fcntl is not None:
        try:
            _fcntl.flock(fd, (_fcntl.LOCK_SH if shared else _fcntl.LOCK_EX) | _fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    if _msvcrt is not None:
        os.lseek(fd, LOCK_BYTE, os.SEEK_SET)
        try:
            _msvcrt.locking(fd, _msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        finally:
            os.lseek(fd, 0, os.SEEK_SET)
        return True
    raise JournalMemError("this platform has no file locking jmem can use (neither fcntl "
                          "nor msvcrt): journal-mem runs on Linux, macOS and Windows")


def write_at_start(fd: int, data: bytes) -> None:
    """Replace the whole content of the open file `fd` with `data` (a lock's holder)."""
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def fsync_dir(folder: str) -> None:
    """Make a folder's entries (a rename, a new link) durable. Windows opens no folder
    as a file (no `O_DIRECTORY`): there its metadata is the file system's to keep."""
    if not hasattr(os, "O_DIRECTORY"):
        return
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
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY,
                     0o666 if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:  # os.open's mode is filtered by the umask
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
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


def touched_now(path: str) -> os.stat_result:
    """The `stat` of the file at `path` just touched (made when missing): its mtime is
    now by the clock of the file system that holds it, which may not be this machine's
    (a network file system)."""
    try:
        os.utime(path)
    except FileNotFoundError:
        create_new(path, b"")
    return os.stat(path)


def create_new(path: str, data: bytes | str) -> bool:
    """Create `path` holding `data` unless it exists (then False: never overwritten)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY, 0o644)
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
    # A folder descriptor (POSIX) makes os.link use linkat, which can name the
    # anonymous inode through /proc; Windows links by path (NTFS hard links).
    by_fd = os.link in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY) if by_fd else -1
    fd, tmp = _open_temp(folder, by_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
        source = tmp or f"/proc/self/fd/{fd}"  # linkat(AT_SYMLINK_FOLLOW) through /proc
        for _ in range(MAX_TRIES):
            name = name_for(os.urandom(SUFFIX_BYTES).hex())
            try:
                if by_fd:
                    os.link(source, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # no replace
                else:
                    os.link(source, os.path.join(folder, name))  # fails if the name exists
            except FileExistsError:
                continue
            if durable:
                if by_fd:
                    os.fsync(dir_fd)
                else:
                    fsync_dir(folder)
            return os.path.join(folder, name)
        raise JournalMemError(f"could not find a free file name in {folder}")
    finally:
        os.close(fd)
        if by_fd:
            os.close(dir_fd)
        if tmp:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def _open_temp(folder: str, by_fd: bool) -> tuple[int, str]:
    """(fd, path) of a new temp file in `folder`; path is "" for an anonymous O_TMPFILE
    (Linux, with /proc and folder descriptors), else a named `.tmp-*` file."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and by_fd and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(folder, flag | os.O_WRONLY, 0o644), ""
        except OSError:
            pass  # the filesystem has no O_TMPFILE: use a named temp file
    tmp = os.path.join(folder, f".tmp-{os.urandom(8).hex()}")
    return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY, 0o644), tmp


def append_json_line(path: str, record: dict[str, object]) -> None:
    """Append `record` as one JSON line to a log file (created with its folder when
    missing). One `write` of one line under O_APPEND: concurrent writers never
    interleave inside a line. Raises OSError when the log cannot be written."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    line = (jsonc.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | O_CLOEXEC | O_BINARY, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_json(path: str) -> object:
    """What a JSON state file holds, or None when it is missing or unreadable (these
    files are disposable or rebuilt: damage means "nothing recorded")."""
    try:
        with open(path, encoding="utf-8") as fh:
            return jsonc.loads(fh.read())
    except (OSError, ValueError):
        return None
