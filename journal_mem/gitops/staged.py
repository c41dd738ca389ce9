"""What a commit would change under the memory root, read from git.

Used by the guard's slow path and by `rescue`. Paths are repo-relative with
forward slashes, decoded with `surrogateescape` so that any file name round-
trips to the file system. Every call takes a `clean` flag: the guard reads the
index git hands its hook (inherited GIT_INDEX_FILE, for `commit -a` and
`commit <path>`), while calls aimed at the main checkout drop those variables.
"""

from __future__ import annotations

from journal_mem.gitops import gitcore
from journal_mem.tuples import NamedTuple

ZERO = "0" * 40
SYMLINK_MODE = "120000"


class Change(NamedTuple):
    """One path's change, from `git diff --raw` (no rename detection)."""

    path: str
    status: str  # A added, M modified, D deleted, T type changed, U unmerged
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str

    @property
    def is_symlink(self) -> bool:
        return self.new_mode == SYMLINK_MODE

    @property
    def staged_blob(self) -> str:
        """The blob the commit would record; all zeros for a deletion."""
        return ZERO if self.status == "D" else self.new_blob


def decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def pathspec(root: str) -> str:
    """`root` as a pathspec that means the same from any subdirectory, globs and all."""
    return f":(top,literal){root}"


def parse_raw(out: bytes) -> list[Change]:
    """Parse `git diff --raw -z --no-renames --no-abbrev` output."""
    fields = out.split(b"\0")
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_blob, new_blob, status = decode(meta[1:]).split(" ")
        changes.append(Change(decode(path), status[:1], old_mode, new_mode, old_blob, new_blob))
    return changes


def changes(cwd: str, root: str, *, against: str | None = None, cached: bool = True,
            clean: bool = False) -> list[Change]:
    """Changes under `root`: index vs HEAD by default (works before the first commit too).

    `cached=False` with `against="HEAD"` compares HEAD with the work tree instead.
    """
    args = ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-color", "--no-ext-diff"]
    if cached:
        args.append("--cached")
    if against:
        args.append(against)
    args += ["--", pathspec(root)]
    return parse_raw(gitcore.run(args, cwd, clean=clean).stdout)


def untracked(cwd: str, root: str, *, clean: bool = False) -> list[str]:
    """Untracked, not ignored files under `root`."""
    out = gitcore.run(["ls-files", "-z", "--others", "--exclude-standard", "--",
                        pathspec(root)], cwd, clean=clean).stdout
    return [decode(p) for p in out.split(b"\0") if p]


def tree_blobs(cwd: str, rev: str, root: str, *, clean: bool = True) -> dict[str, tuple[str, str]]:
    """{path: (mode, blob id)} of every file under `root` in commit `rev`."""
    out = gitcore.run(["ls-tree", "-r", "-z", "--full-tree", rev, "--", root], cwd,
                       clean=clean).stdout
    blobs = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _, blob = decode(meta).split(" ")
        blobs[decode(path)] = (mode, blob)
    return blobs


def read_blobs(cwd: str, ids: list[str], *, clean: bool = False) -> dict[str, bytes]:
    """The contents of blobs by id, in one `git cat-file --batch` call (missing ids left out)."""
    wanted = sorted({i for i in ids if i and i != ZERO})
    if not wanted:
        return {}
    out = gitcore.run(["cat-file", "--batch"], cwd, clean=clean,
                       stdin=("\n".join(wanted) + "\n").encode()).stdout
    blobs: dict[str, bytes] = {}
    pos = 0
    while pos < len(out):
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")
        pos = end + 1
        if len(header) != 3:  # "<id> missing"
            continue
        size = int(header[2])
        blobs[decode(header[0])] = out[pos : pos + size]
        pos += size + 1
    return blobs
