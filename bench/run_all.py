"""Run every `bench/bench_*.py` and print one markdown table.

    python bench/run_all.py [--runs N] [--scale small|full] [--only NAME]… [--peers] [--out FILE]

Run it with the python of a venv where journal-mem is installed (not editable):
the runner then times the installed `jmem`, as a user runs it, with bytecode
caching on. Each row: a path, the median and min–max of its whole-process wall
times after one warm-up, the baseline it is compared with (measured in the
same run: `python -c pass`, `git diff --cached --name-only`, `cat` of a
MEMORY.md), the ratio, the goal from the issues, and whether it is met.
`--scale full` adds the 100k-lesson distill and recall (generated once into
bench/results/repos). Figures that are not times (the key share, related-fact
recall) follow in a second table. `--peers` installs the pre-commit
framework and agent-memory-git into venvs of their own (bench/results/peers)
and times them beside journal-mem (bench_peers.py); then a goals table reads
every goal as a ratio to a bare start measured in the same run, met or not,
with why where one is not, and each goal's floor (`runner.Floor`): a start
importing the standard-library modules the path loaded, plus a bare git
process for each one it ran, timed in the same run; what is left above the
floor is our own code.
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
    Timing,
    figure_table,
    installed_script,
    machine_line,
    python_baseline,
    table,
)

# Every bench module, in the order the table reads (tests/test_bench.py checks that
# each bench_*.py is here and has the `rows` this runner calls).
ORDER = ("bench_write", "bench_guard", "bench_wake", "bench_batch", "bench_loop", "bench_history",
         "bench_distill", "bench_recall", "bench_import", "bench_scale", "bench_keys",
         "bench_related", "bench_outdated", "bench_citations", "bench_team_day",
         "bench_consolidate", "bench_mcp", "bench_peers")

# The goals, each a ratio to a bare start: (what, the start of the row's path, at most this
# many bare starts, why it is not met when it is not).
GOALS = (
    ("`write`", "write (main checkout)", 3.0,
     "above its floor, ~55 modules of ours (~14 ms: the intake, the entry and its "
     "checks, the secret patterns, the recall index and the fold that indexes the last "
     "lesson's fact; no longer `typing`, `json`, `contextlib`, `base64` or "
     "`subprocess`) and ~9 ms of work (the recall index brought up to date and asked "
     "three times, the key's entries read for `knew`, one git process, the fsyncs of "
     "filing); 3× needs a recall index that takes one fact without the fold's modules"),
    ("`wake --hook claude`, 10k lessons, from a worktree",
     "wake --hook claude, 10k lessons, from a worktree", 3.0,
     "about 66 modules imported (re for the names' and the pack's patterns, 35 of ours; "
     "no longer json: `jsonc`, nor datetime or pickle: "
     "the pending views are marshal, nor tomllib, typing or hashlib with OpenSSL, and no "
     "git process: the repository is read from git's own files) and about 7 ms of work, "
     "most of it the pack's marks on MEMORY.md's lines (`pack._memory_lines`, "
     "`similar.held_corrections`)"),
    ("guard, nothing under memory staged", "guard: pre-commit hook, nothing under memory "
     "staged", 1.5,
     "the shim answers an ordinary commit itself (one `git diff --cached`, no python); "
     "it starts python only for memory-shaped paths or a config that could change the "
     "answer, and then costs two process starts"),
    ("distill, 20 new lessons on 10k", "distill, 20 new lessons on 10k", 35.0,
     "~90 ms of imports (no click: `distill/command.py`; what adopts memory only when "
     "there is some: `distill/unadopted.py`); the entry cache's load "
     "(~40 ms at 10k: one lazy entry each, "
     "while `git status` and two children forked at the distill's start list the "
     "journal); a fold that goes on from the last one (~60 ms: the replay, the rules and "
     "the corrections judge only what the new lessons touch, journal/rules.py and "
     "corrections.py, and the cited paths are asked again only after a commit outside "
     "memory, `memgit.refs_same`; but every fact is made again from its kept row and the "
     "kept state "
     "is loaded whole, and written as deltas); the render of every agent's MEMORY.md "
     "and the changed topics (~50 ms) and what changed written (~45 ms); and 16 git "
     "processes (~100 ms of git; HEAD, the branch and its tip are read from git's files): "
     "`status` of the memory root, two `hash-object` side by side (the 0.8 MB "
     "distill-state.json alone), the memory folder's tree from a kept private index "
     "(`write-tree --missing-ok`), one `mktree` per folder above it, `commit-tree`, and "
     "meanwhile the checkout's index updated by path on a copy"),
    ("distill, full 10k", "distill, full, 10k lessons", 150.0,
     "parsing and validating 10k entries (secret scan included; on two cores a forked "
     "child parses half), folding them, rendering 600 topic files and one commit"),
    ("recall, warm index, 10k", "recall, warm index, 10k lessons", 2.5,
     "sqlite3's import, the index signature (the config bytes, a `stat` of every journal "
     "folder) and the FTS5 query"),
    ("`jmem log KEY` at 10k", "log KEY, 10k lessons", 12.0,
     "the log runs the click CLI and git (`git log` of every MEMORY.md and of the fact's "
     "entries); the journal itself is no longer read"),
    ("`jmem hook pre-work` as a command, 10k", "jmem hook pre-work, 10k lessons", 4.0,
     "no config model, no dataclasses, no typing (a test keeps them off every warm hot "
     "path but write): what is left is sqlite3's import, one connection for every "
     "question, and per question an FTS5 query of every word, then a fill from the "
     "words fewer than half the facts hold (`recall.query._weighty`)"),
)


def modules(only: list[str]) -> list[str]:
    """Every bench module, in reading order (ORDER, then any not listed there yet)."""
    found = sorted(p.stem for p in BENCH.glob("bench_*.py"))
    ordered = [m for m in ORDER if m in found] + [m for m in found if m not in ORDER]
    return [m for m in ordered if not only or m.removeprefix("bench_") in only or m in only]


def run_module(name: str, runs: int, scale: str,
               peers: bool = False) -> tuple[list[Row | Figure], str | None]:
    """(rows, None), or ([], why it was skipped)."""
    module = importlib.import_module(name)
    params = inspect.signature(module.rows).parameters
    kwargs: dict[str, object] = {"scale": scale} if "scale" in params else {}
    if "peers" in params:
        kwargs["peers"] = peers
    try:
        return module.rows(runs, **kwargs), None
    except Skipped as exc:
        return [], str(exc)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} at the start"


def goals(rows: list[Row], bare: Timing) -> tuple[list[Row], list[str]]:
    """Every goal as a row against a bare start (the row's own when it has one, else
    `bare`, measured at the start of this run), and why each missed goal is missed."""
    out, why = [], []
    for what, prefix, factor, reason in GOALS:
        row = next((r for r in rows if r.path.startswith(prefix)), None)
        if row is None:
            why.append(f"{what}: not measured in this run")
            continue
        base = row.bare or (row.baseline if row.baseline_name == "python -c pass"
                            and row.baseline else bare)
        met = row.timing.median <= factor * base.median
        out.append(Row(what, row.timing, "python -c pass", base, f"≤ {factor:g}×", met,
                       row.floor))
        if not met:
            floor = (f" Floor {row.floor.median:.1f} ms ({row.floor.median / base.median:.1f}×:"
                     f" {row.floor.parts()}); the goal is {factor * base.median:.1f} ms."
                     if row.floor else "")
            why.append(f"{what}: {reason}.{floor}")
    return out, why


def goal_table(rows: list[Row]) -> str:
    """The goals with their floors: what the path cannot do without, and the rest."""
    out = ["### Goals: ratio to a bare start in this run, and each path's floor", "",
           "| path | median ms | bare start ms | ratio | goal | met | floor ms | floor ratio "
           "| above the floor ms | the floor |",
           "|---|---:|---:|---:|---|---|---:|---:|---:|---|"]
    for r in rows:
        base = r.baseline.median if r.baseline else 0.0
        met = "–" if r.met is None else ("yes" if r.met else "**no**")
        f = r.floor
        floor = (f"{f.median:.1f} | {f.median / base:.1f}× | {r.timing.median - f.median:.1f} "
                 f"| {f.parts()}" if f and base else "– | – | – | –")
        out.append(f"| {r.path} | {r.timing.median:.1f} | {base:.1f} | {r.ratio} | {r.goal} "
                   f"| {met} | {floor} |")
    return "\n".join(out)


def report(results: list[Row | Figure], skipped: list[str], seconds: float, runs: int,
           scale: str, load_line: str, bare: Timing | None = None) -> str:
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
    if bare is not None:
        goal_rows, why = goals(rows, bare)
        lines += ["", goal_table(goal_rows), ""]
        lines += [f"Not met: {line}" for line in why]
    lines += [f"Skipped: {why}" for why in skipped]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--scale", choices=("small", "full"), default="small")
    parser.add_argument("--only", action="append", default=[],
                        help="a module name without bench_ (" + ", ".join(
                            m.removeprefix("bench_") for m in modules([])) + ")")
    parser.add_argument("--peers", action="store_true",
                        help="install and time pre-commit and agent-memory-git beside us, "
                             "then print the goals table")
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "latest.md")
    args = parser.parse_args()
    unknown = [n for n in args.only if not modules([n])]
    if unknown:
        parser.error(f"no bench module {', '.join(unknown)}")
    load_line = load()
    start = time.monotonic()
    bare = python_baseline(BENCH, args.runs) if args.peers else None
    results: list[Row | Figure] = []
    skipped: list[str] = []
    for name in modules(args.only):
        print(f"bench: {name} …", file=sys.stderr, flush=True)
        got, why = run_module(name, args.runs if name != "bench_distill" else min(args.runs, 3),
                              args.scale, args.peers)
        results += got
        if why:
            skipped.append(why)
    text = report(results, skipped, time.monotonic() - start, args.runs, args.scale, load_line,
                  bare)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    return 1 if any(r.met is False for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
