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
