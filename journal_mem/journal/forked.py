"""A pure function over many items, the work shared with forked children.

Parsing and validating 10k entry files is most of a full distill (about 1.1 s
of 1.8 s on two cores): each file is judged alone, so the work splits. The
children are forked, not spawned: they start in a few milliseconds with every
module and the items already in memory, and only their results are pickled
back, through a pipe each, in chunks the parent takes as it uses them (so it
never holds a child's whole answer at once). Standard library only, and `pickle`
only once a child is forked (the hooks import this module and never fork).

No child is forked, and everything runs in this process, where a fork is
missing or unsafe: on a platform without `os.fork`, with one CPU, or while
another thread runs (a child would inherit a lock that thread may hold, the
import lock among them). A child that fails, for any reason, is only slower:
what it did not send is done again here. The results are always `fn(x)` for
every item.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import BinaryIO, TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

MAX_CHILDREN = 3  # the parent works too: four CPUs at most
CHUNK = 512  # results a child sends in one pickle


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
               mine: Callable[[Sequence[T]], Iterable[T]] | None = None,
               ) -> Iterator[tuple[int, R]]:
    """`(i, fn(items[i]))` for every item, each once, with up to `workers` forked
    children taking an equal part each. The parent's own part (the last) comes first, as
    it computes it (`mine(part)` wraps that iteration, for a progress bar); then each
    child's, as it arrives. `fn`'s results must pickle."""
    if workers < 1 or len(items) < 2:
        yield from enumerate(fn(x) for x in (mine(items) if mine else items))
        return
    size = -(-len(items) // (workers + 1))
    starts = list(range(0, len(items), size))
    forked = [_fork(fn, items[start:start + size]) for start in starts[:-1]]
    try:
        last = starts[-1]
        part = items[last:]
        yield from enumerate((fn(x) for x in (mine(part) if mine else part)), last)
        for child, start in zip(forked, starts, strict=False):
            end = start + size  # a child's part is never the short last one
            got = start
            sent: Iterator[tuple[int, R]] = _received(child, start, size)
            for i, result in sent:
                yield i, result
                got = i + 1
            yield from ((i, fn(items[i])) for i in range(got, end))
    finally:  # whatever happens here, no child is left behind
        for child in forked:
            _reap(child)


def in_child(fn: Callable[[], R]) -> Callable[[], R]:
    """Start `fn()` in a forked child now, where `children` allows one; the function
    returned gives its result (call it once), computed here when no child could do it."""
    child = _fork(lambda _: fn(), [None]) if children() > 0 else None

    def result() -> R:
        try:
            sent: Iterator[tuple[int, R]] = _received(child, 0, 1)
            for _, got in sent:
                return got
        finally:
            _reap(child)
        return fn()

    return result


def _fork(fn: Callable[[T], R], part: Sequence[T]) -> list[int] | None:
    """[pid, read end of its pipe] of a child computing `fn` over `part`; None when no
    child could be forked."""
    import pickle  # here, not after the fork: each child would import it again

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
                for at in range(0, len(results), CHUNK):
                    pickle.dump(results[at:at + CHUNK], fh, pickle.HIGHEST_PROTOCOL)
                    fh.flush()  # sent: the parent keeps it should this child fail later
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return [pid, read]


def _received(child: list[int] | None, start: int, count: int) -> Iterator[tuple[int, R]]:
    """`(i, result)` from `start` on, as many of `count` as the child sent whole."""
    if child is None or child[1] < 0:
        return
    import pickle

    fh: BinaryIO = os.fdopen(child[1], "rb")
    child[1] = -1
    with fh:
        at = start
        while at < start + count:
            try:
                chunk = pickle.load(fh)
            except Exception:  # the child died or sent nonsense: the rest is done here
                return
            if not isinstance(chunk, list) or not chunk or at + len(chunk) > start + count:
                return
            for result in chunk:
                yield at, result
                at += 1


def _reap(child: list[int] | None) -> None:
    """Wait for a child to end (its pipe closed first, so that it cannot wait on us)."""
    if child is None:
        return
    if child[1] >= 0:
        os.close(child[1])
        child[1] = -1
    if child[0] > 0:
        os.waitpid(child[0], 0)
        child[0] = 0
