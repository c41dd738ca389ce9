"""One name, one type: a parameter called `ctx` is always the command context
(`store.context.Context`: repository, config, layout), never click's context
(`click_ctx`) or the guard's `Policy` (`policy`). docs/DESIGN.md, "Layout"."""

from __future__ import annotations

import ast

from helpers import REPO_ROOT

MEANING = {"ctx": "Context", "click_ctx": "click.Context", "policy": "Policy"}


def test_each_context_name_holds_one_type() -> None:
    wrong = []
    for path in sorted((REPO_ROOT / "journal_mem").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.arg) or node.annotation is None:
                continue
            kind = ast.unparse(node.annotation).strip("'\"")
            named = MEANING.get(node.arg)
            owner = next((n for n, t in MEANING.items() if t == kind), None)
            if (named and kind != named) or (owner and node.arg != owner):
                wrong.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}: {node.arg}: {kind}")
    assert not wrong, "\n".join(wrong)


def test_the_lesson_types_are_named_once() -> None:
    from journal_mem.journal.entry import TYPES
    from journal_mem.names import LESSON_TYPES

    assert tuple(TYPES) == LESSON_TYPES


def test_names_compiles_only_the_patterns_every_path_uses_at_import() -> None:
    """Every hot path imports `names`: the tag, slug and key patterns are compiled when
    first used (`write`, importers), not at import (~0.25 ms of each start)."""
    import subprocess
    import sys

    code = (
        "import re\n"
        "seen = []\n"
        "real = re.compile\n"
        "re.compile = lambda p, *a: seen.append(p) or real(p, *a)\n"
        "import journal_mem.names as n\n"
        "print(len(seen))\n"
        "n.default_key('A title + more'); n.tag_re()\n"
        "print(len(seen))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO_ROOT).stdout.split()
    assert out == ["2", "5"]
