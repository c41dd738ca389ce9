"""The package layout is the architecture: layers import only downward, no cycles,
click only in the cli package, and the hot paths stay on the standard library.

Layers (docs/DESIGN.md, "Layers"), lowest first:

    0  errors, names, fsutil,       leaves every layer may use
       resources/                   (templates read with importlib.resources)
    1  model/                       pure: bytes in, values out
    2  config/, gitops/             settings; every git call
    3  store/, claude/              files on disk; Claude Code's formats
    4  commands/                    one module per command
    5  cli, main, api, __main__     entry points
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from helpers import REPO_ROOT

PACKAGE = REPO_ROOT / "journal_mem"
RANK = {"model": 1, "config": 2, "gitops": 2, "store": 3, "claude": 3, "commands": 4}
TOP_RANK = {"errors": 0, "names": 0, "fsutil": 0, "boundary": 0, "resources": 0,
            "cli": 5, "main": 5, "api": 5, "__main__": 5, "__init__": 0}
# Modules the git hooks and agent wake-up import: only the standard library at top level.
HOT = {"gitops.gitfacts", "gitops.gitrun", "config.settings", "errors", "fsutil", "boundary",
       "main", "store.layout", "gitops.ticket", "claude.protocol", "commands.claude_hooks",
       "commands.hook_packs", "store.reader", "store.cachefile", "store.listing", "model.validate",
       "model.frontmatter", "model.foldstate", "commands.live", "commands.held", "commands.wake",
       "commands.wakefit", "commands.remind", "claude.native", "claude.settings", "store.sessions",
       "store.progress"}
THIRD_PARTY = {"click", "pydantic", "yaml", "git", "frontmatter", "watchdog", "markdown_it",
               "tqdm", "rich"}


def modules() -> dict[str, Path]:
    """Dotted name (without `journal_mem.`) → file, for every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def rank(module: str) -> int:
    head = module.split(".")[0]
    return RANK[head] if head in RANK else TOP_RANK[head]


def imported(path: Path, *, top_level_only: bool = False) -> set[str]:
    """Absolute names this file imports (`journal_mem.x.y` or a third-party root)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: relative import"
            found.add(node.module)
            if node.module.startswith("journal_mem"):
                found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def internal(path: Path, known: dict[str, Path], **kw: bool) -> set[str]:
    """The package modules a file imports (names without `journal_mem.`)."""
    out = set()
    for name in imported(path, **kw):
        if name.startswith("journal_mem."):
            short = name.removeprefix("journal_mem.")
            if short in known:
                out.add(short)
    return out


def test_only_cli_imports_click() -> None:
    for name, path in modules().items():
        if name.split(".")[0] != "cli":
            roots = {m.split(".")[0] for m in imported(path)}
            assert "click" not in roots, f"{name} imports click"


def test_layers_import_only_downward() -> None:
    known = modules()
    wrong = []
    for name, path in known.items():
        for target in internal(path, known):
            if target.split(".")[0] == name.split(".")[0]:
                continue  # inside one subpackage
            if rank(target) > rank(name):
                wrong.append(f"{name} (layer {rank(name)}) imports {target} (layer {rank(target)})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles() -> None:
    known = modules()
    graph = {name: internal(path, known) - {name} for name, path in known.items()}
    graph = {n: {t for t in ts if not n.startswith(t + ".") and t != n.rpartition(".")[0]}
             for n, ts in graph.items()}  # a module importing its own package is not a cycle
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*stack[stack.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert not cycles, "\n".join(cycles)


def test_hot_modules_import_only_the_standard_library() -> None:
    known = modules()
    for module in HOT:
        roots = {m.split(".")[0] for m in imported(known[module], top_level_only=True)}
        assert not roots & THIRD_PARTY, module


def test_importing_main_pulls_in_no_heavy_module() -> None:
    code = (
        "import sys, journal_mem.main, journal_mem.gitops.gitfacts, journal_mem.config.settings,"
        " journal_mem.commands.claude_hooks;"
        "heavy = {'click', 'pydantic', 'yaml', 'subprocess'} & set(sys.modules);"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO_ROOT).stdout.strip()
    assert out == "[]"
