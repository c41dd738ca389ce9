"""`jmem write` whole-process time vs a bare `python -c pass` (goal: <= 3x)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import (
    Row,
    floor_of,
    git,
    jmem_argv,
    table,
    time_against,
    time_command,
)


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
        argv = [*jmem_argv(), "write", "--agent", "api", "--topic", "bench", "--title",
                "A lesson from the benchmark", "--body", "Body text."]
        # each against a bare start timed in turn with it
        main, bare = time_against(argv, repo, runs)
        floor = floor_of(argv, repo, runs)
        linked, linked_bare = time_against(argv, wt, runs)
    return [
        Row("write (main checkout)", main, "python -c pass", bare, "≤ 3×",
            main.median <= 3 * bare.median, floor),
        Row("write (linked worktree)", linked, "python -c pass", linked_bare, "≤ 3×",
            linked.median <= 3 * linked_bare.median),
    ]


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10), "jmem write"))
