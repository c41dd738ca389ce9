"""Recall benchmarks: `jmem recall QUERY` with a warm index over 1k and 10k (and 100k with
scale "full") lessons of the seeded generator; goal <= 50 ms (docs/DESIGN.md, "Budgets") at 100k.

    python bench/bench_recall.py [RUNS] [small|full]

The index is built by the warm-up run; the timed runs find it current.
Against `cat` of a MEMORY.md (what reading memory without a query costs).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_distill import SIZES, label, repo_for, reset  # noqa: E402
from runner import (  # noqa: E402
    Row,
    Skipped,
    bench_env,
    cat_baseline,
    floor_of,
    jmem_argv,
    table,
    time_against,
    time_command,
)

QUERY = "flaky test fixture database order"


def available() -> bool:
    """True when the measured build has `jmem recall` (it arrived in parallel with this)."""
    import subprocess

    proc = subprocess.run([*jmem_argv(), "recall", "--help"], capture_output=True,
                          env=bench_env(), check=False)
    return proc.returncode == 0


def rows(runs: int = 10, scale: str = "small") -> list[Row]:
    """Warm-index recall per size; the goal applies at 100k."""
    if not available():
        raise Skipped("recall: `jmem recall` is not in this build; "
                      "bench/bench_recall.py measures it once it is")
    out = []
    for count in SIZES[scale]:
        dest, sha = repo_for(count)
        reset(dest, sha)
        memory = dest / ".claude" / "agent-memory" / "agent-00" / "MEMORY.md"
        time_command([*jmem_argv(), "distill"], dest, runs=1, warmup=False)
        cat = cat_baseline(memory, runs)
        t, bare = time_against([*jmem_argv(), "recall", QUERY], dest, runs)
        goal, met = ("≤ 50 ms", t.median <= 50) if count >= 100_000 else ("–", None)
        # the goals table's row (10k) with its floor
        floor = floor_of([*jmem_argv(), "recall", QUERY], dest, runs) if count == 10_000 else None
        out.append(Row(f"recall, warm index, {label(count)} lessons", t, "cat MEMORY.md", cat,
                       goal, met, floor, bare))
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    print(table(rows(int(args[0]) if args else 10, args[1] if len(args) > 1 else "small"),
                "recall"))
