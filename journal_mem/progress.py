"""Progress bars for long work (a rebuild, a first distill of a large journal, an import).

Shown on stderr only when a command asked for them (`allow()`: the CLI does,
except with `--json`) and stderr is a terminal, and only once the work has
taken longer than `DELAY` seconds: hooks, the background distill (its output
goes to a log file), CI logs and scripts get nothing extra, and a quick run
never flashes a bar. `tqdm` is imported only when a bar may be shown.
"""

from __future__ import annotations

import sys

# `typing` costs ~2.5 ms to import; the wake-up hook imports this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator
    from typing import TypeVar

    T = TypeVar("T")
DELAY = 0.5  # seconds of work before a bar appears

_allowed = [False]


def allow(on: bool = True) -> None:
    """Let this process show progress bars (an interactive command, not `--json`)."""
    _allowed[0] = on


def wanted() -> bool:
    """True when a bar would be shown: allowed, and stderr is a terminal."""
    try:
        return _allowed[0] and sys.stderr.isatty()
    except (AttributeError, ValueError):  # stderr closed or replaced
        return False


def track(items: Collection[T], what: str, unit: str = "it") -> Iterable[T]:
    """`items`, unchanged; iterating them advances a bar saying `what` when one is wanted."""
    if not wanted():
        return items
    return _bar(items, what, unit)


def _bar(items: Collection[T], what: str, unit: str) -> Iterator[T]:
    from tqdm import tqdm

    # tqdm's monitor thread would outlive the bar, and a process with another thread
    # running forks no child to share a first distill's parsing (`journal.forked`)
    tqdm.monitor_interval = 0
    with tqdm(total=len(items), desc=what, unit=unit, delay=DELAY, leave=False,
              file=sys.stderr) as bar:
        step = max(1, len(items) // 1000)  # about a thousand updates, whatever the size
        done = 0
        for item in items:
            yield item
            done += 1
            if done % step == 0:
                bar.update(step)
        bar.update(done % step)
