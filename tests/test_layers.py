"""Import rules (STYLE.md): the core never imports click; hot modules stay light."""

from __future__ import annotations

import ast
import subprocess
import sys

from helpers import REPO_ROOT

PACKAGE = REPO_ROOT / "journal_mem"
# Modules that hooks and wake-up import: only the standard library (and each other) at top level.
HOT = {"gitfacts", "settings", "errors", "boundary", "main", "layout", "ticket"}


def top_level_imports(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0] if node.level == 0 else "journal_mem")
    return found


def test_only_cli_imports_click() -> None:
    for path in PACKAGE.glob("*.py"):
        if path.stem == "cli":
            continue
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not {m for m in names if m.split(".")[0] == "click"}, f"{path.name} imports click"


def test_hot_modules_import_only_the_standard_library() -> None:
    third_party = {"click", "pydantic", "yaml", "git", "frontmatter", "watchdog", "markdown_it"}
    for module in HOT:
        assert not top_level_imports(module) & third_party, module


def test_importing_main_pulls_in_no_heavy_module() -> None:
    code = (
        "import sys, journal_mem.main, journal_mem.gitfacts, journal_mem.settings;"
        "heavy = {'click', 'pydantic', 'yaml', 'subprocess'} & set(sys.modules);"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO_ROOT).stdout.strip()
    assert out == "[]"
