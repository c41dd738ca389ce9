"""Distilled files never conflict: a merge driver that keeps one side and asks for a distill.

Two clones that each distilled meet on `git pull` with both sides' `MEMORY.md`, topic
files and `distill-state.json` rewritten: a line merge of two generated files means
nothing. `jmem init` marks them `merge=jmem-distilled` in `.gitattributes` and
registers the driver in the repository config (`merge.jmem-distilled.driver`, per
clone). The driver keeps the checked-out side's version (`%A`, left as it is) and
writes `<state-dir>/redistill`; the `post-merge`/`post-rewrite` hook's distill then
counts as due and folds the journals of both sides, which the merge joined (new
files, never conflicting). A rebase (`git pull --rebase`) uses the same driver.
"""

from __future__ import annotations

import os
import shlex

from journal_mem.errors import JournalMemError
from journal_mem.gitops import gitcore

NAME = "jmem-distilled"
REDISTILL = "redistill"  # in the state dir: a merge took one side of distilled files


def patterns(memory_root: str) -> list[str]:
    """`.gitattributes` lines giving the distilled files of `memory_root` our driver."""
    top = "/" + memory_root.strip("/")
    return [f"{top}/distill-state.json merge={NAME}",
            f"{top}/*/MEMORY.md merge={NAME}",
            f"{top}/*/topics/*.md merge={NAME}"]


def driver_command(python: str) -> str:
    """The `merge.<name>.driver` value: git substitutes %O %A %B %P."""
    return f"{shlex.quote(python)} -m journal_mem merge-driver %O %A %B %P"


def register(root: str, python: str) -> str | None:
    """Set `merge.jmem-distilled.{name,driver}` in the repository config; what was done."""
    want = {f"merge.{NAME}.name": "journal-mem: keep one side, distill again after the merge",
            f"merge.{NAME}.driver": driver_command(python)}
    changed = False
    for key, value in want.items():
        res = gitcore.run(["config", "--local", "--get", key], root, clean=True, check=False)
        if res.text().rstrip("\n") != value:
            gitcore.run(["config", "--local", key, value], root, clean=True)
            changed = True
    return f"registered the {NAME} merge driver in .git/config" if changed else None


def unregister(root: str) -> str | None:
    """Remove our driver from the repository config; what was done."""
    res = gitcore.run(["config", "--local", "--remove-section", f"merge.{NAME}"], root,
                       clean=True, check=False)
    return f"removed the {NAME} merge driver from .git/config" if res.ok else None


def merge(current: str, path: str, cwd: str) -> int:
    """The driver: keep `current` (git's %A, the checked-out side) as the result and ask
    for a distill after the merge. Returns 0: the file is resolved."""

    try:
        state_dir = gitcore.locate(cwd).state_dir
        os.makedirs(state_dir, exist_ok=True)
        with open(os.path.join(state_dir, REDISTILL), "a", encoding="utf-8") as fh:
            fh.write(path + "\n")
    except (OSError, JournalMemError):
        pass  # the next distill with pending lessons still rebuilds every file
    return 0 if os.path.isfile(current) else 1


def wanted(state_dir: str) -> bool:
    """True while a merge kept one side of distilled files and no distill has run since."""
    return os.path.exists(os.path.join(state_dir, REDISTILL))


def done(state_dir: str) -> None:
    """A distill folded everything on disk: forget the request."""
    try:
        os.unlink(os.path.join(state_dir, REDISTILL))
    except FileNotFoundError:
        pass
