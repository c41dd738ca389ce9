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
