"""Where things are: the current worktree, its git dirs and the main checkout.

The runners live in `gitrun.py` and are re-exported here, so `gitfacts.run`
and friends keep working. Only `os` is imported at module level: `locate`
runs git through `spawn_git` on the hooks' fast path (docs/DESIGN.md,
"Git facts this design relies on").
"""

from __future__ import annotations

import os

from journal_mem.gitops.gitrun import (
    EMPTY_TREE,
    LOCAL_ENV_VARS,
    PATHSPEC_ENV_VARS,
    GitResult,
    clean_env,
    git_env,
    run,
    spawn_git,
)

__all__ = [
    "EMPTY_TREE", "LOCAL_ENV_VARS", "PATHSPEC_ENV_VARS", "GitResult", "Repo", "clean_env",
    "current_branch", "find_main_checkout", "git_env", "has_head", "locate",
    "quick_common_dir", "run", "spawn_git",
]



class Repo:
    """Where things are: the current worktree, its git dirs, and the main checkout."""

    __slots__ = ("common_dir", "git_dir", "main_root", "worktree_root")

    def __init__(self, git_dir: str, common_dir: str, worktree_root: str, main_root: str) -> None:
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.worktree_root = worktree_root
        self.main_root = main_root

    @property
    def is_main(self) -> bool:
        """True in the main checkout, False in a linked worktree."""
        return self.git_dir == self.common_dir

    @property
    def state_dir(self) -> str:
        """Machine-local state: `<git-common-dir>/journal-mem` (never committed)."""
        return os.path.join(self.common_dir, "journal-mem")


def _not_a_repo(cwd: str, detail: str) -> Exception:
    from journal_mem.errors import UnsupportedRepo

    return UnsupportedRepo(
        f"{cwd} is not inside a git work tree ({detail})",
        hint="run journal-mem inside a git repository's checkout, or pass -C PATH",
    )


def locate(cwd: str) -> Repo:
    """Find the current worktree and the main checkout (docs/DESIGN.md,
    "Git facts this design relies on").

    One git call (through `spawn_git`, so `subprocess` is not imported); a
    linked worktree costs one more, for the common dir's `core.*` settings.
    """
    from journal_mem.errors import UnsupportedRepo

    if not os.path.isdir(cwd):
        raise _not_a_repo(cwd, "no such directory")
    code, lines = _rev_parse(cwd)
    if len(lines) >= 3 and lines[2] == "true":
        raise UnsupportedRepo(
            f"{cwd} is a bare repository: there is no main checkout to hold the journal",
            hint="clone it (git clone) and run journal-mem in the clone",
        )
    if code != 0 or len(lines) != 4:
        raise _not_a_repo(cwd, "git rev-parse found no work tree here")
    git_dir, common_dir, top = (os.path.realpath(lines[i]) for i in (0, 1, 3))
    if "GIT_DIR" in os.environ and "GIT_WORK_TREE" not in os.environ:
        top = _top_of(git_dir, common_dir, top)
    if git_dir == common_dir:
        return Repo(git_dir, common_dir, top, top)
    return Repo(git_dir, common_dir, top, find_main_checkout(common_dir))


def _top_of(git_dir: str, common_dir: str, guess: str) -> str:
    """The work tree of `git_dir` when GIT_DIR is set without GIT_WORK_TREE.

    git then takes the current directory for the top of the work tree, so a
    shell in `<top>/sub` would put memory under `sub/.claude/`. The checkout
    the git dir belongs to is found as for a hook instead; `guess` (git's
    answer) stays when there is none.
    """
    from journal_mem.errors import UnsupportedRepo

    if git_dir == common_dir:
        try:
            return find_main_checkout(common_dir)
        except UnsupportedRepo:
            return guess
    try:  # a linked worktree's git dir names its `.git` file
        with open(os.path.join(git_dir, "gitdir"), encoding="utf-8") as fh:
            dot_git = fh.read().removesuffix("\n")
    except (OSError, UnicodeDecodeError):
        return guess
    return os.path.realpath(os.path.dirname(dot_git))


_WHERE = ("--absolute-git-dir", "--git-common-dir", "--is-bare-repository", "--show-toplevel")


