"""How the guard recognises the distiller's own commit.

Before it commits, the distiller writes a ticket into the machine-local state
dir (never committed) naming every memory path it staged and the blob id it
staged for it. The guard lets a change to a distilled file through only when
its staged blob id equals the ticket's, so a hand edit never matches, and a
ticket is useless on any other machine. The distiller removes the ticket
after the commit. `jmem check` in CI remains the backstop for `--no-verify`.
"""

from __future__ import annotations

import json
import os

from journal_mem.fsutil import replace_atomic

TICKET = "distill-ticket.json"


def ticket_path(state_dir: str) -> str:
    return os.path.join(state_dir, TICKET)


def write_ticket(state_dir: str, blobs: dict[str, str]) -> None:
    """Record {repo-relative path: staged blob id} (blob id "0"*40 for a deletion)."""
    data = json.dumps({"pid": os.getpid(), "blobs": blobs}, sort_keys=True)
    replace_atomic(ticket_path(state_dir), data)


def read_ticket(state_dir: str) -> dict[str, str]:
    """The ticket's {path: blob id}, or {} when there is none (or it is unreadable)."""
    try:
        with open(ticket_path(state_dir), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    blobs = data.get("blobs") if isinstance(data, dict) else None
    if not isinstance(blobs, dict):
        return {}
    return {str(k): str(v) for k, v in blobs.items()}


def clear_ticket(state_dir: str) -> None:
    try:
        os.unlink(ticket_path(state_dir))
    except FileNotFoundError:
        pass
