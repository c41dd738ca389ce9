"""Scale benchmarks: four clones racing `write` + `distill --push` against
one local bare remote, and the watcher's latency from a write to the distilled file.

    python bench/bench_scale.py [--runs 10] [--rounds 5]

Race: wall time of 4 clones x ROUNDS (each round: one `jmem write`, one
`jmem distill --push`), with the rejected pushes counted; baseline: the same
4 x ROUNDS steps run one after another (nobody races). Watcher: a running
`jmem watch` (distill.threshold = 1); a lesson file is created and the time
until the lesson's title is in MEMORY.md is measured (median of --runs);
baseline: one `jmem distill` process folding one new lesson.
Run it with an installed (non-editable) journal-mem for users' figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner import (
    Row,
    Timing,
    bench_env,
    git,
    jmem_argv,
    machine_line,
    table,
    time_command,
)

AGENTS = ("api", "web", "search", "docs")
MEM = ".claude/agent-memory"
ENTRY = """---
agent: api
created: {created}
topic: bench
key: {key}
---

# {title}

Measured by bench_scale.py.
"""


def run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, env=bench_env(**env), capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} failed ({proc.returncode}): {proc.stdout}{proc.stderr}")
    return proc


def make_remote(work: Path) -> Path:
    seed = work / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "README").write_text("bench\n")
    agents = [a for agent in AGENTS for a in ("--agent", agent)]
    run([*jmem_argv(), "init", *agents, "--no-git-hooks", "--no-claude"], seed)
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "init")
    remote = work / "remote.git"
    git(work, "clone", "-q", "--bare", str(seed), str(remote))
    return remote


def machine(clone: Path, agent: str, rounds: int, rejected: list[int]) -> None:
    for r in range(rounds):
        run([*jmem_argv(), "write", "--agent", agent, "--topic", "fleet", "--title",
             f"Lesson {r} from {clone.name}"], clone)
        out = run([*jmem_argv(), "distill", "--push", "--json"], clone)
        rejected.append(int(json.loads(out.stdout)["push"]["rejected"]))


def race(rounds: int, parallel: bool) -> tuple[float, int, int]:
    """(seconds, pushes, rejected pushes) of 4 clones x `rounds`."""
    with tempfile.TemporaryDirectory(prefix="jmem-bench-race-") as tmp:
        work = Path(tmp)
        remote = make_remote(work)
        clones = []
        for i in range(len(AGENTS)):
            git(work, "clone", "-q", str(remote), str(work / f"m{i}"))
            clones.append(work / f"m{i}")
        rejected: list[int] = []
        threads = [threading.Thread(target=machine, args=(c, a, rounds, rejected))
                   for c, a in zip(clones, AGENTS, strict=True)]
        start = time.perf_counter()
        for t in threads:
            t.start()
            if not parallel:
                t.join()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - start
        final = work / "final"
        git(work, "clone", "-q", str(remote), str(final))
        run([*jmem_argv(), "check"], final)  # every lesson folded, files equal a rebuild
        lessons = len(list(final.glob(".claude/agent-memory/*/journal/*.md")))
        expected = len(AGENTS) * rounds
        if len(rejected) != expected or lessons != expected:  # a thread failed, or a loss
            raise RuntimeError(f"race: {len(rejected)} of {expected} pushes finished, "
                               f"{lessons} of {expected} lessons on the remote")
        return seconds, len(rejected), sum(rejected)


def initialised_repo(main: Path) -> Path:
    """A new repository with agent api, set up by `jmem init` (no hooks) and committed."""
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    run([*jmem_argv(), "init", "--agent", "api", "--no-git-hooks", "--no-claude"], main)
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "init")
    return main


def watch_latency(runs: int, debounce: float) -> Timing:
    """Milliseconds from creating a lesson file to its title in MEMORY.md."""
    with tempfile.TemporaryDirectory(prefix="jmem-bench-watch-") as tmp:
        main = initialised_repo(Path(tmp) / "main")
        env = bench_env(JMEM_DISTILL_THRESHOLD="1")
        proc = subprocess.Popen([*jmem_argv(), "watch", "--debounce", str(debounce)], cwd=main,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            if "jmem watch: watching" in line:
                break
        threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep the pipe empty
        memory = main / MEM / "api" / "MEMORY.md"
        samples = []
        try:
            for i in range(runs + 1):
                title = f"Watched lesson number {i}"
                created = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
                path = main / MEM / "api" / "journal" / f"2026-01-01-watched-{i}.md"
                start = time.perf_counter()
                path.write_text(ENTRY.format(created=created, key=f"watched-{i}", title=title))
                while not (memory.exists() and title in memory.read_text()):
                    time.sleep(0.005)
                if i:
                    samples.append((time.perf_counter() - start) * 1000)
                time.sleep(debounce + 0.3)  # let the watcher settle before the next write
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        return Timing(tuple(samples))


def distill_baseline(runs: int) -> Timing:
    """One `jmem distill` process folding one new lesson (what the watcher saves a person)."""
    with tempfile.TemporaryDirectory(prefix="jmem-bench-distill-") as tmp:
        main = initialised_repo(Path(tmp) / "main")
        counter = iter(range(10_000))

        def one_lesson() -> None:
            i = next(counter)
            created = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
            (main / MEM / "api" / "journal" / f"2026-01-01-base-{i}.md").write_text(
                ENTRY.format(created=created, key=f"base-{i}", title=f"Baseline lesson {i}"))

        return time_command([*jmem_argv(), "distill"], main, runs, setup=one_lesson)


def rows(runs: int, rounds: int = 5) -> list[Row]:
    """The race (it raises unless every lesson landed) and the watcher's latency."""
    seq_s, _, _ = race(rounds, parallel=False)
    par_s, pushes, rejected = race(rounds, parallel=True)
    steps = f"4 clones × {rounds} rounds"
    baseline = distill_baseline(runs)
    out = [
        Row(f"race: {steps}, write + distill --push ({pushes} pushes, {rejected} rejected "
            "and retried)", Timing((par_s * 1000,)),
            "same steps, one clone at a time", Timing((seq_s * 1000,)),
            "every lesson lands, no force", True),
    ]
    for debounce in (1.0, 0.1):
        out.append(Row(f"watch: write → MEMORY.md (debounce {debounce:g} s)",
                       watch_latency(runs, debounce), "jmem distill (1 new lesson)", baseline,
                       "–", None))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(table(rows(args.runs, args.rounds), f"journal-mem scale ({machine_line()})"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
