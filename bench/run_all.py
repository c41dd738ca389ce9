"""Run every `bench/bench_*.py` and print one markdown table.

    python bench/run_all.py [--runs N] [--scale small|full] [--only NAME]… [--out FILE]

Run it with the python of a venv where journal-mem is installed (not editable):
the runner then times the installed `jmem`, as a user runs it, with bytecode
caching on. Each row: a path, the median and min–max of its whole-process wall
times after one warm-up, the baseline it is compared with (measured in the
same run: `python -c pass`, `git diff --cached --name-only`, `cat` of a
MEMORY.md), the ratio, the goal from the issues, and whether it is met.
`--scale full` adds the 100k-lesson distill and recall (generated once into
bench/results/repos). Figures that are not times (the key share, related-fact
recall) follow in a second table.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from runner import (  # noqa: E402
    BASELINES,
    Figure,
    Row,
    Skipped,
    figure_table,
    installed_script,
    machine_line,
    table,
)

# Every bench module, in the order the table reads (tests/test_bench.py checks that
# each bench_*.py is here and has the `rows` this runner calls).
ORDER = ("bench_write", "bench_guard", "bench_wake", "bench_batch", "bench_loop", "bench_history",
         "bench_distill", "bench_recall", "bench_import", "bench_scale", "bench_keys",
         "bench_related", "bench_consolidate")


def modules(only: list[str]) -> list[str]:
    """Every bench module, in reading order (ORDER, then any not listed there yet)."""
    found = sorted(p.stem for p in BENCH.glob("bench_*.py"))
    ordered = [m for m in ORDER if m in found] + [m for m in found if m not in ORDER]
    return [m for m in ordered if not only or m.removeprefix("bench_") in only or m in only]


def run_module(name: str, runs: int, scale: str) -> tuple[list[Row | Figure], str | None]:
    """(rows, None), or ([], why it was skipped)."""
    module = importlib.import_module(name)
    kwargs = {"scale": scale} if "scale" in inspect.signature(module.rows).parameters else {}
    try:
        return module.rows(runs, **kwargs), None
    except Skipped as exc:
        return [], str(exc)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} at the start"


def report(results: list[Row | Figure], skipped: list[str], seconds: float, runs: int,
           scale: str, load_line: str) -> str:
    how = "installed `jmem`" if installed_script() else "`python -m journal_mem` (not installed)"
    rows = [r for r in results if isinstance(r, Row)]
    figures = [f for f in results if isinstance(f, Figure)]
    lines = [
        f"{machine_line()}; {load_line}; {how}; {runs} runs per path after one warm-up "
        f"(full distills: min(runs, 3); 100k: one run); scale {scale}; took {seconds:.0f} s.",
    ]
    if rows:
        lines += ["", table(rows), "",
                  "Baselines: " + "; ".join(f"**{k}** = {v}" for k, v in BASELINES.items()) + "."]
    if figures:
        lines += ["", figure_table(figures)]
    lines += [f"Skipped: {why}" for why in skipped]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--scale", choices=("small", "full"), default="small")
    parser.add_argument("--only", action="append", default=[],
                        help="a module name without bench_ (" + ", ".join(
                            m.removeprefix("bench_") for m in modules([])) + ")")
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "latest.md")
    args = parser.parse_args()
    unknown = [n for n in args.only if not modules([n])]
    if unknown:
        parser.error(f"no bench module {', '.join(unknown)}")
    load_line = load()
    start = time.monotonic()
    results: list[Row | Figure] = []
    skipped: list[str] = []
    for name in modules(args.only):
        print(f"bench: {name} …", file=sys.stderr, flush=True)
        got, why = run_module(name, args.runs if name != "bench_distill" else min(args.runs, 3),
                              args.scale)
        results += got
        if why:
            skipped.append(why)
    text = report(results, skipped, time.monotonic() - start, args.runs, args.scale, load_line)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    return 1 if any(r.met is False for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
