"""The repository's `.gitattributes`: journal-mem's lines merged in, the user's kept.

Memory files are LF in every checkout: `core.autocrlf=true` (the Git for
Windows default) or a `* text eol=crlf` rule would otherwise check journal
entries and distilled files out with CRLF. The readers accept CRLF anyway;
the rule keeps the files on disk what the distiller wrote.
"""

from __future__ import annotations

import os

from journal_mem.fsutil import replace_atomic

FILE = ".gitattributes"


def eol_rule(memory_root: str) -> str:
    """The line that keeps every file under `memory_root` LF."""
    return f"/{memory_root.strip('/')}/** text eol=lf"


def merge_lines(root: str, lines: list[str]) -> list[str]:
    """Append each of `lines` missing from `<root>/.gitattributes` (created if absent).

    Returns the lines added. Existing lines are never changed or reordered;
    the file is replaced atomically (temp file, then rename).
    """
    path = os.path.join(root, FILE)
    try:
        with open(path, "rb") as fh:
            old = fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        old = ""
    have = {line.strip() for line in old.splitlines()}
    added = [line for line in lines if line.strip() not in have]
    if not added:
        return []
    sep = "" if not old or old.endswith("\n") else "\n"
    eol = "\r\n" if "\r\n" in old else "\n"
    text = old + sep + "".join(line + eol for line in added)
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else None
    replace_atomic(path, text.encode("utf-8", "surrogateescape"), durable=True, mode=mode)
    return added
