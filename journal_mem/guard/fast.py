"""`jmem guard`: the pre-commit / pre-merge-commit policy (docs/DESIGN.md, "Git hooks").

Fast path: nearly every commit stages nothing under the memory root. That is
answered after ONE git call (`git diff --cached --name-only`, environment as
the hook inherited it, so that `commit -a` and `commit <path>` see their
temporary index) with only `os`/`sys` and two small modules of ours imported
— not `subprocess`, click or pydantic (docs/DESIGN.md, "Git facts this design relies on").

Slow path (something under the memory root is staged): every staged change
is judged by `guard_rules.judge`, which prints each problem with its path,
the rule, and the command that does it right. Exit 1 blocks the commit.
"""

from __future__ import annotations

import os
import sys

from journal_mem import settings
from journal_mem.gitops import gitcore
from journal_mem.options import Option, parse

HOOKS = ("pre-commit", "pre-merge-commit")


class Verdict:
    """The guard's answer: an exit code and the lines to print (on stderr)."""

    __slots__ = ("code", "lines")

    def __init__(self, code: int, lines: list[str]) -> None:
        self.code = code
        self.lines = lines


def find_top(cwd: str) -> str:
    """The top of the worktree around `cwd` (where `.git` is), found without running git."""
    work_tree = settings.env_value("GIT_WORK_TREE")
    if work_tree is not None:
        return os.path.abspath(work_tree)
    path = start = os.path.abspath(cwd)
    while not os.path.exists(os.path.join(path, ".git")):
        parent = os.path.dirname(path)
        if parent == path:
            return start
        path = parent
    return path


def disabled_reason(top: str) -> str | None:
    """Why the guard is switched off, or None when it is on."""
    if settings.env_flag("JMEM_DISABLE"):
        return "JMEM_DISABLE=1"
    if not settings.Settings(top).switch("hooks.guard"):
        return "hooks.guard = false"
    return None


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


def touches_memory(cwd: str, root: str) -> bool:
    """The fast path's one git call: is anything staged under `root`?

    A failing git call answers True, so that the slow path reports it properly.
    """
    code, out = gitcore.spawn_git(
        ["diff", "--cached", "--name-only", "-z", "--no-renames", "--no-color"], cwd
    )
    if code != 0:
        return True
    return any(might_be_memory(p, root)
               for p in out.decode("utf-8", "surrogateescape").split("\0") if p)


def might_be_memory(path: str, root: str) -> bool:
    """Whether a staged path needs the slow path.

    `root` is the work tree's; the slow path judges by HEAD's root, so the
    config file itself and anything shaped like memory under another root go
    there too, as does a path above the root (a `.claude` symlink would
    redirect memory).
    """
    if under(path, root) or root.startswith(path + "/") or path == settings.CONFIG_FILE:
        return True
    slashed = "/" + path
    return slashed.endswith(("/MEMORY.md", "/distill-state.json")) or (
        "/journal/" in slashed or "/topics/" in slashed)


def decide(cwd: str, hook: str | None = None) -> Verdict:
    """Judge what is staged in the worktree around `cwd`. Exit code 0 lets the commit go."""
    top = find_top(cwd)
    reason = disabled_reason(top)
    if reason is not None:
        return Verdict(0, [f"jmem guard: off ({reason}); nothing checked"])
    if not touches_memory(cwd, settings.Settings(top).memory_root):
        return Verdict(0, [])
    from journal_mem.guard.rules import judge

    return Verdict(*judge(cwd, hook or "pre-commit"))


OPTIONS = (Option("--hook", dest="hook", kind="choice", choices=HOOKS,
                  help="The git hook calling (it only changes the wording)."),)


def fast_main(args: list[str]) -> int | None:
    """`jmem guard [--hook NAME]` without click, read by the command's own declaration;
    None when the arguments need click."""
    got = parse(args, OPTIONS)
    if got is None:
        return None
    verdict = decide(os.getcwd(), got["hook"])
    for line in verdict.lines:
        print(line, file=sys.stderr)
    return verdict.code
