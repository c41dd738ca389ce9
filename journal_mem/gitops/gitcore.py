"""How journal-mem runs git, and where things are: the environment every call gets,
the two runners, the current worktree, its git dirs and the main checkout.

Only `os` is imported at module level: `run` and the guard's fast path (`spawn_git`)
start git by posix_spawn and read its pipes, because `import subprocess` alone costs
about half a bare interpreter start
(docs/DESIGN.md, "Git facts this design relies on"). `subprocess` is imported only
where git processes run side by side (`run_all`), stay to answer (`start`), or take
more on stdin than a pipe holds.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from journal_mem.errors import GitError, UnsupportedRepo

TYPE_CHECKING = False  # `typing` is not on the hook fast path
if TYPE_CHECKING:
    import subprocess

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


def run_env(env: dict[str, str] | None = None, *, clean: bool = False) -> dict[str, str]:
    """The environment of a git call `run` makes (`env`, else ours; with `clean`, without a
    hook's inherited GIT_* variables): for a git process started otherwise."""
    env = git_env(env if env is not None else clean_env() if clean else None)
    env.setdefault("LC_ALL", "C")
    # `git status` and friends would otherwise rewrite the index opportunistically,
    # taking index.lock: a user's `git add` at that moment would fail.
    env.setdefault("GIT_OPTIONAL_LOCKS", "0")
    return env


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
    background child behind: an inherited distill lock would outlive us). `stdin`
    None: git reads ours.

    Started by posix_spawn where there is one, so that a command running git one call
    at a time never imports `subprocess` (~4 ms of CPU); as `subprocess` would start
    it: in `cwd` (an error as its `chdir` raises), with the signals Python ignores set
    back to their defaults. A `stdin` over `SMALL_STDIN` goes through `run_all`.
    """
    if hasattr(os, "posix_spawnp") and (stdin is None or len(stdin) <= SMALL_STDIN):
        _enterable(cwd)
        result = GitResult(*_spawned(["-C", cwd, *args], run_env(env, clean=clean),
                                     "capture", stdin, reset=_IGNORED))
    else:
        result = run_all([args], cwd, clean=clean, stdin=stdin, env=env)[0]
    if check and not result.ok:
        err = result.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {err}")
    return result


def run_all(arg_lists: list[list[str]], cwd: str, *, clean: bool = False,
            stdin: bytes | None = None, env: dict[str, str] | None = None,
            at_once: int = 4) -> list[GitResult]:
    """`run` (without `check`) of each of `arg_lists`, in order, up to `at_once` git
    processes side by side (each given `stdin`): each costs a few ms of start and of
    waiting for it, and a distill walking several files' histories asked them one
    after the other."""
    env = run_env(env, clean=clean)
    results: list[GitResult] = []
    running: list[subprocess.Popen[bytes]] = []

    def finish() -> None:
        out, err = running[0].communicate(stdin)
        results.append(GitResult(running.pop(0).returncode, out, err))

    try:
        for args in arg_lists:
            if len(running) >= at_once:
                finish()
            running.append(start(args, cwd, env,
                                 stdin="pipe" if stdin is not None else "inherit"))
        while running:
            finish()
    finally:
        for proc in running:  # an error while they ran (^C): none is left behind
            proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
    return results


def start(args: list[str], cwd: str, env: dict[str, str], *, stdin: str = "null",
          stderr: bool = True) -> subprocess.Popen[bytes]:
    """`git ARGS` started in `cwd` with `env`, its stdout a pipe, its stdin a pipe,
    nothing or ours (`stdin`: "pipe", "null", "inherit"), its stderr a pipe or nothing;
    no file descriptor of ours inherited. `subprocess` is imported here, when first
    needed: a command running git one call at a time never imports it (`run`)."""
    import subprocess

    return subprocess.Popen(
        ["git", *args], cwd=cwd, env=env,
        stdin={"pipe": subprocess.PIPE, "null": subprocess.DEVNULL}.get(stdin),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE if stderr else subprocess.DEVNULL,
        close_fds=True)


def spawn_git(args: list[str], cwd: str, *, quiet: bool = False) -> tuple[int, bytes]:
    """Run git with only `os` imported (the hook fast path). Returns (exit code, stdout).

    With `quiet`, git's stderr goes to /dev/null (the caller reports failures itself).
    Where there is no `posix_spawn` (Windows), through `subprocess`.
    """
    if not hasattr(os, "posix_spawnp"):
        result = run(["-C", cwd, *args], cwd, check=False, stdin=b"", env=git_env())
        if not quiet and result.stderr:
            os.write(2, result.stderr)
        return result.returncode, result.stdout
    code, out, _ = _spawned(["-C", cwd, *args], git_env(), "null" if quiet else "inherit")
    return code, out


SMALL_STDIN = 4096  # written whole before git's output is read: a pipe holds it


def _enterable(cwd: str) -> None:
    """Raise what `subprocess` raises for a `cwd` it cannot enter (git's `-C` would fail
    with its own message instead)."""
    if not stat.S_ISDIR(os.stat(cwd).st_mode):  # FileNotFoundError for none
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), cwd)


def _ignored_signals() -> tuple[int, ...]:
    """The signals Python ignores that `subprocess` sets back to their defaults in a child
    (`restore_signals`): a hook of a `git commit` or `git push` expects SIGPIPE as usual.
    Read from `_signal`, which the interpreter loads at start (`signal` costs ~0.4 ms)."""
    module = sys.modules.get("_signal")
    found = (getattr(module, name, None) for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ"))
    return tuple(number for number in found if isinstance(number, int))


_IGNORED = _ignored_signals()


def _spawned(argv: list[str], env: dict[str, str], stderr: str,
             stdin: bytes | None = b"", reset: tuple[int, ...] = ()) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of `git ARGV` started by posix_spawn, given `stdin`
    (at most `SMALL_STDIN` bytes: written before any output is read; None: ours), its
    stderr inherited, sent to /dev/null or captured (`stderr`); `reset`: signals set back
    to their defaults in it."""
    # each above 2: with this process's stdout closed, the pipe took fd 1, and the child,
    # closing the pipe's read end after making its write end fd 1, lost its stdout (git
    # answered nothing, and `locate` took the work tree for the git dir)
    pipes = []
    for _ in range(2 if stderr == "capture" else 1):
        read_fd, write_fd = os.pipe()
        pipes.append((_above_2(read_fd), _above_2(write_fd)))
    devnull = _above_2(os.open(os.devnull, os.O_RDWR))
    given = tuple(_above_2(fd) for fd in os.pipe()) if stdin else (devnull, -1)
    actions: list[tuple[int, ...]] = ([] if stdin is None  # ours: inherited as it is
                                      else [(os.POSIX_SPAWN_DUP2, given[0], 0)])
    if stdin:
        actions.append((os.POSIX_SPAWN_CLOSE, given[1]))
    for target, (read_fd, write_fd) in zip((1, 2), pipes, strict=False):
        actions += [(os.POSIX_SPAWN_DUP2, write_fd, target), (os.POSIX_SPAWN_CLOSE, read_fd)]
    if stderr == "null":
        actions.append((os.POSIX_SPAWN_DUP2, devnull, 2))
    try:
        pid = os.posix_spawnp("git", ["git", *argv], env, file_actions=actions,
                              setsigdef=reset)
    except BaseException:
        for read_fd, _ in pipes:
            os.close(read_fd)
        if stdin:
            os.close(given[1])
        raise
    finally:
        for _, write_fd in pipes:
            os.close(write_fd)
        os.close(devnull)
        if stdin:
            os.close(given[0])
    if stdin:
        try:
            os.write(given[1], stdin)  # a pipe takes SMALL_STDIN bytes without a reader
        except BrokenPipeError:
            pass  # git ended without reading it: its exit code says why
        finally:
            os.close(given[1])
    got = _drain([read_fd for read_fd, _ in pipes])
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), got[0], got[1] if len(got) > 1 else b""


