"""Started by every Python the portability tests run (on PYTHONPATH): makes this Linux
lack what `JMEM_TEST_LACKS` names (comma-separated), as far as journal-mem can see.

* `fcntl`: no fcntl module (as on Windows); an `msvcrt` stand-in takes its place,
  with the semantics journal-mem relies on (a non-blocking exclusive lock per open
  file, released when the file is closed or its process dies; failure is OSError),
  each call logged to `JMEM_TEST_MSVCRT_LOG` when it is set ("mode offset nbytes");
* `locks`: neither fcntl nor msvcrt (no platform journal-mem supports);
* `module:NAME`: that module cannot be imported;
* `tmpfile`: no `os.O_TMPFILE` (macOS, Windows, old kernels);
* `proc`: no `/proc` (macOS, Windows);
* `dirfd`: no folder descriptors (Windows: no `O_DIRECTORY`, `os.link` by path only);
* `spawn`: no `os.posix_spawnp` (Windows).
"""

from __future__ import annotations

import os
import sys
import types

_LACKS = set(filter(None, os.environ.get("JMEM_TEST_LACKS", "").split(",")))

if "fcntl" in _LACKS:
    import fcntl as _fcntl
    import subprocess

    _msvcrt = types.ModuleType("msvcrt")
    _msvcrt.LK_UNLCK, _msvcrt.LK_LOCK, _msvcrt.LK_NBLCK = 0, 1, 2  # type: ignore[attr-defined]
    _msvcrt.LK_RLCK, _msvcrt.LK_NBRLCK = 3, 4  # type: ignore[attr-defined]

    def _locking(fd: int, mode: int, nbytes: int) -> None:
        if nbytes < 1:
            raise OSError(22, "Invalid argument")
        if mode in (2, 4):
            try:
                _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
            except BlockingIOError:
                raise OSError(36, "Resource deadlock avoided") from None  # EDEADLOCK
        elif mode == 0:
            _fcntl.flock(fd, _fcntl.LOCK_UN)
        else:
            raise OSError(22, f"mode {mode} blocks: journal-mem must never wait in msvcrt")
        log = os.environ.get("JMEM_TEST_MSVCRT_LOG")
        if log:
            with open(log, "a", encoding="ascii") as fh:
                fh.write(f"{mode} {os.lseek(fd, 0, os.SEEK_CUR)} {nbytes}\n")

    _msvcrt.locking = _locking  # type: ignore[attr-defined]
    sys.modules["msvcrt"] = _msvcrt
    sys.modules["fcntl"] = None  # type: ignore[assignment]  # `import fcntl` fails

if "locks" in _LACKS:
    import subprocess  # noqa: F401
    sys.modules["fcntl"] = sys.modules["msvcrt"] = None  # type: ignore[assignment]

for _lack in _LACKS:
    if _lack.startswith("module:"):
        sys.modules[_lack[7:]] = None  # type: ignore[assignment]

if "tmpfile" in _LACKS and hasattr(os, "O_TMPFILE"):
    del os.O_TMPFILE

if "proc" in _LACKS:
    _isdir, _open = os.path.isdir, open

    def _no_proc_isdir(path: object) -> bool:
        return not str(path).startswith("/proc") and _isdir(path)  # type: ignore[arg-type]

    os.path.isdir = _no_proc_isdir  # type: ignore[assignment]

if "dirfd" in _LACKS:
    if hasattr(os, "O_DIRECTORY"):
        del os.O_DIRECTORY
    os.supports_dir_fd.discard(os.link)

if "spawn" in _LACKS and hasattr(os, "posix_spawnp"):
    del os.posix_spawnp
