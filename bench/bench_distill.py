"""Distill benchmarks: full distills of 1k and 10k (and 100k with scale "full") lessons
over 20 agents, 20 new lessons on 10k (incremental), peak RSS, and how cost grows;
whole-process timings against a bare interpreter start measured in the same run.

    python bench/bench_distill.py [RUNS] [small|full]

Goals (docs/DESIGN.md, "Budgets"): 10k <= 150x a bare start; 100k <= 30 s and
<= 300 MB; 20 new lessons on 10k <= 35x; cost linear in lessons (checked as: 10x
the lessons costs at most 12x the time). The 20 new lessons are also timed on 1k
(and 100k with scale "full"), so the table shows how that cost grows with the
journal; so is `git add` + `git commit` of 20 such lessons alone, a floor of it (git
writes again the tree of each journal folder they land in, and the whole index), and
the first `write` after such a distill (the recall index's full update), and the first
`write` of a new day.
Repositories come from the seeded generator (fixtures/generate.py, seed 1) and are
kept under bench/results/repos between runs (generating 100k takes a while).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(1, str(ROOT))
from runner import (  # noqa: E402
    Floor,
    Row,
    Timing,
    bench_env,
    floor_of,
    jmem_argv,
    python_baseline,
    table,
    time_against,
    time_command,
)

from fixtures.generate import generate, git, lessons, write_lessons  # noqa: E402
from journal_mem.gitops.indexlock import QUIET_S  # noqa: E402

AGENTS = 20
WORK = ROOT / "bench" / "results" / "repos"
SIZES = {"small": (1_000, 10_000), "full": (1_000, 10_000, 100_000)}
LINEAR_SLACK = 1.2  # 10x the lessons may cost 12x the time


def label(count: int) -> str:
    return f"{count // 1000}k"


def repo_for(count: int, work: Path = WORK) -> tuple[Path, str]:
    """The generated repository for `count` lessons and its first commit (generated once)."""
    dest = work / f"l{count}"
    if not (dest / ".git").exists():
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        generate(dest, AGENTS, count, seed=1)
    sha = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=dest,
                         capture_output=True, text=True, check=True,
                         env=bench_env()).stdout.split()[0]
    return dest, sha


def reset(dest: Path, sha: str) -> None:
    """Back to the generated commit, with no distill state, cache or index."""
    git(dest, "reset", "-q", "--hard", sha)
    git(dest, "clean", "-qfdx")
    shutil.rmtree(dest / ".git" / "journal-mem", ignore_errors=True)


def full(count: int, runs: int) -> Timing:
    """A full distill (empty cache) of `count` lessons, from the generated commit."""
    dest, sha = repo_for(count)
    big = count >= 100_000
    return time_command([*jmem_argv(), "distill"], dest, 1 if big else runs,
                        setup=lambda: reset(dest, sha), warmup=not big)


def full_against(count: int, runs: int) -> tuple[Timing, Timing]:
    """`full`, each run after a bare start (`runner.time_against`): the goal's ratio."""
    dest, sha = repo_for(count)
    return time_against([*jmem_argv(), "distill"], dest, runs, setup=lambda: reset(dest, sha))


def full_floor(count: int, runs: int) -> Floor:
    """The floor (`runner.Floor`) of `full`."""
    dest, sha = repo_for(count)
    return floor_of([*jmem_argv(), "distill"], dest, runs, setup=lambda: reset(dest, sha))


def incremental(runs: int, count: int = 10_000) -> tuple[Timing, Timing]:
    """20 new lessons, written now, on a distilled journal of `count` (the warm-up is the
    first full distill), each run after a bare start (`runner.time_against`)."""
    dest, sha = repo_for(count)
    reset(dest, sha)
    return time_against([*jmem_argv(), "distill"], dest, runs, setup=_adder(dest, 0))


def incremental_floor(runs: int, count: int = 10_000) -> Floor:
    """The floor of `incremental`, on its repository as that left it."""
    dest, _ = repo_for(count)
    return floor_of([*jmem_argv(), "distill"], dest, runs, setup=_adder(dest, 10**5))


def git_commit(runs: int, count: int = 10_000) -> Timing:
    """What git alone takes to commit 20 new lessons written as `incremental` writes them:
    `git add` of their files and `git commit`, in one process (`sh`), on the repository as
    `incremental` left it. A floor of the distill, which commits them too: a journal
    folder is one tree object of all its files, so each folder a lesson lands in is hashed
    and written again whole, and the index of every file is read and written."""
    dest, _ = repo_for(count)
    written: list[Path] = []
    script = 'git add -- "$@" && git commit -q --no-verify -m "20 new lessons"'
    return time_command(lambda: ["sh", "-c", script, "sh", *map(str, written)], dest, runs,
                        setup=_adder(dest, 2 * 10**5, written))


