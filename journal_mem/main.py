"""Console entry point of `jmem` / `journal-mem`: every command runs inside one
error boundary (`boundary.run`).

The commands that run inside hooks or at agent wake-up, and `jmem write`,
answer from here without importing click or pydantic (their fast paths, standard library
only, listed in `FAST`); each returns None when its arguments need the full CLI, and
everything else goes through click. The Claude Code hooks run in hook mode
(a failure is a warning, exit 0); everything else in command-line mode.
"""

from __future__ import annotations

import atexit
import os
import sys

from journal_mem import boundary

TYPE_CHECKING = False  # `typing` and `collections.abc` are not on the hook fast path
if TYPE_CHECKING:
    from collections.abc import Callable

# The commands answered before click loads: the command → the module whose
# `fast_main(args after the command)` answers it, or returns None to hand the arguments
# over to click. A fast path imports only its own module.
FAST: dict[str, str] = {
    "guard": "journal_mem.guard.fast",  # git pre-commit / pre-merge-commit
    "hook": "journal_mem.api",  # agent-loop points: JSON out, always exit 0
    "write": "journal_mem.lessons.write",  # every agent's lesson
    "recall": "journal_mem.recall.query",  # a warm index
    "distill": "journal_mem.distill.background",  # post-commit: distill --if-due --background
    "mcp": "journal_mem.mcpserver.handshake",  # an MCP client's handshake, before the SDK
}


def _fast(args: list[str]) -> int | None:
    """The exit code of a fast path, or None to hand over to the click CLI."""
    module = FAST.get(args[0] if args else "")
    if module is None:
        return None
    # __import__ with a fromlist gives the module itself (importlib costs a start ~0.8 ms)
    fast_main: Callable[[list[str]], int | None] = __import__(
        module, fromlist=("fast_main",)).fast_main
    return fast_main(args[1:])


def _answer(args: list[str], fast: Callable[[list[str]], int | None]) -> int:
    code = fast(args)
    if code is not None:
        return code
    from journal_mem.cli import run

    return run(args)


def _is_claude_hook(args: list[str]) -> bool:
    return bool(args) and args[0] in ("wake", "remind") and any(
        a.startswith("--hook") for a in args)


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code. Run as the program (no `argv`), it ends the
    process itself when nothing else would run at exit (`_leave`)."""
    boundary.ONE_SHOT = argv is None
    code = _run(list(sys.argv[1:] if argv is None else argv))
    if argv is None:
        _leave(code)
    return code


def _run(args: list[str]) -> int:
    if _is_claude_hook(args):  # an agent client's hook: `wake.hooks`, never click
        try:
            from journal_mem.wake import hooks
        except ImportError as exc:  # rule 8: a hook never fails the agent's session
            print(f"journal-mem: the {args[0]} hook cannot run here, {exc.name or 'a module'}"
                  f" is missing ({exc}); memory is not loaded this time", file=sys.stderr)
            return 0
        hooks.begin(args[0])
        return boundary.run(args, lambda: _answer(args, hooks.dispatch), hooks.warn)
    return boundary.run(args, lambda: _answer(args, _fast))


def _leave(code: int) -> None:
    """End the process now with `code`, its output flushed, without the interpreter's
    teardown: freeing every module and object one by one, and a last collection, took
    ~7 ms of a hook and ~35 ms of a distill of 10k lessons. Only when nothing else would
    run at exit: no other thread, and no exit handler registered (`logging`, a library's
    finalizer); every file jmem writes is closed by then. Otherwise it returns, and the
    process exits as usual."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    handlers = getattr(atexit, "_ncallbacks", None)  # CPython's; elsewhere exit as usual
    if handlers is None or handlers():
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: started without that file descriptor
                stream.flush()
    except (OSError, ValueError):  # a closed or broken pipe: let the usual exit report it
        return
    os._exit(code)
