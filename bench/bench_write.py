"""`jmem write` whole-process time vs a bare `python -c pass` (goal: <= 3x)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import Row, floor_of, git, jmem_argv, python_baseline, table, time_command


def rows(runs: int = 10) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="jmem-bench-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        git(repo, "commit", "-q", "--allow-empty", "-m", "start")
        time_command([*jmem_argv(), "init", "--agent", "api", "--no-git-hooks", "--no-claude"],
                     repo, runs=0)
        wt = Path(tmp) / "wt"
        git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
        baseline = python_baseline(repo, runs)
        argv = [*jmem_argv(), "write", "--agent", "api", "--topic", "bench", "--title",
                "A lesson from the benchmark", "--body", "Body text."]
        main = time_command(argv, repo, runs)
        floor = floor_of(argv, repo, runs)
        linked = time_command(argv, wt, runs)
    goal = 3 * baseline.median
    return [
        Row("write (main checkout)", main, "python -c pass", baseline, "≤ 3×",
            main.median <= goal, floor),
        Row("write (linked worktree)", linked, "python -c pass", baseline, "≤ 3×",
            linked.median <= goal),
    ]


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10), "jmem write"))
