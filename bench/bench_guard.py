"""Benchmark the guard: whole-process timings in a real temporary repository.

    python bench/bench_guard.py [RUNS]

Run it with the interpreter of the venv that has journal-mem installed: the
hooks `jmem init` installs name that interpreter. Measures, in one run:

* `git hook run pre-commit` with nothing under the memory root staged, against
  a bare `python -c pass` from the same venv (goal: at most 1.5x) and against
  `git diff --cached --name-only` (the one git call it must make);
* the same hook with 1,000 new lessons staged in the main checkout (goal:
  at most 500 ms);
* `git hook run post-commit` (starts a background distill and returns; goal
  at most 50 ms);
* `git commit` of one ordinary file with the hooks, with the guard hooks only,
  and without hooks (the baseline).
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import (
    Row,
    Timing,
    bench_env,
    git,
    git_baseline,
    jmem_argv,
    python_baseline,
    table,
    time_command,
)

SETTLE_S = 0.4  # let a commit's background distill finish before the next timed run


def setup(root: Path) -> Path:
    """A repository with journal-mem's git hooks (no Claude Code) and one agent."""
    main = root / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / "README").write_text("bench\n")
    time_command([*jmem_argv(), "init", "--agent", "api", "--no-claude"], main, runs=1,
                 warmup=False)
    git(main, "add", "-A")
    # no hooks for the setup commit: its post-commit would start a background distill
    # that folds the lessons staged later and writes its files into the work tree
    git(main, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "start")
    return main


def stage_lessons(main: Path, count: int) -> None:
    folder = main / ".claude" / "agent-memory" / "api" / "journal"
    for i in range(count):
        (folder / f"2026-01-02-lesson-{i:04d}.md").write_text(
            f"---\nagent: api\ncreated: 2026-01-02T03:04:05+00:00\ntopic: testing\n"
            f"---\n\n# Lesson number {i} about the test suite\n\n"
            f"Run the suite with -p no:randomly; fixture {i} is shared.\n")
    git(main, "add", "-A")


def hook(name: str) -> list[str]:
    return ["git", "hook", "run", name]


def _commit_rows(repo: Path, runs: int, base: Timing) -> list[Row]:
    counter = itertools.count()

    def change() -> None:
        (repo / "app.py").write_text(f"x = {next(counter)}\n")
        git(repo, "add", "app.py")
        time.sleep(SETTLE_S)

    commit = ["git", "commit", "-q", "-m", "c"]
    with_hooks = time_command(commit, repo, runs, setup=change)
    without = time_command(["git", "-c", "core.hooksPath=/dev/null", *commit[1:]], repo, runs,
                           setup=change)
    post_commit = repo / ".git" / "hooks" / "post-commit"
    post_commit.rename(post_commit.with_suffix(".off"))
    guard_only = time_command(commit, repo, runs, setup=change)
    post_commit.with_suffix(".off").rename(post_commit)
    return [
        Row("guard: git commit of one file, all hooks", with_hooks, "git commit, no hooks",
            without, "–", None),
        Row("guard: git commit of one file, guard hooks only", guard_only,
            "git commit, no hooks", without, "–", None),
        Row("guard: git commit of one file, no hooks", without, "python -c pass", base, "–",
            None),
    ]


def rows(runs: int = 10) -> list[Row]:
    """Every guard path, each against its baseline measured in this run."""
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="jmem-bench-guard-")))
    try:
        repo = setup(root)
        (repo / "app.py").write_text("x = 1\n")
        git(repo, "add", "app.py")
        base = python_baseline(repo, runs)
        diff = git_baseline(repo, runs)
        fast = time_command(hook("pre-commit"), repo, runs)
        git(repo, "reset", "-q")
        stage_lessons(repo, 1000)
        gdiff = git_baseline(repo, max(3, runs // 3))
        many = time_command(hook("pre-commit"), repo, max(3, runs // 3))
        git(repo, "commit", "-q", "--no-verify", "-m", "lessons")
        settle: Callable[[], None] = lambda: time.sleep(SETTLE_S)  # noqa: E731
        post = time_command(hook("post-commit"), repo, runs, setup=settle,
                            env=bench_env())
        out = [
            Row("guard: pre-commit hook, nothing under memory staged", fast, "python -c pass",
                base, "≤ 1.5×", fast.median <= 1.5 * base.median),
            Row("guard: pre-commit hook, nothing under memory staged", fast,
                "git diff --cached", diff, "–", None),
            Row("guard: pre-commit hook, 1,000 new lessons staged", many, "git diff --cached",
                gdiff, "≤ 500 ms", many.median <= 500),
            Row("guard: post-commit hook (starts distill, returns)", post, "python -c pass",
                base, "≤ 50 ms", post.median <= 50),
        ]
        return out + _commit_rows(repo, runs, base)
    finally:
        time.sleep(SETTLE_S)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10), "guard"))
