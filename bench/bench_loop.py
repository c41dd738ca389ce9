"""Benchmark: the five agent-loop points on a repository with 10k lessons.

Goal: each point ≤ 50 ms in-process (`journal_mem.api.run_hook`), pre-spawn
≤ 150 ms with its token counting, with a warm recall index. Each point is
also timed as a command (`jmem hook NAME`, a whole process) against
`python -c pass`. A point that writes a lesson changes the journal, so the
next query re-reads it into the recall index: that cost is its own row.

    python bench/bench_loop.py [RUNS]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from bench_wake import make_repo
from runner import (
    Row,
    Timing,
    bench_env,
    floor_of,
    jmem_argv,
    table,
    time_against,
)

LESSONS = 10_000
SWITCHES = {f"JMEM_HOOKS_{p}": "1" for p in ("PRE_WORK", "PRE_SPAWN", "POST_RUN", "FAIL_DIAG",
                                              "POST_RETRO")}
CONTEXTS: dict[str, dict[str, object]] = {
    "pre-work": {"goal": "Lesson about thing 42. Fix thing 4711 next.", "queued": 3},
    "pre-spawn": {"goal": "Lesson about thing 42 and thing 99", "max_tokens": 2000},
    "fail-diag": {"check": "test_cart", "error": "AssertionError: total 199 != 100",
                  "record": False},
    "post-run": {"lessons": [{"title": "Bench lesson", "topic": "bench", "body": "x"}]},
}


def in_process(fn: Callable[[], object], runs: int) -> Timing:
    """Milliseconds of `fn()` in this process: one warm-up, then `runs` calls."""
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return Timing(tuple(samples))


def rows(runs: int = 10) -> list[Row]:
    """Every point in-process and as a command, plus the re-index a write causes."""
    from journal_mem.api import run_hook

    root = tempfile.mkdtemp(prefix="jmem-bench-loop-")
    saved = dict(os.environ)
    try:
        main, _ = make_repo(root, LESSONS, 10)
        worker = os.path.join(root, "worker")
        os.makedirs(worker)
        CONTEXTS["pre-spawn"]["worker_dir"] = worker
        os.environ.update(SWITCHES)
        out: list[Row] = []

        def call(point: str) -> Callable[[], object]:
            def run() -> object:
                result = run_hook(point, dict(CONTEXTS[point]), cwd=main)
                assert result.ran and not result.errors, result
                return result
            return run

        for point in ("pre-work", "pre-spawn", "fail-diag", "post-run"):
            goal = "≤ 150 ms" if point == "pre-spawn" else "≤ 50 ms"
            timing = in_process(call(point), runs)
            out.append(Row(f"hook {point}, in-process, 10k lessons", timing, "–", None, goal,
                           timing.median <= (150 if point == "pre-spawn" else 50)))
        reindex = _reindex(main, runs, call("pre-work"))
        out.append(Row("first query after a write (re-index), 10k lessons", reindex, "–", None,
                       "–", None))
        for point in ("pre-work", "pre-spawn", "fail-diag"):
            stdin = json.dumps(CONTEXTS[point]).encode()
            cmd, bare = time_against([*jmem_argv(), "hook", point], main, runs, stdin=stdin,
                                     env=bench_env(**SWITCHES))
            goal = ("≤ 4×", cmd.median <= 4 * bare.median) if point == "pre-work" else ("–", None)
            floor = (floor_of([*jmem_argv(), "hook", point], main, runs, stdin=stdin,
                              env=bench_env(**SWITCHES)) if point == "pre-work" else None)
            out.append(Row(f"jmem hook {point}, 10k lessons", cmd, "python -c pass", bare,
                           *goal, floor))
        return out
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(root, ignore_errors=True)


def _reindex(main: str, runs: int, query: Callable[[], object]) -> Timing:
    from journal_mem.api import run_hook

    samples = []
    for i in range(max(3, runs // 3)):
        lesson = {"title": f"Reindex probe {i}", "topic": "bench", "body": "x"}
        run_hook("post-run", {"lessons": [lesson]}, cwd=main)
        start = time.perf_counter()
        query()
        samples.append((time.perf_counter() - start) * 1000)
    return Timing(tuple(samples))


if __name__ == "__main__":
    got = rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
    print(table(got, "loop"))
    print(f"median of medians: {statistics.median(r.timing.median for r in got):.1f} ms")