def _drain(fds: list[int]) -> list[bytes]:
    """Everything read from each of `fds` until its end, read as it comes (a pipe read
    after another fills while the first is read), each closed then."""
    chunks: dict[int, list[bytes]] = {fd: [] for fd in fds}
    try:
        if len(fds) == 1:
            while chunk := os.read(fds[0], 65536):
                chunks[fds[0]].append(chunk)
        else:
            import select  # a C module: ~0.1 ms

            poller = select.poll()
            for fd in fds:
                poller.register(fd, select.POLLIN)
            open_fds = set(fds)
            while open_fds:
                for fd, _ in poller.poll():
                    chunk = os.read(fd, 65536)
                    if chunk:
                        chunks[fd].append(chunk)
                    else:
                        poller.unregister(fd)
                        open_fds.discard(fd)
    finally:
        for fd in fds:
            os.close(fd)
    return [b"".join(chunks[fd]) for fd in fds]


def _above_2(fd: int) -> int:
    """`fd`, or a copy of it numbered 3 or more (0-2 are free: this process was started
    without them)."""
    low = []
    while fd < 3:
        low.append(fd)
        fd = os.dup(fd)
    for spare in low:
        os.close(spare)
    return fd


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
    return UnsupportedRepo(
        f"{cwd} is not inside a git work tree ({detail})",
        hint="run journal-mem inside a git repository's checkout, or pass -C PATH",
    )


