"""What git says about the memory root of the main checkout, and the distiller's commit.

Every call goes through `gitfacts.run(..., clean=True)`: the distiller may run
from a post-commit hook of a linked worktree, whose inherited GIT_* variables
would otherwise point git at that worktree's index (docs/DESIGN.md, "Every git call in one place").
"""

from __future__ import annotations

import bisect
import os
import stat
from collections.abc import Container

from journal_mem import fsutil, hashes
from journal_mem.errors import GitError
from journal_mem.gitops import gitcore, indexlock, logcache

TYPE_CHECKING = False  # `subprocess` (~4 ms of a start) is imported by what starts git
if TYPE_CHECKING:
    import subprocess

ZERO = "0" * 40
# For the git commands that write the private indexes: each is one whole file. A split
# index (`core.splitIndex`) would put its shared part in the git dir, whose change the
# publishing step takes for a git command of the user's, and refuse every attempt.
WHOLE = ("-c", "core.splitIndex=false")
# For the git commands that write the distill commit's large objects (`hash-object`,
# `write-tree`): zlib's fastest level, git's own default for loose objects, whatever the
# repository's `core.compression` says. At 100k lessons a distill writes ~10 MB loose (the
# 8 MB distill state, a tree of ~5k entries per journal folder touched): zlib's default
# level took ~2.6x as long (hash-object of the state: 580 ms, not 220) for ~15% fewer
# bytes, which `git gc` packs again at its own level anyway.
LOOSE = ("-c", "core.looseCompression=1")
# `write-tree` of the private index: it holds only objects known to be in the store (the
# blobs `hash-object -w` wrote this distill, the rest read from a committed tree), so git's
# lookup of each entry of every folder touched is skipped (at 10k lessons 57 -> 24 ms).
KNOWN = ("--missing-ok",)
Blobs = dict[str, tuple[str, str] | None]  # {path: (mode, blob id), or None: remove it}
_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase (or git am)"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)


def blob_id(data: bytes) -> str:
    """The id git gives a blob holding `data` (SHA-1 object format)."""
    return hashes.sha1_bulk(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def in_progress(git_dir: str) -> str | None:
    """What operation the checkout whose git dir is `git_dir` is in the middle of, if any."""
    for name, what in _IN_PROGRESS:
        if os.path.exists(os.path.join(git_dir, name)):
            return what
    return None


def status(root: str, prefix: str) -> list[tuple[str, str]]:
    """(XY, repo-relative path) of every change under `prefix` (untracked files included)."""
    with Status(root, prefix) as running:
        return running.result()


class Status:
    """`status(root, prefix)`, started at once and read when asked (`result`): a distill
    loads its entry cache while git lists the memory root (at 100k lessons ~300 ms of
    `git status`). Leaving the `with` ends a git process never read."""

    def __init__(self, root: str, prefix: str) -> None:
        self.root = root
        self.args = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                     "--ignored=no", "--", prefix]
        self.proc = gitcore.start(self.args, root, gitcore.run_env(clean=True))

    def result(self) -> list[tuple[str, str]]:
        out, err = self.proc.communicate()
        if self.proc.returncode:
            raise GitError(f"git {' '.join(self.args)} failed in {self.root}: "
                           f"{err.decode('utf-8', 'replace').strip()}")
        return [(item[:2].decode(), item[3:].decode("utf-8", "surrogateescape"))
                for item in out.split(b"\0") if len(item) > 3]

    def __enter__(self) -> Status:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            self.proc.communicate()


def tree_files(root: str, rev: str, under: str) -> set[str]:
    """Every file path under folder `under` in `rev`'s tree (none when `rev` is unborn):
    names only, split in C (100k journal paths: ~20 ms; parsed a line at a time with
    their blob ids, ~6x more)."""
    res = gitcore.run(["ls-tree", "-r", "-z", "--name-only", rev, "--", under], root,
                      clean=True, check=False)
    if not res.ok:
        return set()
    names = set(res.stdout.decode("utf-8", "surrogateescape").split("\0"))
    names.discard("")
    return names


def tree_has(root: str, rev: str, paths: list[str]) -> set[str]:
    """Which of the file `paths` `rev`'s tree holds (none when `rev` is unborn)."""
    res = gitcore.run(["--literal-pathspecs", "ls-tree", "-z", "--name-only", rev, "--",
                       *paths], root, clean=True, check=False)
    if not res.ok:
        return set()
    names = set(res.stdout.decode("utf-8", "surrogateescape").split("\0"))
    names.discard("")
    return names


def tree_paths(root: str, rev: str) -> frozenset[str]:
    """Every file path in `rev`'s tree and every folder above one ({} when `rev` is unborn)."""
    res = gitcore.run(["ls-tree", "-r", "-z", "--name-only", rev], root, clean=True, check=False)
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
    res = gitcore.run(["log", "-1", "--format=%H", "--", path], root, clean=True, check=False)
    sha = res.text().strip()
    return sha or None


