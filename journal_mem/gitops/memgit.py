"""What git says about the memory root of the main checkout, and the distiller's commit.

Every call goes through `gitfacts.run(..., clean=True)`: the distiller may run
from a post-commit hook of a linked worktree, whose inherited GIT_* variables
would otherwise point git at that worktree's index (docs/DESIGN.md, "Every git call in one place").
"""

from __future__ import annotations

import hashlib
import os

from journal_mem.errors import GitError
from journal_mem.gitops import gitfacts
from journal_mem.gitops.ticket import clear_ticket, write_ticket

ZERO = "0" * 40
_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase (or git am)"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)


def blob_id(data: bytes) -> str:
    """The id git gives a blob holding `data` (SHA-1 object format)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def in_progress(git_dir: str) -> str | None:
    """What operation the checkout whose git dir is `git_dir` is in the middle of, if any."""
    for name, what in _IN_PROGRESS:
        if os.path.exists(os.path.join(git_dir, name)):
            return what
    return None


def status(root: str, prefix: str) -> list[tuple[str, str]]:
    """(XY, repo-relative path) of every change under `prefix` (untracked files included)."""
    res = gitfacts.run(
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
         "--ignored=no", "--", prefix],
        root, clean=True,
    )
    out = []
    for item in res.stdout.split(b"\0"):
        if len(item) > 3:
            out.append((item[:2].decode(), item[3:].decode("utf-8", "surrogateescape")))
    return out


def ls_blobs(root: str, args: list[str], only: set[str] | None = None) -> dict[str, str]:
    """{repo-relative path: blob id} from `git ls-tree -r` or `git ls-files -s` output
    (with `only`, just those paths: 100k journal paths would cost ~25 MB a listing)."""
    res = gitfacts.run([*args], root, clean=True, check=False)
    out: dict[str, str] = {}
    if not res.ok:
        return out
    for item in res.stdout.split(b"\0"):
        meta, _, raw = item.partition(b"\t")
        parts = meta.split()
        if len(parts) >= 3:
            path = raw.decode("utf-8", "surrogateescape")
            if only is None or path in only:
                out[path] = (parts[2] if args[0] == "ls-tree" else parts[1]).decode()
    return out


def head_blobs(root: str, prefix: str, only: set[str] | None = None) -> dict[str, str]:
    """{path: blob id} under `prefix` in HEAD ({} before the first commit)."""
    return ls_blobs(root, ["ls-tree", "-r", "-z", "HEAD", "--", prefix], only)


def index_blobs(root: str, prefix: str, only: set[str] | None = None) -> dict[str, str]:
    """{path: blob id} under `prefix` in the index."""
    return ls_blobs(root, ["ls-files", "-s", "-z", "--", prefix], only)


def tree_paths(root: str, rev: str) -> frozenset[str]:
    """Every file path in `rev`'s tree and every folder above one ({} when `rev` is unborn)."""
    res = gitfacts.run(["ls-tree", "-r", "-z", "--name-only", rev], root, clean=True, check=False)
    paths: set[str] = set()
    if not res.ok:
        return frozenset()
    for raw in res.stdout.split(b"\0"):
        if not raw:
            continue
        path = raw.decode("utf-8", "surrogateescape")
        paths.add(path)
        while "/" in path:
            path = path.rsplit("/", 1)[0]
            if path in paths:
                break
            paths.add(path)
    return frozenset(paths)


def last_commit_of(root: str, path: str) -> str | None:
    """The newest commit that changed `path`, or None."""
    res = gitfacts.run(["log", "-1", "--format=%H", "--", path], root, clean=True, check=False)
    sha = res.text().strip()
    return sha or None


def _pathspecs(paths: list[str]) -> bytes:
    """Literal pathspecs, one per path: magic in each spec rather than `git
    --literal-pathspecs`, which git would export to the hooks of our commit."""
    return b"".join(f":(top,literal){p}".encode("utf-8", "surrogateescape") + b"\0"
                    for p in paths)


def commit(root: str, prefix: str, paths: list[str], message: str, state_dir: str,
           lock_fd: int = -1) -> str:
    """Stage exactly `paths` (all under `prefix`) and commit only them.

    Other staged or modified files of the checkout are left exactly as they were.

    Before `git commit` a ticket names every staged path and its blob id so
    that the pre-commit guard recognises the distiller's own commit; the
    ticket is removed afterwards, also on failure. Returns the new commit id.
    """
    fds = (lock_fd,) if lock_fd >= 0 else ()
    # A path git never knew and that is gone now (a file an earlier --no-commit run
    # wrote and this one removed) would make `git add` and `git commit` fail.
    wanted = set(paths)
    known = index_blobs(root, prefix, wanted)
    head = head_blobs(root, prefix, wanted)
    add = [p for p in paths if p in known or os.path.lexists(os.path.join(root, p))]
    if add:
        gitfacts.run(["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"],
                     root, clean=True, stdin=_pathspecs(add), pass_fds=fds)
    staged = index_blobs(root, prefix, wanted)
    # A deletion an earlier (killed) distill already staged is in HEAD only: commit it too.
    paths = [p for p in paths if p in staged or p in head]
    if not paths:
        return ""
    spec = _pathspecs(paths)
    write_ticket(state_dir, {p: staged.get(p, ZERO) for p in paths})
    try:
        res = gitfacts.run(
            ["commit", "--quiet", "--no-status", "-F", message_file(state_dir, message),
             "--only", "--pathspec-from-file=-", "--pathspec-file-nul"],
            root, clean=True, stdin=spec, check=False, pass_fds=fds,
        )
    finally:
        clear_ticket(state_dir)
    if not res.ok and b"nothing to commit" in res.stdout + res.stderr:
        return ""  # the files already equal HEAD (e.g. a --no-commit run was undone)
    if not res.ok:
        err = (res.stderr + res.stdout).decode("utf-8", "replace").strip()
        raise GitError(f"git commit of the distilled memory failed in {root}:\n{err}",
                       hint="the files are written; fix the cause and run `jmem distill` again")
    return gitfacts.run(["rev-parse", "HEAD"], root, clean=True).text().strip()


def message_file(state_dir: str, message: str) -> str:
    """Write the commit message to a file in the state dir (it may be long); return its path."""
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, "distill-message.txt")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(message)
    return path