def locate(cwd: str) -> Repo:
    """Find the current worktree and the main checkout (docs/DESIGN.md,
    "Git facts this design relies on").

    Read from the files git itself reads when nothing is out of the ordinary
    (`_read_from_files`); else one git call (through `spawn_git`, so `subprocess`
    is not imported), and in a linked worktree one more, for the common dir's
    `core.*` settings.
    """
    if not os.path.isdir(cwd):
        raise _not_a_repo(cwd, "no such directory")
    found = _read_from_files(cwd)
    return found if found is not None else _asked_of_git(cwd)


# Set, any of these changes where git finds the repository or what it makes of it:
# `locate` then asks git (GIT_INDEX_FILE and GIT_PREFIX, which every hook has, do not).
_DISCOVERY_ENV = (*(v for v in LOCAL_ENV_VARS if v not in ("GIT_INDEX_FILE", "GIT_PREFIX")),
                  "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM")


def _read_from_files(cwd: str) -> Repo | None:
    """`locate`'s answer read from the files git reads, without running it (a git process
    is ~1.5 ms of every hot path, twice in a linked worktree); None whenever anything is
    out of the ordinary, and git answers.

    The ordinary case, as git's discovery finds it: walking up from `cwd` on one file
    system, the first folder with a `.git` (a git dir, or a `gitdir:` file naming one)
    is the top of the work tree, no folder on the way looks like a git dir itself (a bare
    repository, or the inside of one), the work tree and its git dirs are this user's
    (else `safe.directory` decides), and the common dir's config neither makes it bare,
    nor moves its work tree (`core.worktree`), nor includes another file.
    """
    if not hasattr(os, "geteuid") or any(name in os.environ for name in _DISCOVERY_ENV):
        return None  # (no owner to compare on Windows)
    try:
        folder = os.path.realpath(cwd)
        device = os.stat(folder).st_dev
        while not os.path.lexists(os.path.join(folder, ".git")):
            if os.path.lexists(os.path.join(folder, "HEAD")):
                return None  # perhaps inside a git dir, or a bare repository
            parent = os.path.dirname(folder)
            if parent == folder or os.stat(parent).st_dev != device:
                return None
            folder = parent
        dot = os.path.join(folder, ".git")
        if os.path.isdir(dot):
            git_dir = common_dir = os.path.realpath(dot)
            if os.path.lexists(os.path.join(git_dir, "commondir")):
                return None
        else:
            named = _gitfile_dir(folder)
            if named is None:
                return None
            git_dir = os.path.realpath(named)
            common_dir = _common_from_gitfile(folder) or ""
        user = os.geteuid()
        if not all(_is_git_dir(git_dir, common_dir)
                   and os.stat(path).st_uid == user for path in (folder, git_dir, common_dir)):
            return None
    except (OSError, ValueError):
        return None
    if not _ordinary_config(common_dir):
        return None
    if git_dir == common_dir:
        return Repo(git_dir, common_dir, folder, folder)
    main = os.path.dirname(common_dir)  # no core.worktree: the common dir is <main>/.git
    if os.path.basename(common_dir) != ".git" or not _is_checkout_of(main, common_dir):
        return None
    return Repo(git_dir, common_dir, folder, main)


def _is_git_dir(git_dir: str, common_dir: str) -> bool:
    """Whether git would take `git_dir` for a git dir: a HEAD naming a ref or a commit,
    and the objects and refs of its common dir."""
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as fh:
            head = fh.read(200).strip()
    except (OSError, UnicodeDecodeError):
        return False
    return (head.startswith("ref: refs/") or _is_oid(head)) and all(
        os.path.isdir(os.path.join(common_dir, name)) for name in ("objects", "refs"))


_FALSE = ("false", "no", "off", "0")


