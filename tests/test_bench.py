"""Every `bench/bench_*.py` follows the protocol `bench/run_all.py` relies on.

`run_all` imports each module and calls `rows(runs)` (with `scale=` when `rows`
takes it). A module with only a `main()` crashed the whole run once, after the
modules before it had run for minutes. These checks read the sources with
`ast` (no bench module is imported: they import the package's internals), so
they take milliseconds.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from helpers import REPO_ROOT, base_env

BENCH = REPO_ROOT / "bench"
RESULTS = {"list[Row]", "list[Figure]", "list[Row | Figure]"}


def bench_files() -> list[Path]:
    return sorted(BENCH.glob("bench_*.py"))


def protocol_problems(source: str) -> list[str]:
    """What keeps `run_all.run_module` from calling this module's `rows`; [] when nothing."""
    tree = ast.parse(source)
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "rows"]
    if not found:
        return ["no top-level `def rows(runs: int, ...)`"]
    args = found[0].args
    positional = [*args.posonlyargs, *args.args]
    problems = []
    if not positional or positional[0].arg != "runs":
        problems.append("the first parameter of rows must be `runs`")
    required = positional[1:len(positional) - len(args.defaults)]
    required += [a for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None]
    problems += [f"rows: parameter {a.arg!r} needs a default (run_all passes only runs and "
                 "scale)" for a in required if a.arg != "scale"]
    returns = ast.unparse(found[0].returns) if found[0].returns else ""
    if returns not in RESULTS:
        problems.append(f"rows must be annotated as one of {sorted(RESULTS)}, not {returns!r}")
    return problems


def order() -> list[str]:
    """run_all.ORDER, read from its source."""
    tree = ast.parse((BENCH / "run_all.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "ORDER" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("bench/run_all.py has no ORDER")


def test_every_bench_module_has_the_rows_run_all_calls() -> None:
    problems = {p.name: protocol_problems(p.read_text(encoding="utf-8")) for p in bench_files()}
    assert len(problems) >= 10, sorted(problems)
    assert not {k: v for k, v in problems.items() if v}, problems


def test_every_bench_module_is_in_run_all_order_once() -> None:
    listed = order()
    assert len(listed) == len(set(listed)), listed
    assert sorted(listed) == [p.stem for p in bench_files()]


def test_run_all_finds_every_module_in_that_order() -> None:
    """`modules([])` as run_all computes it (run_all imports only the stdlib runner)."""
    code = "import json, run_all; print(json.dumps(run_all.modules([])))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=BENCH, env=base_env(),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == order()


def test_the_check_catches_a_module_run_all_cannot_call() -> None:
    """The shape bench_keys had when `run_all` crashed on it, and two near misses."""
    assert protocol_problems("def main() -> None:\n    pass\n") == [
        "no top-level `def rows(runs: int, ...)`"]
    assert protocol_problems("def rows(n: int) -> list[Row]:\n    return []\n") == [
        "the first parameter of rows must be `runs`"]
    assert protocol_problems(
        "def rows(runs: int, rounds: int) -> list[Row]:\n    return []\n") == [
        "rows: parameter 'rounds' needs a default (run_all passes only runs and scale)"]
    assert protocol_problems(
        "def rows(runs: int, scale: str = 'small') -> list[Row | Figure]:\n    return []\n"
    ) == []


FLOORED = '''
import os, subprocess, sys
import json  # the parent's
if os.fork() == 0:
    import csv  # a forked child's, which leaves by os._exit
    os._exit(0)
os.wait()
subprocess.run(["git", "version"], check=True, capture_output=True)
subprocess.run([sys.executable, "-c", "import tomllib"], check=True)  # a Python child's
'''


def test_a_floor_holds_every_process_s_stdlib_modules_and_git_processes(tmp_path: Path) -> None:
    """`runner.floor_of` runs the path with each Python process recording what it loaded
    (forked children leaving by `os._exit` too) and git tracing its processes; the floor
    imports those standard-library modules and no others, and counts each git process."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # its bare git: rev-parse
    script = tmp_path / "path.py"
    script.write_text(FLOORED)
    code = (f"import json, runner; f = runner.floor_of([sys.executable, {str(script)!r}], "
            f"{str(tmp_path)!r}, runs=1); print(json.dumps([f.modules, f.gits, "
            "f.imports.median > 0, f.git.median > 0, [n for n, _ in f.heaviest]]))")
    out = subprocess.run([sys.executable, "-c", "import sys; " + code], cwd=BENCH,
                         env=base_env(), capture_output=True, text=True, check=True).stdout
    modules, gits, timed_imports, timed_git, heaviest = json.loads(out)
    assert {"json", "csv", "tomllib", "subprocess"} <= set(modules)
    assert not {m for m in modules if m.split(".")[0] in ("sitecustomize", "__main__")}
    assert all(m.split(".")[0] in sys.stdlib_module_names for m in modules)
    assert gits == 1 and timed_imports and timed_git
    assert heaviest and set(heaviest) <= sys.stdlib_module_names


def test_a_path_timed_against_a_bare_start_runs_each_in_turn(tmp_path: Path) -> None:
    """`runner.time_against`: after one warm-up of each, every run of the path follows a
    bare start (its setup just before it); both timings hold `runs` samples."""
    log = tmp_path / "log"
    path = f"open({str(log)!r}, 'a').write('path\\n')"
    code = ("import json, runner, sys; "
            f"setup = lambda: open({str(log)!r}, 'a').write('setup\\n'); "
            f"t, bare = runner.time_against([sys.executable, '-c', {path!r}], {str(tmp_path)!r}, "
            "runs=3, setup=setup); "
            "print(json.dumps([len(t.samples), len(bare.samples), min(bare.samples) > 0]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=BENCH, env=base_env(),
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [3, 3, True]
    assert log.read_text().split() == ["setup", "path"] * 4
