"""Whole-process benchmark runner: one warm-up, median and min–max of N runs,
a baseline measured in the same run, ratios, and a markdown table.

The protocol: each `bench/bench_*.py` exposes `rows(runs: int) -> list[Row | Figure]`
(a `scale: str` parameter too when its size depends on `--scale`), is listed in
`run_all.ORDER`, and can run on its own (`python bench/bench_write.py`);
`python bench/run_all.py` runs all. A `Row` is a time; a `Figure` is a measure that
is not one (a share of bytes, a recall rate) and gets a table of its own.
tests/test_bench.py checks every module against this.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


class Skipped(Exception):
    """A benchmark that cannot run in this build; its message says why."""


@dataclass(frozen=True)
class Timing:
    """Milliseconds of N runs after one warm-up."""

    samples: tuple[float, ...]
    peak_mb: tuple[float, ...] = ()  # peak RSS of each timed run (the process itself)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def peak(self) -> float:
        """The largest peak RSS of the timed runs, in MB (0 when not measured)."""
        return max(self.peak_mb, default=0.0)

    @property
    def span(self) -> str:
        return f"{min(self.samples):.1f}–{max(self.samples):.1f}"


@dataclass(frozen=True)
class Floor:
    """What a path cannot do without, each part timed as whole processes in the same
    run: a start that imports the standard-library modules the path loaded, plus a bare
    git process for each git process the path ran. Our own modules and work are the
    rest."""

    modules: tuple[str, ...]  # the standard-library modules the path loaded
    gits: int  # git processes it ran
    imports: Timing  # `python -c` importing `modules`
    git: Timing  # one bare git process: `git rev-parse --git-dir`
    heaviest: tuple[tuple[str, float], ...] = ()  # top-level packages, their ms (importtime)

    @property
    def median(self) -> float:
        return self.imports.median + self.gits * self.git.median

    def parts(self) -> str:
        """The floor in words: its start and imports, its git processes."""
        heavy = ", ".join(f"{name} {ms:.1f}" for name, ms in self.heaviest)
        return (f"start + {len(self.modules)} stdlib modules {self.imports.median:.1f} ms"
                + (f" ({heavy} ms by `-X importtime`)" if heavy else "")
                + f" + {self.gits} git × {self.git.median:.1f} ms")


@dataclass(frozen=True)
class Row:
    """One benchmarked path against its baseline and goal (and its measured floor)."""

    path: str
    timing: Timing
    baseline_name: str
    baseline: Timing | None
    goal: str
    met: bool | None
    floor: Floor | None = None
    # a bare start timed in turn with this path's runs (`time_against`): the goals table's
    # ratio takes it, so a slower phase of the machine moves both alike
    bare: Timing | None = None

    @property
    def ratio(self) -> str:
        if self.baseline is None or self.baseline.median == 0:
            return "–"
        return f"{self.timing.median / self.baseline.median:.1f}×"


@dataclass(frozen=True)
class Figure:
    """One measured figure that is not a time (a share, a rate), against its baseline
    and goal; the value and the baseline are shown as given ("17.0%")."""

    what: str
    value: str
    baseline_name: str
    baseline: str
    goal: str
    met: bool | None


def installed_script() -> Path | None:
    """The `jmem` installed next to this interpreter, if any."""
    script = Path(sys.executable).parent / "jmem"
    return script if script.exists() else None


def bench_env(**extra: str) -> dict[str, str]:
    """A user's environment: bytecode caching on, no JMEM_* or hook GIT_* variables.

    Without an installed `jmem`, the package is taken from this checkout.
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JMEM_", "GIT_DIR", "GIT_INDEX", "GIT_WORK"))
           and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(IDENTITY)
    if installed_script() is None:
        env["PYTHONPATH"] = str(REPO_ROOT)
    env.update(extra)
    return env


