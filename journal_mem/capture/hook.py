"""Native memory filed the moment it is written: Claude Code's PostToolUse, for file tools.

Claude Code tells an agent with `memory: project` to write its memory itself,
with Write, Edit or MultiEdit, into `.claude/agent-memory/<agent>/` of the
checkout it runs in, often a linked worktree whose copy no one commits. The
PostToolUse hook (`jmem wake --hook claude`, which runs after every tool call)
hands each such write here: a memory file the agent wrote (new or edited)
becomes a lesson in the main checkout's journal, keyed by its `name`, so an edit
is a correction of the same key; an edit of `MEMORY.md` is diffed against what
the distiller wrote, as the distiller adopts a hand edit (`capture/filing.py`,
which `jmem rescue` uses too). The checkout's copy is then put back, and the
model is told in one line where its memory went.

Every tool call comes through `memory_file`, so it stays on the standard library
and answers from the payload and a folder walk; a call that touched no memory
file costs a dictionary look-up. Only a memory write loads the filing machinery.
"""

from __future__ import annotations

import os

from journal_mem import settings
from journal_mem.errors import JournalMemError

TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")  # Claude Code's file-writing tools


def _checkout(folder: str) -> str | None:
    """The work tree holding `folder` (the nearest folder with a `.git`), or None."""
    current = folder
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def memory_file(payload: dict[str, object]) -> tuple[str, str] | None:
    """(checkout, repo-relative path) of the memory file this tool call wrote, or None."""
    if payload.get("tool_name") not in TOOLS:
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(path, str) or not path.endswith(".md"):
        return None
    cwd = payload.get("cwd")
    path = os.path.abspath(os.path.join(cwd if isinstance(cwd, str) else os.getcwd(), path))
    checkout = _checkout(os.path.dirname(path))  # the folders as named, links not followed

    if checkout is None or not os.path.isfile(os.path.join(checkout, settings.CONFIG_FILE)):
        return None  # not a checkout journal-mem was set up in
    from journal_mem.layout import is_native
    from journal_mem.names import MEMORY_MD

    root = settings.Settings(checkout).memory_root
    rel = os.path.relpath(path, checkout).replace(os.sep, "/")
    if not rel.startswith(root + "/"):
        return None
    inner = rel[len(root) + 1:]
    if is_native(inner) or inner.endswith("/" + MEMORY_MD):
        return checkout, rel
    return None


def capture(payload: dict[str, object]) -> tuple[str, bool] | None:
    """File the memory this tool call wrote: (the one line to tell the model, whether it
    was filed); None when the call wrote no memory file."""
    found = memory_file(payload)
    if found is None:
        return None
    from journal_mem.capture.filing import file_source, source_at
    from journal_mem.repo import open_context

    checkout, rel = found
    try:
        ctx = open_context(checkout)
        filing = file_source(ctx, source_at(ctx, rel))
    except (JournalMemError, OSError) as exc:
        reason = exc.message if isinstance(exc, JournalMemError) else str(exc)
        return f"journal-mem: {rel} was not filed ({reason}); it stays where you wrote it", False
    if filing.failed:
        return (f"journal-mem: {rel} was not filed ({filing.failed}); it stays where you "
                "wrote it", False)
    where = ", ".join(ctx.layout.rel(p) if not p.startswith(ctx.layout.state_dir) else p
                      for p in filing.entries) or "already in the main checkout's journal"
    return (f"journal-mem filed the memory you wrote to {rel} in the main checkout's journal "
            f"({where}) and put this checkout's copy back: keep writing memory this way "
            "(write the same file again to correct it)", True)
