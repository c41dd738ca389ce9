"""Memory files git would ignore: `init`, `write` and `distill` refuse them, `status` says so.

An ignored journal is folded but never committed, so every other clone lacks
the lessons its distilled files were built from. Paths are probed by name
(nothing needs to exist): the memory root, the state file, and for each
agent a journal entry, `MEMORY.md` and a topic file.
"""

from __future__ import annotations

import datetime as dt

from journal_mem.errors import PolicyViolation
from journal_mem.gitops.ignored import ignored
from journal_mem.layout import DISTILL_STATE, JOURNAL, KEEP, MEMORY_MD, TOPICS, Layout


def probe_paths(layout: Layout, agents: list[str], entry_name: str = "") -> list[str]:
    """Repository-relative paths that stand for every kind of memory file."""
    root = layout.memory_root
    entry = entry_name or f"{dt.date.today().isoformat()}-lesson.md"
    paths = [f"{root}/{KEEP}", f"{root}/{DISTILL_STATE}"]
    for agent in agents:
        paths += [f"{root}/{agent}/{JOURNAL}/{entry}", f"{root}/{agent}/{MEMORY_MD}",
                  f"{root}/{agent}/{TOPICS}/inbox.md"]
    return paths


def ignored_lines(layout: Layout, agents: list[str], extra: list[str] | None = None,
                  entry_name: str = "") -> list[str]:
    """One line per probed path git ignores, naming the rule."""
    found = ignored(layout.repo.main_root, [*(extra or []), *probe_paths(layout, agents,
                                                                          entry_name)])
    return [f"{path}: ignored by git ({rule})" for path, rule in found.items()]


def refuse_ignored(layout: Layout, agents: list[str], what: str,
                   extra: list[str] | None = None, entry_name: str = "") -> None:
    """Raise PolicyViolation when git would ignore any of the memory files `what` writes."""
    lines = ignored_lines(layout, agents, extra, entry_name)
    if lines:
        raise PolicyViolation(
            f"{what} refused, nothing written: git ignores memory files, so they would never "
            "be committed and every other clone would miss them:\n" + "\n".join(lines),
            hint=unignore_hint(layout.memory_root, lines),
        )


def unignore_hint(memory_root: str, lines: list[str]) -> str:
    """How to let git see the memory root: for a rule that ignores a folder above it
    (`.claude/`), the rewrite that works (git cannot re-include anything below an
    ignored folder, so `!` after `.claude/` does nothing); else the general way."""
    parents = memory_root.split("/")[:-1]
    folders = {"/".join(parents[:i + 1]) for i in range(len(parents))}
    for line in lines:
        pattern = line.rsplit(": ", 1)[-1].rstrip(")").strip()
        folder = pattern.strip("/")
        if pattern.endswith("/") and folder in folders:
            return (f"the rule `{pattern}` ignores the folder above the memory root, and git "
                    "cannot re-include anything below an ignored folder: replace it with "
                    f"`{folder}/*` and add `!/{memory_root}/` and `!/{folder}/journal-mem.toml`"
                    " after it (the rest of the folder stays ignored); `git check-ignore -v "
                    "PATH` shows the rule in force")
    return ("remove or narrow each rule named above (a rule on a parent folder cannot be "
            f"undone below it), or add `!/{memory_root}/` after it; "
            "`git check-ignore -v PATH` shows the rule in force")