def commit(root: str, prefix: str, paths: list[str], message: str, state_dir: str,
           branch: str = "", git_dir: str = "") -> str:
    """Commit exactly `paths` (all under `prefix`) as they are on disk now; return the
    new commit id ("" when HEAD already holds them).

    Plumbing only, so that no git command of the user fails because a distill runs
    (docs/DESIGN.md, "Distill commits"): the tree is built in a private index on the
    current HEAD and made a commit with `commit-tree`; then, holding the main
    checkout's `index.lock` as git does, the branch moves with a compare-and-swap
    `update-ref` and the index takes the new blobs of `paths`, every other entry
    (the user's staged work) as it was. When HEAD moved meanwhile the tree is built
    again on the new tip; `MemoryMoved` when the new tip changed memory itself.
    No hook runs for this commit.

    `branch` (default: the one checked out now) is the only ref that moves:
    `refs/heads/BRANCH`, by compare-and-swap, never whatever HEAD names by
    then. A `git checkout -b feat` while the distill ran would otherwise take
    the distill commit to `feat`; it is `BranchSwitched` instead (checked
    again under `index.lock`), nothing committed, the files left for the
    next distill on BRANCH.

    `git_dir`: the main checkout's git dir (its common dir) when the caller knows it:
    then no git runs to find it, and its HEAD and branch are read from its files where
    they can tell.
    """

    git_dir = recover(root, state_dir, git_dir)
    ref = f"refs/heads/{branch or gitcore.current_branch(root, git_dir)}"
    if ref == "refs/heads/":
        raise BranchSwitched(f"{root}: HEAD is detached: the distilled memory is not committed")
    blobs, hashed = _hash(root, paths)
    msg = message_file(state_dir, message)
    first = base = _tip(root, ref, git_dir)
    with _EarlyIndex(root, state_dir, git_dir, blobs, hashed) as early:
        for _ in range(ATTEMPTS):
            if base != first and _memory_changed(root, prefix, first, base, blobs):
                raise MemoryMoved(f"{root}: the branch moved on with changes to memory "
                                  "while the distill ran")
            tree, was = _tree(root, state_dir, prefix, base, blobs)
            if base and tree == was:
                return ""  # the files already equal HEAD
            args = ["commit-tree", tree, *(["-p", base] if base else []), "-F", msg]
            new = gitcore.run(args, root, clean=True).text().strip()
            if _publish(root, prefix, git_dir, state_dir, ref, base, new, blobs, hashed,
                        message, early):
                if base:
                    _made(state_dir, prefix, paths, base, new, blobs)
                return new
            base = _tip(root, ref, git_dir)
    raise GitError(f"the branch of {root} moved on during each of {ATTEMPTS} attempts to "
                   "commit the distilled memory", hint="the files are written; run "
                   "`jmem distill` again when the checkout is quieter")


ATTEMPTS = 20


def _made(state_dir: str, prefix: str, paths: list[str], base: str, new: str,
          blobs: Blobs) -> None:
    """Keep what commit `new` (on `base`) is known to change, so the next distill does not
    ask git: paths under `prefix` alone, so every path outside it is in `new`'s tree as in
    `base`'s (`refs_same`); and when it removes no file, no rename (`renamed_in`: git's
    rename detection pairs a removed path with an added one)."""
    if all(p.startswith(prefix + "/") for p in paths):
        try:
            fsutil.replace_atomic(_outside_path(state_dir), f"{base} {new}\n")
        except OSError:
            pass  # only slower next time
    if all(blobs.values()):
        logcache.advance(state_dir, RENAMES, "", base, new)


def _outside_path(state_dir: str) -> str:
    return os.path.join(state_dir, "cache", "same-outside.txt")


def _same_outside(state_dir: str, old: str, new: str) -> bool:
    """Whether a distill made commit `new` on `old`, changing only the memory root."""
    try:
        with open(_outside_path(state_dir), encoding="ascii") as fh:
            return fh.read() == f"{old} {new}\n"
    except (OSError, ValueError):
        return False


def recover(root: str, state_dir: str, git_dir: str = "") -> str:
    """Finish or undo what a distill killed while holding `index.lock` left (call it
    holding the distill lock, before judging the checkout); returns the git dir.
    `git_dir`: the main checkout's (its common dir), when known: HEAD is then read from
    its files where they can tell (`gitcore.head_from_files`)."""

    if not git_dir:
        git_dir = gitcore.run(["rev-parse", "--absolute-git-dir"], root,
                              clean=True).text().strip()
    indexlock.recover(git_dir, state_dir, _head(root, git_dir) or "")
    return git_dir


class MemoryMoved(GitError):
    """The branch moved on with changes under the memory root: distill again on it."""


class BranchSwitched(GitError):
    """The main checkout is no longer on the branch the distill commits to."""


def _tip(root: str, ref: str, git_dir: str) -> str | None:
    """The commit branch `ref` holds (None: no such branch), from the ref files of
    `git_dir` (the main checkout's) where they can tell. Only a guess to build on: the
    branch moves by compare-and-swap (`RefUpdate`)."""
    known = gitcore.ref_from_files(git_dir, ref)
    if known is not None:
        return known or None
    res = gitcore.run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root,
                       clean=True, check=False)
    return (res.text().strip() or None) if res.ok else None


def _on(root: str, ref: str, git_dir: str = "") -> None:
    """Raise `BranchSwitched` unless HEAD names `ref` (the index and work tree are its).

    With `git_dir`, HEAD is read from its file when the ref store keeps it there
    (no git spawned: this runs under `index.lock`)."""
    now = gitcore.symbolic_head(git_dir) if git_dir else None
    if now is None:
        res = gitcore.run(["symbolic-ref", "--quiet", "HEAD"], root, clean=True, check=False)
        now = res.text().strip() if res.ok else ""
    if now != ref:
        raise BranchSwitched(
            f"{root}: the main checkout switched from {ref.removeprefix('refs/heads/')!r} to "
            f"{now.removeprefix('refs/heads/') or 'a detached HEAD'!r} while the distill ran: "
            "nothing committed",
            hint=f"the distilled files and new lessons are in the work tree; run `jmem "
                 f"distill` again once the checkout is back on "
                 f"{ref.removeprefix('refs/heads/')}")


