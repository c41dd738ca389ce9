"""`jmem consolidate`: the plan's time at 10k lessons against a full distill measured in the
same run, and the plan's duplicates on the two hand-labelled paraphrase sets.

    python bench/bench_consolidate.py [RUNS]

Goal: the plan of 10k lessons (read, fold, render every agent's files in memory
to find topics over budget, cluster) within a full distill's time; on the set
the matcher was tuned on (fixtures/paraphrases.py), pair recall and precision
≥ 90%; the blind set (fixtures/paraphrases_blind.py) is reported, with no goal.
Both runs start from the generated commit with no cache (bench_distill's repository).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(1, str(ROOT))
from bench_distill import full, repo_for, reset  # noqa: E402
from runner import Figure, Row, bench_env, jmem_argv, table, time_command  # noqa: E402

from fixtures import paraphrase_eval, paraphrases, paraphrases_blind  # noqa: E402

COUNT = 10_000


def plan_time(runs: int) -> Row:
    """The plan of 10k lessons, and a full distill of the same repository, in this run."""
    dest, sha = repo_for(COUNT)
    distill = full(COUNT, runs)
    plan = time_command([*jmem_argv(), "consolidate", "--json"], dest, runs,
                        setup=lambda: reset(dest, sha))
    return Row(f"consolidate plan, 10k lessons (peak {plan.peak:.0f} MB)", plan,
               "distill, full, 10k", distill, "≤ the full distill", plan.median <= distill.median)


def labelled(module: ModuleType, name: str, goal: bool) -> list[Figure]:
    """The plan's duplicates on a real repository holding the set."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = paraphrase_eval.build(Path(tmp) / "repo", module)
        out = subprocess.run([*jmem_argv(), "consolidate", "--json"], cwd=repo, check=True,
                             capture_output=True, env=bench_env()).stdout
    score = paraphrase_eval.score(module, paraphrase_eval.found_in_plan(json.loads(out)))
    by = ", ".join(f"{d} {w}/{n}" for d, (w, n) in score.whole_by.items())
    return [
        Figure(f"duplicates, {name}: clusters found whole ({by})",
               f"{score.whole}/{score.clusters}", "–", "–", "–", None),
        Figure(f"duplicates, {name}: pair recall ({score.right_pairs}/{score.true_pairs})",
               f"{score.recall:.1%}", "–", "–", "≥ 90%" if goal else "–",
               score.recall >= 0.9 if goal else None),
        Figure(f"duplicates, {name}: pair precision ({score.right_pairs}/{score.found_pairs})",
               f"{score.precision:.1%}", "–", "–", "≥ 90%" if goal else "–",
               score.precision >= 0.9 if goal else None),
    ]


def rows(runs: int = 3) -> list[Row | Figure]:
    """The plan's time, then the figures of both labelled sets."""
    return [plan_time(runs), *labelled(paraphrases, "set 1 (tuned on)", True),
            *labelled(paraphrases_blind, "set 2 (blind)", False)]


if __name__ == "__main__":
    args = sys.argv[1:]
    results = rows(int(args[0]) if args else 3)
    print(table([r for r in results if isinstance(r, Row)], "consolidate"))
    for f in results:
        if isinstance(f, Figure):
            print(f"{f.what}: {f.value} (goal {f.goal})")
