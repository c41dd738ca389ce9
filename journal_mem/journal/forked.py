"""A pure function over many items, the work shared with forked children.

Parsing and validating 10k entry files is most of a full distill (about 1.1 s
of 1.8 s on two cores): each file is judged alone, so the work splits. The
children are forked, not spawned: they start in a few milliseconds with every
module and the items already in memory, and only their results are pickled
back, through a pipe each. Standard library only, nothing imported for it.

No child is forked, and everything runs in this process, where a fork is
missing or unsafe: on a platform without `os.fork`, with one CPU, or while
another thread runs (a child would inherit a lock that thread may hold, the
import lock among them). A child that fails, for any reason, is only slower:
its part is done again here. The results are the same as `[fn(x) for x in items]`.
"""

from __future__ import annotations

import os
import pickle
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

MAX_CHILDREN = 3  # the parent works too: four CPUs at most


def children() -> int:
    """How many children `map_forked` may fork here: one fewer than the CPUs this process
    may run on (at most `MAX_CHILDREN`), none where a fork is missing or unsafe."""
    if not hasattr(os, "fork"):
        return 0
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(0, min(cpus - 1, MAX_CHILDREN))


def map_forked(fn: Callable[[T], R], items: Sequence[T], workers: int,
               mine: Callable[[Sequence[T]], Iterable[T]] | None = None) -> list[R]:
    """`[fn(x) for x in items]`, in order, with up to `workers` forked children each
    taking an equal part (the parent takes the last one; `mine(part)` wraps the parent's
    iteration, for a progress bar). `fn`'s results must pickle."""
    if workers < 1 or len(items) < 2:
        return [fn(x) for x in (mine(items) if mine else items)]
    size = -(-len(items) // (workers + 1))
    parts = [items[i:i + size] for i in range(0, len(items), size)]
    forked = [_fork(fn, part) for part in parts[:-1]]
    last = parts[-1]
    out: list[R] = []
    try:
        done = [fn(x) for x in (mine(last) if mine else last)]
    finally:  # collected whatever happens here: no child is left behind
        results: list[list[R] | None] = [
            _collect(child, len(part)) for child, part in zip(forked, parts, strict=False)]
    for part, got in zip(parts, results, strict=False):
        out += got if got is not None else [fn(x) for x in part]
    return out + done


def in_child(fn: Callable[[], R]) -> Callable[[], R]:
    """Start `fn()` in a forked child now, where `children` allows one; the function
    returned gives its result (call it once), computed here when no child could do it."""
    child = _fork(lambda _: fn(), [None]) if children() > 0 else None

    def result() -> R:
        got: list[R] | None = _collect(child, 1)
        return got[0] if got is not None else fn()

    return result


def _fork(fn: Callable[[T], R], part: Sequence[T]) -> tuple[int, int] | None:
    """(pid, read end of its pipe) of a child computing `fn` over `part`; None when no
    child could be forked."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: compute, send, and leave without running any exit handler
        code = 1
        try:
            os.close(read)
            results = [fn(x) for x in part]
            with os.fdopen(write, "wb") as fh:
                pickle.dump(results, fh, pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _collect(child: tuple[int, int] | None, count: int) -> list[R] | None:
    """The results a child sent, once it has exited well; None when it did not."""
    if child is None:
        return None
    pid, read = child
    try:  # read as it comes: the whole message is never held besides what it holds
        with os.fdopen(read, "rb") as fh:
            got = pickle.load(fh)
    except Exception:  # a broken message (a child that died): the parent does the part
        got = None
    _, status = os.waitpid(pid, 0)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        return None
    return got if isinstance(got, list) and len(got) == count else None