def jmem_argv() -> list[str]:
    """The installed `jmem` next to this interpreter, else `python -m journal_mem`."""
    script = installed_script()
    return [str(script)] if script else [sys.executable, "-m", "journal_mem"]


def time_command(argv: Sequence[str] | Callable[[], Sequence[str]], cwd: str | Path,
                 runs: int = 10, env: dict[str, str] | None = None, stdin: bytes = b"",
                 setup: Callable[[], None] | None = None, check: bool = True,
                 warmup: bool = True) -> Timing:
    """Whole-process wall time of a command: one warm-up, then `runs` timed runs.

    Each run's peak RSS comes from `wait4`, so it is that process alone.
    """
    samples, peaks = [], []
    for i in range(runs + 1 if warmup else runs):
        if setup is not None:
            setup()
        args = list(argv() if callable(argv) else argv)
        elapsed, peak = _run_once(args, cwd, env or bench_env(), stdin, check)
        if i or not warmup:
            samples.append(elapsed)
            peaks.append(peak)
    return Timing(tuple(samples), tuple(peaks))


def time_against(argv: Sequence[str] | Callable[[], Sequence[str]], cwd: str | Path,
                 runs: int = 10, env: dict[str, str] | None = None, stdin: bytes = b"",
                 setup: Callable[[], None] | None = None) -> tuple[Timing, Timing]:
    """(the command's `time_command` timing, a bare start's): one warm-up each, then each
    run of the command follows a run of `python -c pass`, so both see the same phases of
    the machine (a phase can move a start by a third within minutes)."""
    env = env or bench_env()
    bare = [sys.executable, "-c", "pass"]
    samples, peaks, starts = [], [], []
    for i in range(runs + 1):
        start, _ = _run_once(bare, cwd, env, b"", True)
        if setup is not None:
            setup()
        elapsed, peak = _run_once(list(argv() if callable(argv) else argv), cwd, env, stdin,
                                  True)
        if i:
            samples.append(elapsed)
            peaks.append(peak)
            starts.append(start)
    return Timing(tuple(samples), tuple(peaks)), Timing(tuple(starts))


