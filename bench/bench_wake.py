"""Benchmark: `jmem wake --hook claude` on a repository with 10k lessons.

Goal (issue 5): median <= 60 ms and <= 6x a bare `python -c pass` with the
same interpreter, measured in the same run. The repository has two agents,
10,000 journal entries (all but `--pending` of them folded by the last
distill, as after a distill at the default threshold), a 200-line MEMORY.md
in the main checkout, and the hook runs from a linked worktree whose own
MEMORY.md is older (so the main one is injected: the most work it does).

    python bench/bench_wake.py [--lessons 10000] [--pending 10] [--runs 20]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from journal_mem.entry import build, render
from journal_mem.gitfacts import clean_env

AGENTS = ("api", "web")
MEM = os.path.join(".claude", "agent-memory")


def git(cwd: str, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=ENV)


ENV = clean_env({"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
                 "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"})
for _name in [k for k in ENV if k.startswith("JMEM_")]:
    del ENV[_name]


def make_repo(root: str, lessons: int, pending: int) -> tuple[str, str]:
    """A main checkout with `lessons` entries and a linked worktree; returns both paths."""
    main, wt = os.path.join(root, "main"), os.path.join(root, "wt")
    os.makedirs(main)
    git(main, "init", "-q", "-b", "main")
    run_jmem(main, "init", "--no-git-hooks", *[f"--agent={a}" for a in AGENTS])
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    folded = []
    for i in range(lessons):
        agent = AGENTS[i % len(AGENTS)]
        created = start + dt.timedelta(minutes=i)
        entry = build(agent=agent, topic=f"topic-{i % 20}", title=f"Lesson {i} about thing {i}",
                      body="Why it holds and how to apply it.", created=created)
        name = f"{created.date().isoformat()}-lesson-{i}-{i:010x}.md"
        with open(os.path.join(main, MEM, agent, "journal", name), "w") as fh:
            fh.write(render(entry))
        if i < lessons - pending:
            folded.append(f"{agent}/journal/{name}")
    with open(os.path.join(main, MEM, "distill-state.json"), "w") as fh:
        json.dump({"schema": 1, "date": "2026-03-01", "folded": sorted(folded)}, fh)
    for agent in AGENTS:
        lines = [f"- Fact {j} of {agent}, ranked line of the distilled memory [fact-{j}]"
                 for j in range(200)]
        with open(os.path.join(main, MEM, agent, "MEMORY.md"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "10k lessons")
    git(main, "worktree", "add", "-q", "-b", "feature", wt)
    with open(os.path.join(main, MEM, "api", "MEMORY.md"), "a") as fh:
        fh.write("- A fact the worktree's copy does not have yet [fresh]\n")
    return main, wt


def jmem_argv() -> list[str]:
    """The console script when installed (what Claude Code runs), else `python -m`."""
    script = os.path.join(os.path.dirname(sys.executable), "jmem")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "journal_mem"]


def run_jmem(cwd: str, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*jmem_argv(), *args], cwd=cwd, input=stdin, capture_output=True,
                          check=True, env=ENV)


def timed(argv: list[str], cwd: str, stdin: bytes, runs: int) -> list[float]:
    """Wall-clock milliseconds of `runs` runs after one warm-up."""
    out = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, check=True, env=ENV)
        if i:
            out.append((time.perf_counter() - t0) * 1000)
    return out


def summary(label: str, ms: list[float]) -> str:
    return (f"{label:<44} median {statistics.median(ms):6.1f} ms  "
            f"(min {min(ms):.1f} – max {max(ms):.1f}, n={len(ms)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", type=int, default=10_000)
    parser.add_argument("--pending", type=int, default=10)
    parser.add_argument("--runs", type=int, default=20)
    opts = parser.parse_args()
    root = tempfile.mkdtemp(prefix="jmem-bench-wake-")
    try:
        _main, wt = make_repo(root, opts.lessons, opts.pending)
        stdin = json.dumps({"session_id": "bench", "cwd": wt, "hook_event_name": "SubagentStart",
                            "agent_type": "api", "agent_id": "b1"}).encode()
        out = json.loads(run_jmem(wt, "wake", "--hook", "claude", stdin=stdin).stdout)
        context = out["hookSpecificOutput"]["additionalContext"]
        assert "Lesson" in context and "[jmem: cut" in context, context[-800:]
        base = timed([sys.executable, "-c", "pass"], wt, b"", opts.runs)
        hook = timed([*jmem_argv(), "wake", "--hook", "claude"], wt, stdin, opts.runs)
        ratio = statistics.median(hook) / statistics.median(base)
        print(f"repository: {opts.lessons} lessons, {opts.pending} pending, from a worktree; "
              f"context {len(context)} chars")
        print(summary("python -c pass (baseline)", base))
        print(summary("jmem wake --hook claude", hook))
        print(f"ratio {ratio:.1f}x (goal <= 6x and <= 60 ms)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
