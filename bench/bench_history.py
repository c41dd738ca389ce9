"""Benchmark: `jmem log KEY` and `jmem report` on a repository with 10k lessons.

Goals: `log KEY` ≤ 12× a bare start, `report` ≤ 3 s (whole processes), against
`python -c pass` measured in the same run. The repository is the wake-up
benchmark's: two agents, 10,000 journal entries and a committed 200-line
`MEMORY.md` each.

    python bench/bench_history.py [RUNS]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from bench_wake import make_repo
from runner import Row, floor_of, jmem_argv, python_baseline, table, time_against, time_command

from journal_mem.journal.entry import default_key


def rows(runs: int = 10) -> list[Row]:
    root = tempfile.mkdtemp(prefix="jmem-bench-history-")
    try:
        main, _ = make_repo(root, 10_000, 10)
        key = default_key("Lesson 4711 about thing 4711")
        base = python_baseline(main, runs)
        log, bare = time_against([*jmem_argv(), "log", key], main, runs)
        floor = floor_of([*jmem_argv(), "log", key], main, runs)
        report = time_command([*jmem_argv(), "report", "--out", os.path.join(root, "out")],
                              main, max(3, runs // 3))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return [
        Row("log KEY, 10k lessons", log, "python -c pass", bare, "≤ 12×",
            log.median <= 12 * bare.median, floor),
        Row("report, 10k lessons", report, "python -c pass", base, "≤ 3 s",
            report.median <= 3000),
    ]


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10), "history"))
