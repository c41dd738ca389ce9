"""Console entry point of `jmem` / `journal-mem`.

The hook commands answer from here without importing click or pydantic
(their fast paths); everything else goes through the click CLI.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    args = sys.argv[1:] if argv is None else argv
    # --- distill --background (post-commit hook): detach before click/pydantic load ---
    from journal_mem.background import detach, wants_background

    if wants_background(args):
        return detach(args)
    # --- end distill --background ---
    from journal_mem.cli import run

    return run(args)
