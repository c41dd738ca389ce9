"""The one error boundary: exceptions become messages and exit codes.

Expected failures (`JournalMemError`) print their message and hint; anything
else prints one line naming a log file that holds the traceback (exit 3).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from journal_mem.errors import UNEXPECTED, JournalMemError


def report(exc: JournalMemError) -> int:
    """Print an expected failure on stderr; return its exit code."""
    for line in exc.lines():
        print(f"jmem: {line}", file=sys.stderr)
    return exc.exit_code


def crash_log(exc: BaseException) -> str:
    """Write the traceback of an unexpected error to a log file; return its path."""
    import tempfile
    import time
    import traceback

    folder = os.path.join(tempfile.gettempdir(), "journal-mem-logs")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"jmem {' '.join(sys.argv[1:])}\ncwd: {os.getcwd()}\npython: {sys.version}\n\n")
        fh.write("".join(traceback.format_exception(exc)))
    return path


def guarded(fn: Callable[[], int]) -> int:
    """Run `fn`, mapping every exception to an exit code."""
    try:
        return fn()
    except JournalMemError as exc:
        return report(exc)
    except KeyboardInterrupt:
        print("jmem: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        path = crash_log(exc)
        print(f"jmem: unexpected error: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(f"jmem: the details are in {path}; please attach it to a bug report",
              file=sys.stderr)
        return UNEXPECTED
