"""Console entry point of `jmem` / `journal-mem`.

The commands that run inside hooks or at agent wake-up answer from here
without importing click or pydantic (their fast paths, standard library
only); each returns None when its arguments need the full CLI, and
everything else goes through click.
"""

from __future__ import annotations

import sys


def _fast(args: list[str]) -> int | None:
    """The exit code of a fast path, or None to hand over to the click CLI."""
    command = args[0] if args else ""
    if command in ("wake", "remind") and any(a.startswith("--hook") for a in args):
        from journal_mem.commands.claude_hooks import dispatch  # Claude Code hooks

        return dispatch(args)
    if command == "guard":
        from journal_mem.commands.guard import fast_main  # git pre-commit / pre-merge-commit

        return fast_main(args[1:])
    if command == "hook" and not {"-h", "--help"} & set(args):
        from journal_mem.api import cli_main  # agent-loop points: JSON out, always exit 0

        return cli_main(args[1:])
    if command == "recall":
        from journal_mem.commands.recall import fast_main as recall_fast  # warm index

        return recall_fast(args[1:])
    from journal_mem.commands.background import detach, wants_background  # post-commit hook

    return detach(args) if wants_background(args) else None


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    args = sys.argv[1:] if argv is None else argv
    code = _fast(args)
    if code is not None:
        return code
    from journal_mem.cli import run

    return run(args)