def first_write(runs: int, count: int = 10_000) -> Timing:
    """`jmem write` of one lesson right after a distill of 20 new lessons written as files
    (as the outbox, a pull or an import brings them): the recall index could not append
    them, so the write's key check brings it up to date in full first. Not a goal: how
    the cost an agent waits for after a distill grows with the journal."""
    dest, _ = repo_for(count)
    add = _adder(dest, 3 * 10**5)
    numbers = iter(range(10**6))

    def setup() -> None:
        add()
        subprocess.run([*jmem_argv(), "distill"], cwd=dest, env=bench_env(), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    return time_command(lambda: [*jmem_argv(), "write", "--agent", "agent-00", "--topic",
                                 "bench", "--title", f"A lesson after a distill {next(numbers)}",
                                 "--body", "What was learned."], dest, runs, setup=setup)


def new_day_write(runs: int, count: int = 10_000) -> Timing:
    """`jmem write` of the first lesson of a day: the recall index was brought up to date
    the day before and nothing else changed. The day is moved as the clock moves it for
    the index: its signature's date is set back one day (the signature is how the index
    knows the day it holds the facts of). Not a goal: on a new day every fact's time
    limit is judged again."""
    dest, _ = repo_for(count)
    numbers = iter(range(10**6))

    def setup() -> None:
        subprocess.run([*jmem_argv(), "recall", "a question"], cwd=dest, env=bench_env(),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        back_a_day(dest)

    return time_command(lambda: [*jmem_argv(), "write", "--agent", "agent-00", "--topic",
                                 "bench", "--title", f"The first lesson of a day {next(numbers)}",
                                 "--body", "What was learned."], dest, runs, setup=setup)


def back_a_day(dest: Path) -> None:
    """Sign the recall index of `dest` (current today) as of yesterday."""
    today = dt.datetime.now(dt.UTC).date()
    with contextlib.closing(sqlite3.connect(dest / ".git/journal-mem/index/recall.sqlite")) as conn:
        (signed,) = conn.execute("SELECT value FROM meta WHERE name = 'signature'").fetchone()
        day, rest = signed.split("\n", 1)  # its first line is its date (`index.signature`)
        assert day == today.isoformat(), "the index is not current for today"
        yesterday = (today - dt.timedelta(days=1)).isoformat()
        conn.execute("UPDATE meta SET value = ? WHERE name = 'signature'",
                     (f"{yesterday}\n{rest}",))
        conn.commit()


def _adder(dest: Path, first: int, written: list[Path] | None = None) -> Callable[[], None]:
    """What writes the next 20 new lessons into `dest`'s journal (numbered from run
    `first` on: files of another adder's runs are never written over); `written` holds
    the files of its last call."""
    names = [f"agent-{i:02d}" for i in range(AGENTS)]
    counter = iter(range(first, first + 10**5))

    def add() -> None:
        run = next(counter)
        # written now, after every lesson before them, as `jmem write` stamps them (a
        # lesson dated among the old ones, as an import brings, makes the fold replay
        # the whole journal: `journal/replay.py`)
        now = dt.datetime.now(dt.UTC)
        fresh = [e.replace(created=now - dt.timedelta(milliseconds=20 - i))
                 for i, e in enumerate(lessons(names, 20, seed=100 + run))]
        paths = write_lessons(dest, fresh, start=10**7 + run * 20)
        if written is not None:
            written[:] = paths
        # The commit waits until the checkout's index has been quiet for QUIET_S (a
        # `git commit` may be starting): right after the last run's commit it would
        # wait here, which is that safety margin, not the distill's cost.
        time.sleep(QUIET_S)

    return add


def rows(runs: int = 3, scale: str = "small") -> list[Row]:
    """Full distills per size (growth), the incremental distill, and peak RSS."""
    base = python_baseline(ROOT, max(runs, 5))
    timings: dict[int, Timing] = {}
    bare = base
    for count in SIZES[scale]:  # the goal's row (10k) against a bare start timed in turn
        if count == 10_000:
            timings[count], bare = full_against(count, runs)
        else:
            timings[count] = full(count, runs)
    out = []
    prev: Timing | None = None
    for count, t in timings.items():
        growth = f"; {t.median / prev.median:.1f}× the {label(count // 10)} time" if prev else ""
        name = f"distill, full, {label(count)} lessons (peak {t.peak:.0f} MB{growth})"
        linear = prev is None or t.median <= 10 * LINEAR_SLACK * prev.median
        if count == 10_000:
            out.append(Row(name, t, "python -c pass", bare, "≤ 150×, linear",
                           t.median <= 150 * bare.median and linear, full_floor(count, runs)))
        elif count == 100_000:
            out.append(Row(name, t, "python -c pass", base, "≤ 30 s, ≤ 300 MB, linear",
                           t.median <= 30_000 and t.peak <= 300 and linear))
        else:
            out.append(Row(name, t, "python -c pass", base, "–", None))
        prev = t
    before: Timing | None = None
    git_before: Timing | None = None
    write_before: Timing | None = None
    for count in SIZES[scale]:  # how the cost of 20 new lessons grows with the journal
        inc, inc_bare = incremental(1 if count >= 100_000 else runs, count)
        growth = (f"; {inc.median / before.median:.1f}× the {label(count // 10)} time"
                  if before else "")
        name = f"distill, 20 new lessons on {label(count)} (peak {inc.peak:.0f} MB{growth})"
        if count == 10_000:
            out.append(Row(name, inc, "python -c pass", inc_bare, "≤ 35×",
                           inc.median <= 35 * inc_bare.median, incremental_floor(runs, count)))
        else:
            out.append(Row(name, inc, "python -c pass", base, "–", None))
        before = inc
        committed = git_commit(max(runs, 3), count)
        growth = (f"; {committed.median / git_before.median:.1f}× the {label(count // 10)} "
                  "time" if git_before else "")
        out.append(Row(f"git add + git commit of 20 new lessons on {label(count)} (no "
                       f"distill{growth})", committed, "python -c pass", base, "–", None))
        git_before = committed
        after = first_write(1 if count >= 100_000 else runs, count)
        growth = (f"; {after.median / write_before.median:.1f}× the {label(count // 10)} "
                  "time" if write_before else "")
        out.append(Row(f"write, first after a distill of 20 lessons filed as files, on "
                       f"{label(count)}{growth}", after, "python -c pass", base, "–", None))
        write_before = after
        out.append(Row(f"write, the first of a new day, on {label(count)}",
                       new_day_write(1 if count >= 100_000 else runs, count), "python -c pass",
                       base, "–", None))
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    print(table(rows(int(args[0]) if args else 3, args[1] if len(args) > 1 else "small"),
                "distill"))
