"""The one error boundary: `main.main` runs every command, fast paths included, in `run`.

Two modes. On the command line, an expected failure (`JournalMemError`)
prints its message and hint and exits with its code (errors.py); anything
else writes one log file with the traceback, names it, and exits 3. In a hook
that must not fail its caller (the Claude Code hooks: a session must start
and end whatever happens), every failure becomes one warning through the
hook's own `warn` and exit 0; an unexpected one still writes its log file
and the warning names it. The git guard runs in command-line mode on purpose:
its refusals are what must stop a commit.
"""

from __future__ import annotations

import gc
import os
import sys
import time

from journal_mem.errors import INTERRUPTED, OK, UNEXPECTED, JournalMemError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


_LEFT: list[object] = []  # `leave_to_exit`: what the process's end frees, not the command
# Whether the process ends with the command it runs: `main.main` run as the program (not
# called with arguments in a process that goes on, as the tests and the API do)
ONE_SHOT = False


def leave_to_exit(*objs: object) -> None:
    """Keep `objs` alive until the process ends, in place of what was kept before. A
    one-shot command ends without the interpreter's teardown (`main._leave`), so what is
    kept here is never freed one object at a time: a distill's journal and fold took
    111 ms to free at 100k lessons (10 ms at 10k). Every object made so far is also left
    out of the cyclic collector's passes (`gc.freeze`): its first pass over them, once a
    distill turned it back on, took longer than freeing them. Only for a process that
    ends with the command (`ONE_SHOT`): a long-running caller (`jmem watch`, the MCP
    server) would keep them."""
    _LEFT[:] = objs
    gc.freeze()


def report(exc: JournalMemError) -> int:
    """Print an expected failure on stderr; return its exit code."""
    for line in exc.lines():
        print(f"jmem: {line}", file=sys.stderr)
    return exc.exit_code


def describe(exc: BaseException) -> str:
    """One line saying what went wrong (the first line of an expected failure)."""
    if isinstance(exc, JournalMemError):
        return exc.message.splitlines()[0] if exc.message else type(exc).__name__
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


def crash_log(exc: BaseException, args: list[str] | None = None) -> str:
    """Write the traceback of an unexpected error to a log file; return its path."""
    import tempfile
    import traceback

    folder = os.path.join(tempfile.gettempdir(), "journal-mem-logs")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log")
    argv = sys.argv[1:] if args is None else args
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"jmem {' '.join(argv)}\ncwd: {os.getcwd()}\npython: {sys.version}\n\n")
        fh.write("".join(traceback.format_exception(exc)))
    return path


def run(args: list[str], fn: Callable[[], int],
        warn: Callable[[str], None] | None = None) -> int:
    """Run `fn` (the command `args`), mapping every exception to an exit code.

    `warn`: hook mode; a failure is reported through it and the exit code is 0.
    """
    try:
        return fn()
    except KeyboardInterrupt:
        print("jmem: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        return OK
    except JournalMemError as exc:
        if warn is None:
            return report(exc)
        warn(describe(exc))
        return OK
    except Exception as exc:
        return _unexpected(exc, args, warn)


def _unexpected(exc: Exception, args: list[str], warn: Callable[[str], None] | None) -> int:
    try:
        where = f"the details are in {crash_log(exc, args)}"
    except OSError as log_error:  # a full or read-only disk must not hide the error itself
        where = f"no log file could be written ({log_error})"
    if warn is not None:
        warn(f"{describe(exc)} ({where})")
        return OK
    print(f"jmem: unexpected error: {describe(exc)}", file=sys.stderr)
    print(f"jmem: {where}; please attach it to a bug report", file=sys.stderr)
    return UNEXPECTED
