"""Distill benchmarks: full distills of 1k / 10k (/ 100k with --big) lessons over 20
agents, 20 new lessons on 10k (incremental), and peak RSS; whole-process timings,
median of a few runs, with a bare interpreter start measured in the same run.

    python bench/bench_distill.py [--runs 3] [--big] [--work DIR]

Goals (issue 4): 10k <= 3 s; 100k <= 30 s and <= 300 MB; incremental <= 1 s; linear.
Repositories come from the seeded generator (fixtures/generate.py, seed 1) and are
kept under --work between runs (default bench/results/repos).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.generate import generate, git, lessons, write_lessons  # noqa: E402

AGENTS = 20


def timed(argv: list[str], cwd: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS in MB, exit code) of one child process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "JMEM_"))}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid",
               PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_maxrss // 1024, proc.returncode


def jmem(*args: str) -> list[str]:
    return [sys.executable, "-m", "journal_mem", *args]


def repo_for(work: Path, count: int) -> tuple[Path, str]:
    """The generated repository for `count` lessons and its commit (generated once)."""
    dest = work / f"l{count}"
    if not (dest / ".git").exists():
        shutil.rmtree(dest, ignore_errors=True)
        generate(dest, AGENTS, count, seed=1)
    sha = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=dest,
                         capture_output=True, text=True, check=True).stdout.split()[0]
    return dest, sha


def reset(dest: Path, sha: str) -> None:
    """Back to the generated commit, with no distill state or cache."""
    git(dest, "reset", "-q", "--hard", sha)
    git(dest, "clean", "-qfdx")
    shutil.rmtree(dest / ".git" / "journal-mem", ignore_errors=True)


def full(work: Path, count: int, runs: int) -> dict[str, float]:
    dest, sha = repo_for(work, count)
    times, rss = [], []
    for _ in range(runs):
        reset(dest, sha)
        seconds, mb, code = timed(jmem("distill"), dest)
        assert code == 0, f"distill of {count} exited {code}"
        times.append(seconds)
        rss.append(mb)
    return {"lessons": count, "median_s": statistics.median(times), "min_s": min(times),
            "peak_rss_mb": max(rss)}


def incremental(work: Path, runs: int) -> dict[str, float]:
    dest, sha = repo_for(work, 10_000)
    reset(dest, sha)
    assert timed(jmem("distill"), dest)[2] == 0
    names = [f"agent-{i:02d}" for i in range(AGENTS)]
    times, rss = [], []
    for run in range(runs):
        write_lessons(dest, lessons(names, 20, seed=100 + run), start=10**7 + run * 20)
        seconds, mb, code = timed(jmem("distill"), dest)
        assert code == 0
        times.append(seconds)
        rss.append(mb)
    return {"lessons": 20, "on": 10_000, "median_s": statistics.median(times),
            "min_s": min(times), "peak_rss_mb": max(rss)}


def baseline(runs: int) -> dict[str, float]:
    bare = [timed([sys.executable, "-c", "pass"], ROOT)[0] for _ in range(runs + 2)]
    version = [timed(jmem("--version"), ROOT)[0] for _ in range(runs)]
    return {"python_c_pass_s": statistics.median(bare), "jmem_version_s":
            statistics.median(version)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big", action="store_true", help="also 100k lessons (slow to generate)")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "results" / "repos")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = {"baseline": baseline(args.runs)}
    sizes = [1_000, 10_000] + ([100_000] if args.big else [])
    results["full"] = [full(args.work, n, args.runs if n < 100_000 else 1) for n in sizes]
    results["incremental"] = incremental(args.work, args.runs)
    print(json.dumps(results, indent=1))
    out = ROOT / "bench" / "results" / "distill.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