def _ordinary_config(common_dir: str) -> bool:
    """Whether the config in `common_dir` leaves the repository as git's discovery found
    it: `core.bare` false or unset, no `core.worktree`, no include, no extension (such as
    per-worktree config), a format version git 2.39 reads. What this reading does not
    follow (a continued line, a quoted value of `core.bare`) counts as out of the
    ordinary."""
    try:
        with open(os.path.join(common_dir, "config"), encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return False
    section = ""
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            return False  # a value continued on the next line
        if line.startswith("["):
            header, _, rest = line[1:].partition("]")
            section = header.strip().lower()
            if section.startswith("include") or rest.strip()[:1] not in ("", "#", ";"):
                return False
            continue
        if section == "extensions":
            return False  # per-worktree config, another ref store or object format
        if section != "core":
            continue
        name, _, value = line.partition("=")
        name, value = name.strip().lower(), value.split("#")[0].split(";")[0].strip().lower()
        if (name == "worktree" or (name == "bare" and value not in _FALSE)
                or (name == "repositoryformatversion" and value not in ("0", "1"))):
            return False  # a quoted "false" too: it is not read here
    return True


def _asked_of_git(cwd: str) -> Repo:
    """`locate` by `git rev-parse` (and `find_main_checkout`)."""
    code, lines = _rev_parse(cwd)
    if len(lines) >= 3 and lines[2] == "true":
        raise UnsupportedRepo(
            f"{cwd} is a bare repository: there is no main checkout to hold the journal",
            hint="clone it (git clone) and run journal-mem in the clone",
        )
    if code != 0 or len(lines) != 4 or not all(lines[i] for i in (0, 1, 3)):
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
    target = _gitfile_dir(candidate)
    return target is not None and os.path.realpath(target) == common_dir


def find_main_checkout(common_dir: str) -> str:
    """The main checkout of the repository whose common git dir is `common_dir`."""
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


def current_branch(root: str, git_dir: str = "") -> str:
    """The branch checked out at `root`, or "" when HEAD is detached; read from the HEAD
    file of `git_dir` (`root`'s git dir) when given and it can tell (`symbolic_head`)."""
    named = symbolic_head(git_dir) if git_dir else None
    if named == "" or (named is not None and named.startswith("refs/heads/")):
        return named.removeprefix("refs/heads/")
    res = run(["symbolic-ref", "--quiet", "--short", "HEAD"], root, clean=True, check=False)
    return res.text().strip() if res.ok else ""


def symbolic_head(git_dir: str) -> str | None:
    """The ref `<git_dir>/HEAD` names ("" when detached); None when the file cannot say
    (the reftable store keeps `refs/heads/.invalid` there)."""
    try:
        with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
            text = fh.read().decode("utf-8", "surrogateescape").strip()
    except OSError:
        return None
    if text.startswith("ref: "):
        name = text[5:].strip()
        return name if _plain_ref(name) and name != "refs/heads/.invalid" else None
    return "" if _is_oid(text) else None


# the characters of the ref names read from files; any other name is git's to judge
_REF_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       "-_./+@#%=,")


def _plain_ref(name: str) -> bool:
    """Whether `name` is a ref name git would take as it is, spelled plainly enough to
    read its file: one of `_REF_CHARS` each, no empty, `.` or `..` part, no `.lock`."""
    parts = name.split("/")
    return (all(c in _REF_CHARS for c in name) and "" not in parts
            and not any(p.startswith(".") or p.endswith(".lock") for p in parts))


def has_head(root: str) -> bool:
    """False before the first commit."""
    return run(["rev-parse", "--verify", "--quiet", "HEAD"], root, clean=True, check=False).ok


def head_from_files(common_dir: str) -> str | None:
    """The commit the main checkout's HEAD names, read from the ref files under
    `common_dir` ("" on an unborn branch), without running git; None when the files
    cannot say (the reftable store, a symbolic ref chain, anything odd): ask git then."""
    try:
        with open(os.path.join(common_dir, "HEAD"), encoding="utf-8") as fh:
            text = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if _is_oid(text):
        return text  # detached
    ref = text.removeprefix("ref: ").strip() if text.startswith("ref: ") else ""
    return ref_from_files(common_dir, ref)


def ref_from_files(common_dir: str, ref: str) -> str | None:
    """The commit the branch `ref` (`refs/heads/…`) holds, read from its loose file or
    `packed-refs` under `common_dir` ("" when there is no such branch); None when the
    files cannot say: ask git then."""
    if not ref.startswith("refs/heads/") or not _plain_ref(ref):
        return None
    try:
        with open(os.path.join(common_dir, *ref.split("/")), encoding="utf-8") as fh:
            value = fh.read().strip()
        return value if _is_oid(value) else None
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, ValueError):  # ValueError: a NUL in the name
        return None
    try:
        with open(os.path.join(common_dir, "packed-refs"), encoding="utf-8") as fh:
            for line in fh:
                oid, _, name = line.rstrip("\n").partition(" ")
                if name == ref and _is_oid(oid):
                    return oid
    except FileNotFoundError:
        return ""  # no such branch yet: nothing committed on it
    except (OSError, UnicodeDecodeError):
        return None
    return ""


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


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
            return _common_from_gitfile(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _gitfile_dir(folder: str) -> str | None:
    """The git dir a `.git` file in `folder` points at (`gitdir: PATH`), or None."""
    try:
        with open(os.path.join(folder, ".git"), encoding="utf-8") as fh:
            line = fh.readline().strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.join(folder, line[len("gitdir:"):].strip())


def _common_from_gitfile(folder: str) -> str | None:
    git_dir = _gitfile_dir(folder)
    if git_dir is None:
        return None
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            common = fh.readline().strip()
    except FileNotFoundError:
        return os.path.realpath(git_dir)  # a submodule or separate git dir: its own
    except OSError:
        return None
    return os.path.realpath(os.path.join(git_dir, common))


def resolve(root: str, rev: str) -> str | None:
    """The commit id `rev` names in the repository at `root`, or None."""
    res = run(["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], root, clean=True,
              check=False)
    return res.text().strip() or None if res.ok else None
