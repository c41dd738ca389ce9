"""The guard's rules for staged memory changes (the slow path of `jmem guard`).

Linked worktree: a staged memory path is refused unless it only makes the
worktree equal to the main checkout's committed memory (that is what merging
or checking out the main branch does; anything else is an edit made here).

Main checkout: the rules in `guard_main.py`. What the rules share (the
refused change, the policy, the kind of a path) is in `guard_policy.py`.
"""

from __future__ import annotations

import dataclasses
import shlex

from journal_mem.commands.guard_main import main_rules
from journal_mem.commands.guard_policy import (
    CONFIG_FILE,
    RESCUE,
    ROOT_MOVE_ENV,
    WHAT,
    Policy,
    Problem,
    classify,
    load_policy,
)
from journal_mem.config import settings
from journal_mem.errors import OK, REFUSED
from journal_mem.gitops import gitfacts, staged
from journal_mem.gitops.staged import Change
from journal_mem.store.layout import Layout, root_at

__all__ = ["Policy", "Problem", "classify", "judge", "load_policy", "main_rules", "render",
           "worktree_rules"]


def judge(cwd: str, hook: str) -> tuple[int, list[str]]:
    """Judge the staged changes under the memory root; exit 1 with every problem.

    The root is HEAD's (the committed config), not the one the commit stages:
    a commit that moves it is refused unless JMEM_ALLOW_ROOT_MOVE=1, and then
    both roots are judged.
    """
    policy = load_policy(cwd)
    staged_root = root_at(cwd, "") or policy.layout.memory_root
    head_root = root_at(cwd, "HEAD") if gitfacts.has_head(cwd) else None
    head_root = head_root or staged_root  # no config committed yet: nothing moves
    rules = []
    if head_root != staged_root and not settings.env_flag(ROOT_MOVE_ENV):
        rules.append(root_moved(head_root, staged_root))
    for root in dict.fromkeys([head_root, staged_root]):
        rules += judge_root(dataclasses.replace(policy, layout=Layout(policy.repo, root)), cwd)
    if not rules:
        return OK, []
    return REFUSED, render(hook, head_root, rules)


def judge_root(policy: Policy, cwd: str) -> list[Problem]:
    """Every problem of the staged changes under `policy`'s memory root and above it."""
    root = policy.layout.memory_root
    ancestors = policy.layout.ancestors()
    # one call covers the root and the folders above it (`.claude`)
    every = staged.changes(cwd, ancestors[0] if ancestors else root)
    changes = [c for c in every if c.path == root or c.path.startswith(root + "/")]
    rules = [above_root(c) for c in every if c.path in ancestors and c.status != "D"]
    if changes:
        rules += (main_rules(policy, cwd, changes) if policy.repo.is_main
                  else worktree_rules(policy, changes))
    return rules


def root_moved(old: str, new: str) -> Problem:
    """The commit changes `memory_root`: what it does under either root is judged by neither."""
    rule = (f"moves memory_root from {old}/ to {new}/: a commit is judged by the memory root "
            "already committed, so moving it needs a separate, deliberate commit")
    return Problem(CONFIG_FILE, rule, [
        f"git restore --staged -- {CONFIG_FILE}   (keep the committed memory_root)",
        f"{ROOT_MOVE_ENV}=1 git commit …   (a deliberate move: commit the config and "
        "`git mv` of the folder only)",
    ])


def above_root(change: Change) -> Problem:
    """A file or symlink staged where a folder above the memory root must be."""
    quoted = shlex.quote(change.path)
    what = "a symlink" if change.is_symlink else "a file"
    rule = (f"{what} where a folder above the memory root must be: memory would be read and "
            "written wherever it points, outside the repository")
    return Problem(change.path, rule, [f"git rm --cached -q -- {quoted}   (and make it a real "
                                       "folder)"])


def render(hook: str, root: str, problems: list[Problem]) -> list[str]:
    what = "merge" if hook == "pre-merge-commit" else "commit"
    count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
    out = [f"jmem guard: {what} refused by the {hook} hook: {count} under {root}/"]
    for problem in problems:
        out += problem.lines()
    if what == "merge":
        out.append("jmem guard: the merge is still in progress: fix the above and run "
                   "`git commit`, or `git merge --abort`")
    else:
        out.append("jmem guard: nothing was committed; fix the above and commit again")
    return out


# --- linked worktree ----------------------------------------------------------


def worktree_rules(policy: Policy, changes: list[Change]) -> list[Problem]:
    """Refuse every staged memory change that differs from the main checkout's HEAD."""
    main = policy.repo.main_root
    root = policy.layout.memory_root
    theirs = staged.tree_blobs(main, "HEAD", root) if gitfacts.has_head(main) else {}
    problems = []
    for change in changes:
        have = theirs.get(change.path)
        if change.status == "D" and have is None:
            continue
        if change.status != "D" and have == (change.new_mode, change.new_blob):
            continue
        rule = (f"{WHAT.get(change.status, 'changed')} in a linked worktree: memory is written "
                "only into the main checkout's journal, never committed from a worktree")
        problems.append(Problem(change.path, rule, [RESCUE]))
    return problems