def _run_once(args: list[str], cwd: str | Path, env: dict[str, str], stdin: bytes,
              check: bool) -> tuple[float, float]:
    """(milliseconds, peak RSS in MB) of one run; output goes to a temp file, not a pipe
    (a pipe would need a reader thread, and `communicate` reaps the child before `wait4`)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as inp:
        inp.write(stdin)
        inp.seek(0)
        start = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=inp, stdout=out, stderr=out)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = (time.perf_counter() - start) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        if check and proc.returncode != 0:
            out.seek(0)
            raise RuntimeError(f"{args} failed ({proc.returncode}): "
                               f"{out.read().decode(errors='replace')[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024


FLOORHOOK = Path(__file__).resolve().parent / "floorhook"


def floor_of(argv: Sequence[str], cwd: str | Path, runs: int = 10,
             env: dict[str, str] | None = None, stdin: bytes = b"",
             setup: Callable[[], None] | None = None) -> Floor:
    """The floor (`Floor`) of a command: it runs once more, with every Python process it
    starts recording the modules it loaded (`floorhook/sitecustomize.py`) and git
    tracing its processes; then that import and a bare git process are timed."""
    env = dict(env or bench_env())
    with tempfile.TemporaryDirectory(prefix="jmem-floor-") as tmp:
        modules_out, trace = os.path.join(tmp, "modules"), os.path.join(tmp, "trace")
        traced = {**env, "BENCH_FLOOR_OUT": modules_out, "GIT_TRACE": trace,
                  "PYTHONPATH": os.pathsep.join(
                      p for p in (str(FLOORHOOK), env.get("PYTHONPATH")) if p)}
        if setup is not None:
            setup()
        _run_once(list(argv), cwd, traced, stdin, check=True)
        loaded = _read_lines(modules_out)
        gits = sum("trace: built-in: git " in line for line in _read_lines(trace))
    modules = tuple(sorted(m for m in set(loaded) if m.split(".")[0] in sys.stdlib_module_names
                           and m.split(".")[0] not in ("sitecustomize", "__main__")))
    code = f"for m in {modules!r}: __import__(m)"
    return Floor(modules, gits, time_command([sys.executable, "-c", code], cwd, runs, env),
                 time_command(["git", "rev-parse", "--git-dir"], cwd, runs, env),
                 _heaviest(code, cwd, env))


def _heaviest(code: str, cwd: str | Path, env: dict[str, str],
              top: int = 4) -> tuple[tuple[str, float], ...]:
    """The `top` top-level packages of the standard library whose modules took longest to
    import in `code`, with their milliseconds (each module's own time, by `python -X
    importtime`: inflated by the tracing, so only their order and rough size count). What
    the start imports from the environment (setuptools' `_distutils_hack`, by a `.pth`
    file of the venv) is the bare start's, not the floor's."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    own: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[0].strip().isdigit():
            name = fields[2].strip().split(".")[0]
            if name in sys.stdlib_module_names:
                own[name] = own.get(name, 0.0) + int(fields[0]) / 1000
    ranked = sorted(own.items(), key=lambda item: -item[1])[:top]
    return tuple((name, ms) for name, ms in ranked)


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except FileNotFoundError:
        return []


def python_baseline(cwd: str | Path, runs: int = 10) -> Timing:
    """A bare start of this venv's interpreter: `python -c pass`."""
    return time_command([sys.executable, "-c", "pass"], cwd, runs)


def git_baseline(cwd: str | Path, runs: int = 10) -> Timing:
    """The cheapest git call a hook makes: `git diff --cached --name-only`."""
    return time_command(["git", "diff", "--cached", "--name-only"], cwd, runs)


def cat_baseline(path: str | Path, runs: int = 10) -> Timing:
    """Reading a file the way Claude Code's native load does, as a process: `cat`."""
    return time_command(["cat", str(path)], Path(path).parent, runs)


BASELINES = {
    "python -c pass": "a bare start of the venv's interpreter",
    "git diff --cached": "`git diff --cached --name-only` in the same repository",
    "cat MEMORY.md": "`cat` of a 200-line MEMORY.md",
}


def git(cwd: str | Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=bench_env(), check=True, capture_output=True)


def table(rows: Sequence[Row], title: str = "") -> str:
    """The rows as a markdown table."""
    out = [f"### {title}", ""] if title else []
    out.append("| path | median ms | min–max ms | baseline | baseline ms | ratio | goal | met |")
    out.append("|---|---:|---:|---|---:|---:|---|---|")
    for r in rows:
        base = f"{r.baseline.median:.1f}" if r.baseline else "–"
        met = "–" if r.met is None else ("yes" if r.met else "**no**")
        out.append(f"| {r.path} | {r.timing.median:.1f} | {r.timing.span} | {r.baseline_name} "
                   f"| {base} | {r.ratio} | {r.goal} | {met} |")
    return "\n".join(out)


def figure_table(figures: Sequence[Figure], title: str = "") -> str:
    """The figures as a markdown table."""
    out = [f"### {title}", ""] if title else []
    out.append("| figure | value | baseline | baseline value | goal | met |")
    out.append("|---|---:|---|---:|---|---|")
    for f in figures:
        met = "–" if f.met is None else ("yes" if f.met else "**no**")
        out.append(f"| {f.what} | {f.value} | {f.baseline_name} | {f.baseline} | {f.goal} "
                   f"| {met} |")
    return "\n".join(out)


def machine_line() -> str:
    return (f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, Python "
            f"{sys.version.split()[0]}, {shutil.which('git') and git_version()}")


def git_version() -> str:
    return subprocess.run(["git", "--version"], capture_output=True, text=True,
                          check=False).stdout.strip()