def _rev_parse(cwd: str) -> tuple[int, list[str]]:
    """(exit code, answers) of `git rev-parse` for `_WHERE`, one answer per flag given.

    rev-parse has no `-z`: its answers are separated by "\n" only (never
    `splitlines`, which also splits at a form feed or U+0085, both legal in a
    path). When a path holds a "\n" itself, each flag is asked on its own.
    """
    code, out = spawn_git(["rev-parse", "--path-format=absolute", *_WHERE], cwd, quiet=True)
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if lines[-1] == "":
        lines.pop()
    if len(lines) <= len(_WHERE) and (code != 0 or len(lines) == len(_WHERE)):
        return code, lines
    answers: list[str] = []
    for flag in _WHERE:
        code, out = spawn_git(["rev-parse", "--path-format=absolute", flag], cwd, quiet=True)
        if code != 0:
            return code, answers
        answers.append(out.decode("utf-8", "surrogateescape").removesuffix("\n"))
    return 0, answers


def _core_settings(common_dir: str) -> dict[str, str]:
    """`core.bare` and `core.worktree` of a repository, read with the hook's GIT_* dropped."""
    saved = {k: os.environ.pop(k) for k in LOCAL_ENV_VARS if k in os.environ}
    try:
        _, out = spawn_git(
            ["--git-dir", common_dir, "config", "--null", "--get-regexp",
             r"^core\.(bare|worktree)$"],
            common_dir,
            quiet=True,
        )
    finally:
        os.environ.update(saved)
    found = {}
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        name, _, value = item.partition("\n")
        if name:
            found[name.lower()] = value
    return found


def _is_checkout_of(candidate: str, common_dir: str) -> bool:
    """True when `candidate` is a work tree whose git dir is `common_dir`."""
    dot_git = os.path.join(candidate, ".git")
    if os.path.isdir(dot_git):
        return os.path.realpath(dot_git) == common_dir
    try:
        with open(dot_git, encoding="utf-8") as fh:
            pointer = fh.read().strip()
    except OSError:
        return False
    if not pointer.startswith("gitdir:"):
        return False
    target = os.path.join(candidate, pointer.removeprefix("gitdir:").strip())
    return os.path.realpath(target) == common_dir


def find_main_checkout(common_dir: str) -> str:
    """The main checkout of the repository whose common git dir is `common_dir`."""
    from journal_mem.errors import UnsupportedRepo

    core = _core_settings(common_dir)
    if core.get("core.bare", "").lower() in ("true", "yes", "on", "1"):
        raise UnsupportedRepo(
            f"the repository at {common_dir} is bare: its worktrees have no main checkout "
            "to hold the journal",
            hint="keep one non-bare clone as the main checkout and run journal-mem there",
        )
    worktree = core.get("core.worktree", "")
    if worktree:
        candidate = os.path.realpath(os.path.join(common_dir, worktree))
    elif os.path.basename(common_dir) == ".git":
        candidate = os.path.dirname(common_dir)
    else:
        raise UnsupportedRepo(
            f"cannot find the main checkout of {common_dir} (separate git dir without "
            "core.worktree)",
            hint="set core.worktree in that git dir, or run journal-mem in the main checkout",
        )
    if not _is_checkout_of(candidate, common_dir):
        raise UnsupportedRepo(f"the main checkout of {common_dir} is missing ({candidate})")
    return candidate


def current_branch(root: str) -> str:
    """The branch checked out at `root`, or "" when HEAD is detached."""
    res = run(["symbolic-ref", "--quiet", "--short", "HEAD"], root, clean=True, check=False)
    return res.text().strip() if res.ok else ""


def has_head(root: str) -> bool:
    """False before the first commit."""
    return run(["rev-parse", "--verify", "--quiet", "HEAD"], root, clean=True, check=False).ok


def quick_common_dir(cwd: str) -> str | None:
    """The git common dir of the checkout holding `cwd`, found without running git.

    For the live check at every prompt: walks up to the first `.git` (a folder
    in a main checkout; a `gitdir:` file in a linked worktree, whose git dir
    names the common dir in `commondir`). None when it cannot tell: the
    caller then does nothing, or asks git.
    """
    folder = os.path.abspath(cwd)
    while True:
        dot = os.path.join(folder, ".git")
        if os.path.isdir(dot):
            return os.path.realpath(dot)
        if os.path.isfile(dot):
            return _common_from_gitfile(folder, dot)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _common_from_gitfile(folder: str, dot: str) -> str | None:
    try:
        with open(dot, encoding="utf-8") as fh:
            line = fh.readline().strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    git_dir = os.path.join(folder, line[len("gitdir:"):].strip())
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            common = fh.readline().strip()
    except FileNotFoundError:
        return os.path.realpath(git_dir)  # a submodule or separate git dir: its own
    except OSError:
        return None
    return os.path.realpath(os.path.join(git_dir, common))
