"""Benchmark the guard: whole-process timings in a real temporary repository.

    python bench/bench_guard.py [--runs N]

Run it with the interpreter of the venv that has journal-mem installed: the
hooks `jmem init` installs name that interpreter. Measures, in one run:

* `git hook run pre-commit` with nothing under the memory root staged, against
  a bare `python -c pass` from the same venv (goal: at most 3x);
* the same hook with 1,000 new lessons staged in the main checkout (goal:
  at most 500 ms);
* `git commit` of one ordinary file with the hooks and without them.

One warm-up per case, then N runs; prints median and min-max.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

LOCAL_GIT_VARS = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_PREFIX", "GIT_COMMON_DIR")


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in LOCAL_GIT_VARS and not k.startswith("JMEM_")}
    env.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid",
               GIT_CONFIG_NOSYSTEM="1")
    return env


ENV = environment()
SETTLE_S = 0.4


def run(args: list[str], cwd: str, check: bool = True) -> None:
    proc = subprocess.run(args, cwd=cwd, env=ENV, capture_output=True, check=False)
    if check and proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(args)} failed:\n{proc.stdout!r}\n{proc.stderr!r}")


def timed(fn: Callable[[], None], runs: int, before: Callable[[], None] | None = None
          ) -> list[float]:
    """Milliseconds per call of `fn` (one warm-up first); `before` runs untimed each time."""
    samples = []
    for i in range(runs + 1):
        if before:
            before()
        start = time.perf_counter()
        fn()
        elapsed = (time.perf_counter() - start) * 1000
        if i:
            samples.append(elapsed)
    return samples


def line(label: str, samples: list[float]) -> str:
    return (f"{label:<66} median {statistics.median(samples):7.1f} ms   "
            f"min-max {min(samples):6.1f}-{max(samples):6.1f}   (n={len(samples)})")


def setup(root: str) -> str:
    main = os.path.join(root, "main")
    os.makedirs(main)
    run(["git", "init", "-q", "-b", "main"], main)
    with open(os.path.join(main, "README"), "w") as fh:
        fh.write("bench\n")
    run([sys.executable, "-m", "journal_mem", "init", "--agent", "api", "--no-claude"], main)
    run(["git", "add", "-A"], main)
    run(["git", "commit", "-q", "-m", "start"], main)
    return main


def stage_lessons(main: str, count: int) -> None:
    folder = os.path.join(main, ".claude", "agent-memory", "api", "journal")
    for i in range(count):
        with open(os.path.join(folder, f"2026-01-02-lesson-{i:04d}.md"), "w") as fh:
            fh.write(f"---\nagent: api\ncreated: 2026-01-02T03:04:05+00:00\ntopic: testing\n"
                     f"---\n\n# Lesson number {i} about the test suite\n\n"
                     f"Run the suite with -p no:randomly; fixture {i} is shared.\n")
    run(["git", "add", "-A"], main)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    root = os.path.realpath(tempfile.mkdtemp(prefix="jmem-bench-guard-"))
    try:
        repo = setup(root)
        version = subprocess.check_output(["git", "--version"], text=True).strip()
        print(f"python {sys.executable}\n{version}")
        with open(os.path.join(repo, "app.py"), "w") as fh:
            fh.write("x = 1\n")
        run(["git", "add", "app.py"], repo)
        bare = timed(lambda: run([sys.executable, "-c", "pass"], repo), runs)
        hook = timed(lambda: run(["git", "hook", "run", "pre-commit"], repo), runs)
        run(["git", "reset", "-q"], repo)
        print(line("python -c pass (same venv)", bare))
        print(line("git hook run pre-commit, nothing under memory staged", hook))
        ratio = statistics.median(hook) / statistics.median(bare)
        print(f"{'':<66} ratio {ratio:.2f}x (goal <= 3x)")

        stage_lessons(repo, 1000)
        many = timed(lambda: run(["git", "hook", "run", "pre-commit"], repo),
                     max(3, runs // 4))
        print(line("git hook run pre-commit, 1,000 new lessons staged", many))
        print(f"{'':<66} goal <= 500 ms: {'met' if statistics.median(many) <= 500 else 'MISSED'}")
        run(["git", "commit", "-q", "--no-verify", "-m", "lessons"], repo)

        counter = iter(range(10**6))

        def change() -> None:
            with open(os.path.join(repo, "app.py"), "w") as fh:
                fh.write(f"x = {next(counter)}\n")
            run(["git", "add", "app.py"], repo)
            # let the previous commit's background distill finish: commits are not
            # back to back in real use, and its CPU would otherwise be charged here
            time.sleep(SETTLE_S)

        post = timed(lambda: run(["git", "hook", "run", "post-commit"], repo), runs,
                     lambda: time.sleep(SETTLE_S))
        print(line("git hook run post-commit (starts distill, returns)", post))
        print(f"{'':<66} goal <= 50 ms: {'met' if statistics.median(post) <= 50 else 'MISSED'}")

        with_hooks = timed(lambda: run(["git", "commit", "-q", "-m", "c"], repo), runs, change)
        without = timed(lambda: run(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q",
                                     "-m", "c"], repo), runs, change)
        post_commit = os.path.join(repo, ".git", "hooks", "post-commit")
        os.rename(post_commit, post_commit + ".off")
        guard_only = timed(lambda: run(["git", "commit", "-q", "-m", "c"], repo), runs, change)
        os.rename(post_commit + ".off", post_commit)
        print(line("git commit of one ordinary file, hooks installed", with_hooks))
        print(line("git commit of one ordinary file, guard hooks only (no post-commit)",
                   guard_only))
        print(line("git commit of one ordinary file, no hooks", without))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
