"""Console entry point of `jmem` / `journal-mem`.

The hook commands answer from here without importing click or pydantic
(their fast paths); everything else goes through the click CLI.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    args = sys.argv[1:] if argv is None else argv
    # --- Claude Code hook fast paths (wake/remind --hook claude) ---
    if args[:1] in (["wake"], ["remind"]) and any(a.startswith("--hook") for a in args):
        from journal_mem.hookpath import dispatch

        code = dispatch(args)
        if code is not None:
            return code
    # --- end of hook fast paths ---

    # --- guard fast path (issue 3): the git hooks answer without click or pydantic
    if args[:1] == ["guard"]:
        from journal_mem.guard import fast_main

        code = fast_main(args[1:])
        if code is not None:
            return code
    # ---

    # --- recall on a warm index: standard library only ---
    if args[:1] == ["recall"]:
        from journal_mem.recall import fast_main as recall_fast

        code = recall_fast(args[1:])
        if code is not None:
            return code

    # --- distill --background (post-commit hook): detach before click/pydantic load ---
    from journal_mem.background import detach, wants_background

    if wants_background(args):
        return detach(args)
    # --- end distill --background ---
    from journal_mem.cli import run

    return run(args)
