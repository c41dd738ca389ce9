"""How journal-mem runs git: the environment every call gets, and the two runners.

Only `os` is imported at module level: the guard's fast path runs git through
`spawn_git` (posix_spawn and a pipe) because `import subprocess` alone costs
about a bare interpreter start (docs/DESIGN.md, "Git facts this design relies on").
`run` imports `subprocess` when first called.
"""

from __future__ import annotations

import os

# `git rev-parse --local-env-vars` (git 2.39): a hook inherits these, and any
# git call aimed at another checkout must drop them or it silently reads the
# hook's worktree and index.
LOCAL_ENV_VARS = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
)

# These change what every pathspec means (Magit runs git with
# `--literal-pathspecs`, which exports the first one to every hook): under
# them the `:(top,literal)` magic matches nothing and the guard would see no
# memory change at all. Every git call of ours runs without them, and so do
# the hooks of the commits we make.
PATHSPEC_ENV_VARS = (
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
)

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def git_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: ours) without the pathspec variables: what every git call gets."""
    source = os.environ if env is None else env
    return {k: v for k, v in source.items() if k not in PATHSPEC_ENV_VARS}


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment without the variables a hook's git inherits (pathspec ones too)."""
    env = {k: v for k, v in git_env().items() if k not in LOCAL_ENV_VARS}
    if extra:
        env.update(extra)
    return env


class GitResult:
    """What one git call returned."""

    __slots__ = ("returncode", "stderr", "stdout")

    def __init__(self, returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def text(self) -> str:
        return self.stdout.decode("utf-8", "surrogateescape")


def run(
    args: list[str],
    cwd: str,
    *,
    clean: bool = False,
    check: bool = True,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> GitResult:
    """Run `git ARGS` in `cwd`. With `clean`, drop a hook's inherited GIT_* variables.

    With `check`, a non-zero exit raises GitError naming the command. No file
    descriptor of ours is inherited (git runs hooks, and a hook may leave a
    background child behind: an inherited distill lock would outlive us).
    """
    import subprocess

    from journal_mem.errors import GitError

    env = git_env(env if env is not None else clean_env() if clean else None)
    env.setdefault("LC_ALL", "C")
    # `git status` and friends would otherwise rewrite the index opportunistically,
    # taking index.lock: a user's `git add` at that moment would fail.
    env.setdefault("GIT_OPTIONAL_LOCKS", "0")
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, check=False,
        close_fds=True,
    )
    result = GitResult(proc.returncode, proc.stdout, proc.stderr)
    if check and not result.ok:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {err}")
    return result


def spawn_git(args: list[str], cwd: str, *, quiet: bool = False) -> tuple[int, bytes]:
    """Run git with only `os` imported (the hook fast path). Returns (exit code, stdout).

    With `quiet`, git's stderr goes to /dev/null (the caller reports failures itself).
    """
    read_fd, write_fd = os.pipe()
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        pid = os.posix_spawnp(
            "git",
            ["git", "-C", cwd, *args],
            git_env(),
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, write_fd, 1),
                (os.POSIX_SPAWN_CLOSE, read_fd),
                *([(os.POSIX_SPAWN_DUP2, devnull, 2)] if quiet else []),
            ],
        )
    finally:
        os.close(write_fd)
        os.close(devnull)
    chunks = []
    with os.fdopen(read_fd, "rb") as pipe:
        while chunk := pipe.read(65536):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks)
