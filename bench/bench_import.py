"""Import benchmark: `jmem import memory` of a real team's hand-written memory after six
weeks (13 agents, 109 topic files, about 1,019 lines, beside a journal of 256 entries),
from parsing to the one commit; whole-process timing against a bare interpreter start.

    python bench/bench_import.py [RUNS]

Goal: <= 2 s. Each run starts from the same commit (nothing imported yet), with the
entry cache warm, as on a machine where jmem already ran.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(1, str(ROOT))
from runner import (  # noqa: E402
    Row,
    Timing,
    bench_env,
    git,
    jmem_argv,
    python_baseline,
    table,
    time_command,
)

from fixtures.generate import lessons, write_lessons  # noqa: E402
from fixtures.handwritten import AGENT_NAMES, write_tree  # noqa: E402

AGENTS, TOPICS, LINES, JOURNAL = 13, 109, 1019, 256


def build(dest: Path) -> tuple[str, int, int]:
    """The repository: hand-written memory and a journal, committed. (commit, facts, lines)"""
    git(dest, "init", "-q", "-b", "main")
    tree = write_tree(dest, AGENTS, TOPICS, LINES)
    write_lessons(dest, lessons(list(AGENT_NAMES[:AGENTS]), JOURNAL, seed=7))
    subprocess.run([*jmem_argv(), "init", "--no-git-hooks", "--no-claude", "--no-import"],
                   cwd=dest, env=bench_env(), check=True, capture_output=True)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "six weeks of hand-written memory")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=dest, env=bench_env(),
                         capture_output=True, text=True, check=True).stdout.strip()
    return sha, len(tree.markers), tree.lines


def timed(runs: int) -> tuple[Timing, int, int]:
    """(timing, facts, lines) of `jmem import memory` on a fresh copy each run."""
    work = Path(tempfile.mkdtemp(prefix="jmem-bench-import-"))
    try:
        dest = work / "repo"
        dest.mkdir()
        sha, facts, lines = build(dest)

        def reset() -> None:
            git(dest, "reset", "-q", "--hard", sha)
            git(dest, "clean", "-qfd", "--", ".claude")

        timing = time_command([*jmem_argv(), "import", "memory"], dest, runs, setup=reset)
        return timing, facts, lines
    finally:
        shutil.rmtree(work, ignore_errors=True)


def rows(runs: int = 5) -> list[Row]:
    """One row: the import, against `python -c pass`."""
    base = python_baseline(ROOT, max(runs, 5))
    timing, facts, lines = timed(runs)
    name = (f"import memory, {AGENTS} agents, {TOPICS} topic files, {lines} lines "
            f"({facts} facts; journal of {JOURNAL})")
    return [Row(name, timing, "python -c pass", base, "≤ 2 s", timing.median <= 2000)]


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 5), "import"))
