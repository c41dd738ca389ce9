"""Console entry point of `jmem` / `journal-mem`: every command runs inside one
error boundary (`boundary.run`).

The commands that run inside hooks or at agent wake-up, and `jmem write`,
answer from here without importing click or pydantic (their fast paths, standard library
only); each returns None when its arguments need the full CLI, and
everything else goes through click. The Claude Code hooks run in hook mode
(a failure is a warning, exit 0); everything else in command-line mode.
"""

from __future__ import annotations

import sys

from journal_mem import boundary


def _fast(args: list[str]) -> int | None:
    """The exit code of a fast path, or None to hand over to the click CLI."""
    command = args[0] if args else ""
    if _is_claude_hook(args):
        from journal_mem.wake.hooks import dispatch  # Claude Code hooks

        return dispatch(args)
    if command == "guard":
        from journal_mem.guard.fast import fast_main  # git pre-commit / pre-merge-commit

        return fast_main(args[1:])
    if command == "hook" and not {"-h", "--help"} & set(args):
        from journal_mem.api import cli_main  # agent-loop points: JSON out, always exit 0

        return cli_main(args[1:])
    if command == "write":
        from journal_mem.lessons.write import fast_main as write_fast  # every agent's lesson

        return write_fast(args[1:])
    if command == "recall":
        from journal_mem.recall.query import fast_main as recall_fast  # warm index

        return recall_fast(args[1:])
    from journal_mem.distill.background import detach, wants_background  # post-commit hook

    return detach(args) if wants_background(args) else None


def _dispatch(args: list[str]) -> int:
    code = _fast(args)
    if code is not None:
        return code
    from journal_mem.cli import run

    return run(args)


def _is_claude_hook(args: list[str]) -> bool:
    return bool(args) and args[0] in ("wake", "remind") and any(
        a.startswith("--hook") for a in args)


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if _is_claude_hook(args):
        from journal_mem.wake import hooks as claude_hooks

        claude_hooks.begin(args[0])
        return boundary.run(args, lambda: _dispatch(args), claude_hooks.warn)
    return boundary.run(args, lambda: _dispatch(args))