def _head(root: str, git_dir: str = "") -> str | None:
    known = gitcore.head_from_files(git_dir) if git_dir else None
    if known is not None:
        return known or None
    res = gitcore.run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], root, clean=True,
                       check=False)
    return (res.text().strip() or None) if res.ok else None


Stat = tuple[int, int, int, int, int]  # a file's (mtime, ctime in ns, size, inode, device)


def _stat(path: str) -> Stat | None:
    """A plain file's `Stat` (None: not one, or gone)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev


def _hash(root: str, paths: list[str]) -> tuple[Blobs, dict[str, Stat]]:
    """({path: (mode, blob id) written to the object store, or None when it is gone},
    {path: its `Stat` taken before git read it}, for the plain files).

    `hash-object --stdin-paths` applies the clean filters and line-ending rules
    `git add` would.
    """
    there = [p for p in paths if os.path.isfile(os.path.join(root, p))]
    out: Blobs = dict.fromkeys(paths)
    hashed: dict[str, Stat] = {}
    for path in there:
        seen = _stat(os.path.join(root, path))
        if seen is not None:
            hashed[path] = seen
    # the largest file (the distill state: ~1 MB at 10k lessons, 8 MB at 100k) is hashed
    # by a git of its own meanwhile: at 10k ~20 ms beside ~15 for the other ~50 files
    big = max(hashed, key=lambda p: hashed[p][2], default="")
    alone = big if big and len(there) > 1 and hashed[big][2] >= ALONE_BYTES else ""
    rest = [p for p in there if p != alone]
    with _Hashing(root, alone) as hashing:
        if rest:
            res = gitcore.run([*LOOSE, "hash-object", "-w", "--stdin-paths"], root,
                              clean=True, stdin="".join(f"{p}\n" for p in rest).encode())
            blobs = dict(zip(rest, res.text().split(), strict=True))
        else:
            blobs = {}
        if alone:
            blobs[alone] = hashing.blob()
    for path in there:
        mode = os.stat(os.path.join(root, path)).st_mode
        out[path] = ("100755" if mode & 0o100 else "100644", blobs[path])
    return out, hashed


ALONE_BYTES = 256 * 1024  # a file this large is hashed by a git process of its own


class _Hashing:
    """`git hash-object -w -- PATH` started at once (nothing for no `path`), read by
    `blob`; leaving the `with` ends a git process never read."""

    def __init__(self, root: str, path: str) -> None:
        self.root, self.path = root, path
        self.args = [*LOOSE, "hash-object", "-w", "--", path]
        self.proc = (gitcore.start(self.args, root, gitcore.run_env(clean=True)) if path
                     else None)

    def blob(self) -> str:
        assert self.proc is not None
        out, err = self.proc.communicate()
        if self.proc.returncode:
            raise GitError(f"git {' '.join(self.args)} failed in {self.root}: "
                           f"{err.decode('utf-8', 'replace').strip()}")
        return out.decode().strip()

    def __enter__(self) -> _Hashing:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            self.proc.communicate()


def store(root: str, paths: list[str]) -> None:
    """Write the files at `paths` (repository-relative) to the object store, committing
    nothing: a `--no-commit` distill's output stays readable by blob id, so a later hand
    edit of it is diffed against what the distiller wrote."""
    _hash(root, paths)


def _index_info(blobs: Blobs, current: dict[str, str] | None) -> bytes:
    """`update-index --index-info` lines setting `blobs` (mode 0 removes a path); paths
    whose entry in `current` already holds that blob are left alone (their stat data
    stays). `current` None: every path is set or removed (a private index that only
    `write-tree` reads: removing a path it lacks changes nothing)."""
    lines = []
    for path, value in sorted(blobs.items()):
        if value is None:
            if current is None or path in current:
                lines.append(f"0 {ZERO}\t{path}\0")
        elif current is None or current.get(path) != value[1]:
            lines.append(f"{value[0]} {value[1]}\t{path}\0")
    return "".join(lines).encode("utf-8", "surrogateescape")


def _tree(root: str, state_dir: str, prefix: str, base: str | None,
          blobs: Blobs) -> tuple[str, str]:
    """(the tree of `base` with `blobs` applied, `base`'s own tree; the empty tree for no
    `base`). Every path of `blobs` is under `prefix`, the memory root.

    Only the memory root's folder is built in a private index, which holds nothing
    else: the rest of `base`'s tree (a monorepo's code) is never read into it. The index
    is kept for the next distill, and read again from `base` only when it no longer
    holds `base`'s folder (`_KeptIndex`): one distill after another, with only code
    committed between them, updates it in place. The new folder is then put in `base`'s tree,
    one `mktree` per folder above it."""
    outside = [path for path in blobs if not path.startswith(prefix + "/")]
    if outside:
        raise GitError(f"not under the memory root {prefix}: {', '.join(sorted(outside))}")
    along = _Along(root, base, prefix)
    index = os.path.join(state_dir, "distill-index")
    # version 4 (each path stored as its difference from the one before): at 100k lessons
    # the index is 11 MB, not 16, and each of the two commands reading and writing it
    # takes ~15 ms less. Only an index made here takes it (`read-tree`).
    env = gitcore.clean_env({"GIT_INDEX_FILE": index, "GIT_INDEX_VERSION": "4"})
    held = _KeptIndex(state_dir, prefix)
    reuse = held.holds(along.folder)
    held.forget()  # until it holds a folder written whole again
    if not reuse:
        try:
            os.unlink(index)
        except FileNotFoundError:
            pass
        if along.folder:
            gitcore.run([*WHOLE, "read-tree", f"--prefix={prefix}/", along.folder], root, env=env)
    # no listing of what it holds (100k journal paths at 100k lessons): nothing reads
    # this index's stat data, so every path is simply set or removed
    info = _index_info(blobs, None)
    if info:
        gitcore.run([*WHOLE, "update-index", "-z", "--index-info"], root, env=env, stdin=info)
    folder = _folder(root, env, prefix) if os.path.exists(index) else ""
    held.keep(folder)
    return along.splice(folder), along.tree


def _folder(root: str, env: dict[str, str], prefix: str) -> str:
    """The tree id of the memory root's folder in the private index ("" when it holds
    nothing): `write-tree --prefix` fails on a prefix with no entry, and only then is the
    whole index written as a tree, which is empty when it holds nothing."""
    res = gitcore.run([*WHOLE, *LOOSE, "write-tree", *KNOWN, f"--prefix={prefix}/"], root,
                      env=env, check=False)
    if res.ok:
        return res.text().strip()
    whole = gitcore.run([*WHOLE, *LOOSE, "write-tree", *KNOWN], root, env=env).text().strip()
    if whole == gitcore.EMPTY_TREE:
        return ""
    raise GitError(f"git write-tree --prefix={prefix}/ failed in {root}: "
                   f"{res.stderr.decode('utf-8', 'replace').strip()}")


class _KeptIndex:
    """Which folder the private index holds, as recorded after its last `write-tree`
    (`distill-index.holds`: the memory root, its tree id, and the index file's size,
    mtime and inode then); trusted only while all three still say so."""

    def __init__(self, state_dir: str, prefix: str) -> None:
        self.index = os.path.join(state_dir, "distill-index")
        self.path = self.index + ".holds"
        self.prefix = prefix

    def _stamp(self) -> str:
        try:
            st = os.stat(self.index)
        except FileNotFoundError:
            return "-"
        return f"{st.st_size} {st.st_mtime_ns} {st.st_ino}"

    def holds(self, folder: str) -> bool:
        """Whether the index holds exactly the tree `folder` ("": nothing) at the root."""
        try:
            with open(self.path, encoding="utf-8", errors="surrogateescape") as fh:
                recorded = fh.read()
        except (FileNotFoundError, NotADirectoryError):
            return False
        return recorded == self._record(folder)

    def _record(self, folder: str) -> str:
        return f"{self.prefix}\0{folder}\0{self._stamp()}\n"

    def keep(self, folder: str) -> None:
        """Record that the index now holds `folder`."""
        fsutil.replace_atomic(self.path, self._record(folder).encode("utf-8", "surrogateescape"))

    def forget(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class _Along:
    """`base`'s tree and the folders above `prefix` in it, read in one `cat-file
    --batch`: enough to put a new tree at `prefix` (`splice`)."""

    def __init__(self, root: str, base: str | None, prefix: str) -> None:
        self.root = root
        self.names = prefix.split("/")  # the folders from the top down to the memory root
        # the listing of each folder above the memory root, the top first (None: absent,
        # or no folder); entries as (mode, name, id)
        self.listings: list[Listing | None] = [None] * len(self.names)
        self.tree = gitcore.EMPTY_TREE
        self.folder = ""  # the memory root's tree id in `base` ("": none there)
        if not base:
            return
        asks = [f"{base}^{{tree}}"] + [f"{base}:{'/'.join(self.names[:i])}"
                                        for i in range(1, len(self.names))]
        got = _cat_trees(root, asks)
        self.tree = got[0][0] if got[0] else gitcore.EMPTY_TREE
        for level, found in enumerate(got):
            if found is None:
                break  # not a folder: nothing below it either
            self.listings[level] = found[1]
        below = self.listings[-1]
        wanted = self.names[-1].encode("utf-8", "surrogateescape")
        for mode, name, oid in below or ():
            if name == wanted and mode == b"40000":
                self.folder = oid

    def splice(self, folder: str) -> str:
        """The tree of `base` with `folder` ("": none) at the memory root, every other
        entry as `base` has it."""
        if folder == self.folder:
            return self.tree
        child = folder
        for level in range(len(self.names) - 1, -1, -1):
            name = self.names[level].encode("utf-8", "surrogateescape")
            entries = [e for e in self.listings[level] or () if e[1] != name]
            if child:
                entries.append((b"40000", name, child))
            if not entries and level:
                child = ""  # git keeps no empty folder: its parent loses it too
                continue
            child = _mktree(self.root, entries)
        return child


Listing = list[tuple[bytes, bytes, str]]  # a tree's entries: (mode, name, id)


def _cat_trees(root: str, asks: list[str]) -> list[tuple[str, Listing] | None]:
    """For each object name in `asks`: (its id, its entries as (mode, name, id)) when it
    is a tree, else None (missing, or a file)."""
    res = gitcore.run(["cat-file", "--batch"], root, clean=True,
                       stdin="".join(f"{a}\n" for a in asks).encode("utf-8", "surrogateescape"))
    out: list[tuple[str, Listing] | None] = []
    data, at = res.stdout, 0
    for _ in asks:
        end = data.index(b"\n", at)
        head = data[at:end].split()
        at = end + 1
        if len(head) != 3:  # "<name> missing" (or ambiguous)
            out.append(None)
            continue
        oid, kind, size = head[0].decode(), head[1], int(head[2])
        body = data[at:at + size]
        at += size + 1
        out.append((oid, _tree_entries(body, len(oid) // 2)) if kind == b"tree" else None)
    return out


def _tree_entries(body: bytes, width: int) -> Listing:
    """A raw tree object's entries: `<mode> <name>\\0<id, width bytes>` each."""
    out = []
    at = 0
    while at < len(body):
        space = body.index(b" ", at)
        nul = body.index(b"\0", space)
        out.append((body[at:space], body[space + 1:nul], body[nul + 1:nul + 1 + width].hex()))
        at = nul + 1 + width
    return out


_KIND = {b"40000": b"tree", b"160000": b"commit"}  # every other mode is a blob's


def _mktree(root: str, entries: Listing) -> str:
    """The id of a tree holding `entries` (git sorts them)."""
    stdin = b"".join(mode + b" " + _KIND.get(mode, b"blob") + b" " + oid.encode() + b"\t" + name
                     + b"\0" for mode, name, oid in entries)
    return gitcore.run(["mktree", "-z"], root, clean=True, stdin=stdin).text().strip()


def _new_index(root: str, state_dir: str, source: bytes, blobs: Blobs,
               hashed: dict[str, Stat]) -> bytes:
    """The main checkout's index `source` with `blobs` applied (computed on a copy).

    The plain files of `hashed` whose stat is still the one taken before they were
    hashed for the commit go to `update-index` by path: git hashes each again and
    records its stat data. Each is first removed (`--force-remove`) in the same command,
    so that its old entry is never taken for up to date: it would be, with the old blob,
    were the file rewritten in place within its mtime's tick with its size. Paths gone
    from the commit are removed there too: one `update-index`, one read and one write of
    an index of 100k journal paths (~90 ms at 100k lessons). Every other path is set to
    its committed blob first (`--index-info`, no stat data), and so is one whose stat
    moved meanwhile: git shows its change as not staged. Paths too long together for a
    command line are set by `--index-info` first instead, which leaves no stat data to
    match a file's, then go by path in a second `update-index`. Refreshing the stat data
    with `git add --refresh PATHS` instead matched every index entry against every path:
    200 ms for 80 paths at 100k lessons."""
    path = os.path.join(state_dir, "distill-main-index")
    if source:
        with open(path, "wb") as fh:
            fh.write(source)
    else:  # a repository with no index yet: git reads a missing file as empty, not a 0-byte one
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    env = gitcore.clean_env({"GIT_INDEX_FILE": path})
    by_path = sorted(p for p, seen in hashed.items() if blobs.get(p) is not None
                     and seen == _stat(os.path.join(root, p)))
    forced = [*sorted(p for p, value in blobs.items() if value is None), *by_path]
    if (sum(len(p.encode("utf-8", "surrogateescape")) + 1 for p in forced) > MAX_ARGS_BYTES
            or any(p.startswith("-") for p in forced)):
        forced = []
    # The paths written (few), set as the tree has them; no listing of the index (100k
    # journal paths at 100k lessons). With no index yet, nothing is there to remove.
    skip = set(forced)
    info = _index_info({p: v for p, v in blobs.items() if p not in skip},
                       None if source else {})
    if info:
        gitcore.run([*WHOLE, "update-index", "-z", "--index-info"], root, env=env, stdin=info)
    if forced or by_path:
        # each is committed with the mode its file's executable bit says (`_hash`): so is
        # its entry, whatever mode it had and core.fileMode says; `--replace`: a file where
        # a folder of a path goes leaves, as in the commit. Each option applies to the
        # paths after it; `--stdin`'s come last.
        removal = ["--force-remove", *forced, "--no-force-remove"] if forced else []
        gitcore.run([*WHOLE, "-c", "core.fileMode=true", "update-index", *removal, "--add",
                     "--remove", "--replace", "-z", "--stdin"], root, env=env,
                    stdin="".join(f"{p}\0" for p in by_path).encode("utf-8", "surrogateescape"))
        moved = {p: blobs[p] for p in by_path if hashed[p] != _stat(os.path.join(root, p))}
        if moved:
            gitcore.run([*WHOLE, "update-index", "-z", "--index-info"], root, env=env,
                        stdin=_index_info(moved, None))
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:  # nothing to apply to no index: still none
        return b""


# Paths given to `update-index` on its command line at most (bytes): half of Windows'
# 32,767 characters for a whole command line, the smallest limit of the three systems
# (a distill of 20 lessons writes ~50 memory files; a full one at 100k, ~2.5k).
MAX_ARGS_BYTES = 16_000


def _read_index(git_dir: str) -> bytes:
    try:
        with open(os.path.join(git_dir, "index"), "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return b""


def _index_digest(data: bytes) -> bytes:
    """What tells an index's bytes from any other's, without keeping them (at 100k
    lessons the index is ~16 MB: `_publish` held it twice more beside the new one, the
    peak of a full distill)."""
    return hashes.sha1_bulk(data, usedforsecurity=False).digest()


class _EarlyIndex:
    """The main checkout's new index (`_new_index`), computed in a thread while the tree
    is built and made a commit, from the index as it is now: its `update-index` reads and
    writes the whole index (at 10k lessons ~30 ms, at 100k ~150), as long as building
    the tree. `_publish` takes it only when the index it finds is still the one it was
    computed from (`take`), else computes it again there."""

    def __init__(self, root: str, state_dir: str, git_dir: str, blobs: Blobs,
                 hashed: dict[str, Stat]) -> None:
        self.read = b""  # the digest of the index it was computed from
        self.index: bytes | None = None
        import threading  # a distill's commit only: `write` reads this module too

        self._thread = threading.Thread(target=self._compute,
                                        args=(root, state_dir, git_dir, blobs, hashed))

    def _compute(self, root: str, state_dir: str, git_dir: str, blobs: Blobs,
                 hashed: dict[str, Stat]) -> None:
        try:
            source = _read_index(git_dir)
            self.read = _index_digest(source)
            self.index = _new_index(root, state_dir, source, blobs, hashed)
        except (OSError, GitError):
            self.index = None  # computed again by `_publish`, which says what failed

    def take(self, read: bytes) -> bytes | None:
        """The new index, when it was computed from the index whose digest is `read`."""
        self._thread.join()
        return self.index if self.index is not None and self.read == read else None

    def __enter__(self) -> _EarlyIndex:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join()  # it writes the state dir's copy of the index: never left running


def _publish(root: str, prefix: str, git_dir: str, state_dir: str, ref: str, base: str | None,
             new: str, blobs: Blobs, hashed: dict[str, Stat], message: str,
             early: _EarlyIndex | None = None) -> bool:
    """Move `ref` from `base` to `new` and update the index, together, under
    `index.lock`; False when the branch had moved (nothing changed then);
    `BranchSwitched` when HEAD no longer names `ref`. `early`: the new index computed
    meanwhile, taken when the index is still the one it was computed from.

    Every git command of the checkout fails while we hold `index.lock` (git never
    waits for it), so nothing is spawned inside: the new index is computed before,
    HEAD is read from its file, and the ref moves through an `update-ref --stdin`
    started before the lock (a pipe round trip, about a millisecond)."""

    seen = indexlock.wait_quiet(git_dir, state_dir)
    folder = indexlock.folder_stamp(git_dir)
    _on(root, ref, git_dir)
    if _tip(root, ref, git_dir) != base:
        return False
    source = _read_index(git_dir)
    read = _index_digest(source)
    index = early.take(read) if early is not None else None
    if index is None:
        index = _new_index(root, state_dir, source, blobs, hashed)
    del source
    subject = message.split("\n", 1)[0]
    with RefUpdate(root, f"commit: {subject}") as update:
        # A `git commit` reads HEAD as it starts, takes index.lock for a moment, and
        # marks itself busy only in its pre-commit hook: a lock made and removed in the
        # git dir since the checkout was quiet, or one we had to wait for, may be that
        # commit, which would then fail on moving HEAD. Wait for quiet again.
        if indexlock.folder_stamp(git_dir) != folder:
            return False
        with indexlock.IndexLock(git_dir, state_dir) as lock:
            if lock.waited or indexlock.changed_since(git_dir, state_dir, seen) \
                    or _index_digest(_read_index(git_dir)) != read:
                return False  # a git command ran meanwhile: wait for quiet again
            _on(root, ref, git_dir)  # a checkout takes index.lock: HEAD cannot move now
            lock.mark(base or "", new)
            lock.write(index)
            if not update.move(ref, new, base or ZERO):
                return False
            lock.commit()
    return True


class RefUpdate:
    """`git update-ref --stdin`, started ahead: `move` is one compare-and-swap
    transaction written to its pipe (start, update, prepare, commit)."""

    def __init__(self, root: str, message: str) -> None:
        self.root = root
        self.message = message

    def __enter__(self) -> RefUpdate:
        env = gitcore.git_env(gitcore.clean_env())
        env.setdefault("LC_ALL", "C")
        self.proc = gitcore.start(["update-ref", "--stdin", "-m", self.message], self.root,
                                  env, stdin="pipe")
        if not self._say("start\n", 1):  # git is up and reading: the rest is a round trip
            raise GitError(f"git update-ref --stdin did not start in {self.root}: "
                           f"{self._end()}")
        return self

    def move(self, ref: str, new: str, old: str) -> bool:
        """Move `ref` to `new` if it still holds `old`; False (nothing moved) otherwise."""
        return self._say(f"update {ref} {new} {old}\nprepare\ncommit\n", 2)

    def _say(self, commands: str, replies: int) -> bool:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(commands.encode())
            self.proc.stdin.flush()
            return all(self.proc.stdout.readline().endswith(b": ok\n") for _ in range(replies))
        except BrokenPipeError:
            return False

    def _end(self) -> str:
        """Close git's input (an open transaction is aborted: nothing moves), wait for
        it, and return what it wrote to stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        err = self.proc.stderr.read().decode("utf-8", "replace").strip()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        self.proc.wait()
        return err

    def __exit__(self, *exc: object) -> None:
        self._end()


def _memory_changed(root: str, prefix: str, old: str | None, new: str | None,
                    blobs: Blobs) -> bool:
    """True when `old..new` changed a path under `prefix` other than to what we commit."""
    if not new:
        return False
    res = gitcore.run(["diff", "--raw", "-z", "--no-renames", "--no-abbrev",
                        old or gitcore.EMPTY_TREE, new, "--", prefix], root, clean=True)
    fields = res.stdout.split(b"\0")
    for meta, raw in zip(fields[0::2], fields[1::2], strict=False):
        if not meta:
            continue
        path = raw.decode("utf-8", "surrogateescape")
        blob = meta.split()[3].decode()
        if path not in blobs:
            return True
        want = blobs[path]
        if (want[1] if want else ZERO) != blob:
            return True
    return False


def refs_same(root: str, old: str, new: str, prefix: str, paths: set[str],
              state_dir: str | None = None) -> bool:
    """Whether every path of `paths` resolves in commit `new` as `RefChecker` found it in
    commit `old`: `new` descends from `old`, nothing outside the folder `prefix` differs
    between their trees, no commit between them but a merge changed a path outside
    `prefix` (a merge renames nothing: `renamed_in` reads no merge's diff), and no path
    lies in `prefix`, above it or is spelled otherwise (`./`, `..`). Three git calls,
    where asking the tree for each path cost ~75 ms at 10k lessons; none when `new` is
    the commit a distill made on `old` (kept in `state_dir`: `commit`)."""
    if old == new:
        return True
    inside = prefix + "/"
    for path in paths:
        path = path.strip("/")
        if (not path or path == prefix or path.startswith(inside) or inside.startswith(path + "/")
                or any(p in ("", ".", "..") for p in path.split("/")) or "\n" in path):
            return False
    if state_dir is not None and _same_outside(state_dir, old, new):
        return True
    outside = ["--", ".", f":(exclude,literal){prefix}"]
    return (gitcore.run(["merge-base", "--is-ancestor", old, new], root, clean=True,
                        check=False).ok
            and gitcore.run(["diff", "--quiet", "--no-renames", old, new, *outside], root,
                            clean=True, check=False).returncode == 0
            and (log := gitcore.run(["log", "--no-merges", "--format=%H", f"{old}..{new}",
                                     *outside], root, clean=True, check=False)).ok
            and not log.stdout.strip())


def message_file(state_dir: str, message: str) -> str:
    """Write the commit message to a file in the state dir (it may be long); return its path."""
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, "distill-message.txt")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(message)
    return path


class InTree:
    """Which paths `rev`'s tree holds (a file, a link, a submodule, or a folder above
    one), as `tree_paths` says, asked of git one path at a time through one `git
    cat-file --batch-check`, each answer kept. A distill asks about the few paths its
    facts cite: listing a 100k-file tree for them cost ~230 ms. git answers a submodule
    whose commit it lacks as it answers an absent path, so an absent path's folder is
    listed (`FOLDERS` of them at most). Past `MANY` paths, or for a path that name syntax
    would read otherwise (`./`, `..`, a newline), the whole tree is listed once instead.
    `close()` ends the git process."""

    MANY = 2000
    FOLDERS = 20  # folders listed to tell an absent path from a submodule git lacks

    def __init__(self, root: str, rev: str) -> None:
        self.root, self.rev = root, rev
        self.known: dict[str, bool] = {}
        self.folders: dict[str, frozenset[str]] = {}  # folder -> the names in it
        self.whole: frozenset[str] | None = None
        self.tree: str | None = None  # `rev`'s tree id ("": it has none)
        self.proc: subprocess.Popen[bytes] | None = None

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        got = self.known.get(path)
        if got is None:
            got = self.known[path] = self._ask(path)
        return got

    def _ask(self, path: str) -> bool:
        if self.whole is None and (len(self.known) >= self.MANY or "\n" in path
                                   or any(p in ("", ".", "..") for p in path.split("/"))):
            self.close()
            self.whole = tree_paths(self.root, self.rev)
        if self.whole is not None:
            return path in self.whole
        if self.tree is None:
            res = gitcore.run(["rev-parse", "--verify", "--quiet", f"{self.rev}^{{tree}}"],
                              self.root, clean=True, check=False)
            self.tree = res.text().strip() if res.ok else ""
        if not self.tree:
            return False
        if self.proc is None:
            self.proc = gitcore.start(["cat-file", "--batch-check"], self.root,
                                      gitcore.run_env(clean=True), stdin="pipe",
                                      stderr=False)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        name = f"{self.tree}:{path}".encode("utf-8", "surrogateescape")
        try:
            self.proc.stdin.write(name + b"\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError as exc:
            raise GitError(f"git cat-file --batch-check failed in {self.root}: {exc}") from exc
        if not line.endswith(b"\n"):
            raise GitError(f"git cat-file --batch-check ended early in {self.root}")
        if line != name + b" missing\n":
            return True  # its object's id, type and size
        # Absent, or a submodule whose commit this repository lacks: its folder says.
        folder, _, base = path.rpartition("/")
        if folder and folder not in self:
            return False
        if folder not in self.folders:
            if len(self.folders) >= self.FOLDERS:
                self.close()
                self.whole = tree_paths(self.root, self.rev)
                return path in self.whole
            got = _cat_trees(self.root, [f"{self.tree}:{folder}" if folder else self.tree])[0]
            self.folders[folder] = frozenset(
                name.decode("utf-8", "surrogateescape") for _, name, _ in got[1]
            ) if got else frozenset()
        return base in self.folders[folder]

    def close(self) -> None:
        """End the git process (asking again starts another)."""
        proc, self.proc = self.proc, None
        if proc is not None:
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.close()
            except OSError:
                pass
            proc.wait()
            proc.stdout.close()


class RefChecker:
    """`ref_exists(path)` against `rev`'s tree (`InTree`). A path that is gone but was
    renamed (`git mv`, git's rename detection) exists under its new name: a fact citing a
    file that moved is not stale. `close()` ends its git process."""

    def __init__(self, root: str, rev: str, state_dir: str | None = None) -> None:
        self.root, self.rev, self.state_dir = root, rev, state_dir
        self.tree = InTree(root, rev)
        self.renames: dict[str, str] | None = None

    def __call__(self, path: str) -> bool:
        path = path.strip("/")
        if path in self.tree:
            return True
        if self.renames is None:
            self.renames = renamed_in(self.root, self.rev, self.state_dir)
        return moved_to(path, self.renames, self.tree) is not None

    def close(self) -> None:
        self.tree.close()

    def __enter__(self) -> RefChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ref_checker(root: str, rev: str, state_dir: str | None = None) -> RefChecker:
    """A `RefChecker` of `rev` (use it in a `with`, or `close()` it)."""
    return RefChecker(root, rev, state_dir)


RENAMES = "renames"  # the cache of `renamed_in` (`logcache`)


def renamed_in(root: str, rev: str, state_dir: str | None = None) -> dict[str, str]:
    """old path → new path of every rename in `rev`'s history (newest first wins); with
    `state_dir`, the log is read whole once and then only since (`logcache`)."""
    return logcache.cached(root, rev, state_dir, RENAMES, "", lambda tip: _renames(root, [tip]),
                           lambda old, base, tip: _renames_since(root, old, base, tip)) or {}


def _renames(root: str, revs: list[str], strict: bool = False) -> dict[str, str] | None:
    """The renames of `revs`' log, newest first; None when git fails (or, `strict`, when
    one path was renamed twice to two places: which is newest is the log's order)."""
    res = gitcore.run(["log", "-M", "--diff-filter=R", "--name-status", "-z", "--format=",
                       *revs], root, clean=True, check=False)
    out: dict[str, str] = {}
    if not res.ok:
        return None
    fields = [f.decode("utf-8", "surrogateescape") for f in res.stdout.split(b"\0")]
    i = 0
    while i + 2 < len(fields):
        status = fields[i].strip()
        if status.startswith("R"):
            if strict and out.get(fields[i + 1], fields[i + 2]) != fields[i + 2]:
                return None
            out.setdefault(fields[i + 1], fields[i + 2])
            i += 3
        else:
            i += 1
    return out


def _renames_since(root: str, old: dict[str, str], base: str, tip: str) -> dict[str, str] | None:
    """`old` (the renames at `base`) and those of the commits since `base`; None when a
    path was renamed to two places (the whole log's order says which is newest)."""
    new = _renames(root, [tip, f"^{base}"], strict=True)
    if new is None or any(old.get(path, to) != to for path, to in new.items()):
        return None
    return {**old, **new}


def moved_to(path: str, renames: dict[str, str], tree: Container[str]) -> str | None:
    """Where `path` (a file, or a folder of renamed files) lives in `tree` after the
    renames, following a chain of them; None when it was not renamed there."""
    seen: set[str] = set()
    while path not in tree and path in renames and path not in seen:
        seen.add(path)
        path = renames[path]
    if path in tree:
        return path
    prefix = path + "/"  # a folder: where its renamed files went (in path order: the
    # same answer however the renames were read)
    for old in sorted(old for old in renames if old.startswith(prefix)):
        target = moved_to(old, renames, tree)
        if target is not None:
            rest = old[len(prefix):]
            return target[:-len(rest) - 1] if target.endswith("/" + rest) else target
    return None


def files_added_or_deleted(root: str, old: str, new: str) -> list[tuple[str, str]] | None:
    """(commit, path) of every file a commit from `old` to `new` added or deleted (a
    rename is both; each parent of a merge counts), or None when `new` does not descend
    from `old` (or git cannot say)."""
    if not old or not new or not gitcore.run(["merge-base", "--is-ancestor", old, new], root,
                                             clean=True, check=False).ok:
        return None
    res = gitcore.run(["log", "-m", "--no-renames", "--diff-filter=m", "--name-only", "-z",
                       "--format=%x01%H", f"{old}..{new}", "--"], root, clean=True,
                      check=False)
    if not res.ok:
        return None
    out: list[tuple[str, str]] = []
    for block in res.stdout.split(b"\x01")[1:]:  # "<sha>\0\n<path>\0<path>\0…"
        sha, *names = (field.strip(b"\n") for field in block.split(b"\0"))
        out += [(sha.decode(), name.decode("utf-8", "surrogateescape")) for name in names
                if name]
    return out


def reached(paths: set[str], renames: dict[str, str]) -> set[str]:
    """`paths` and every path `moved_to` may look at for one of them: the renames chained
    from it, and for a folder the renames of the files under it."""
    olds = sorted(renames)  # the renamed paths under a folder are one run of this list
    out: set[str] = set()
    todo = [p.strip("/") for p in paths]
    while todo:
        path = todo.pop()
        if path in out:
            continue
        out.add(path)
        if path in renames:
            todo.append(renames[path])
        prefix = path + "/"
        at = bisect.bisect_left(olds, prefix)
        while at < len(olds) and olds[at].startswith(prefix):
            todo.append(olds[at])
            at += 1
    return out
