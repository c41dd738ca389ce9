"""Loaded at the start of every Python process of a path `runner.floor_of` measures (it
puts this folder first on PYTHONPATH): at exit, even by `os._exit` (a forked child, the
CLI's fast exit), it appends the modules the process loaded after its bare start to
the file $BENCH_FLOOR_OUT names, one per line."""

import atexit
import os
import sys

_START = set(sys.modules)
_OUT = os.environ.get("BENCH_FLOOR_OUT", "")
_exit = os._exit


def _dump() -> None:
    with open(_OUT, "a", encoding="utf-8") as fh:
        fh.write("".join(f"{name}\n" for name in sorted(set(sys.modules) - _START)))


def _dump_then_exit(code: int) -> None:
    _dump()
    _exit(code)


if _OUT:
    atexit.register(_dump)
    os._exit = _dump_then_exit  # type: ignore[assignment]
