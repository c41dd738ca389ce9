"""The distilled files on disk: which paths they are, writing them, and the blob
ids this machine's distiller wrote but did not commit yet.

The blob record lets the next distill tell its own uncommitted files (a
`--no-commit` run, or a distill killed half-way) from hand edits.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os

from journal_mem import fsutil
from journal_mem.gitops import memgit
from journal_mem.hashes import blake2b
from journal_mem.layout import DISTILL_STATE, MEMORY_MD, TOPICS, Layout
from journal_mem.names import is_name

WRITTEN = "distill-written.json"  # in the state dir: blob ids this machine's distiller wrote
OLD_TMP_PREFIX = ".tmp-distill-"  # what distills before `fsutil` named their temp files


def is_distilled(rel: str) -> bool:
    """True for a memory-root-relative path the distiller owns."""
    parts = rel.split("/")
    if parts == [DISTILL_STATE]:
        return True
    if len(parts) == 2:
        return is_name(parts[0]) and parts[1] == MEMORY_MD
    return len(parts) == 3 and is_name(parts[0]) and parts[1] == TOPICS and parts[2].endswith(
        ".md") and not parts[2].startswith(".")


def distilled_on_disk(layout: Layout) -> set[str]:
    """Memory-root-relative paths of every distilled file now on disk (state file aside)."""
    found: set[str] = set()
    for agent in layout.agents_on_disk():
        if os.path.isfile(layout.memory_md(agent)):
            found.add(f"{agent}/{MEMORY_MD}")
        try:
            names = os.listdir(os.path.join(layout.agent_dir(agent), TOPICS))
        except (FileNotFoundError, NotADirectoryError):
            continue
        rels = (f"{agent}/{TOPICS}/{n}" for n in names)
        found.update(rel for rel in rels if is_distilled(rel))
    return found


def read_distilled(layout: Layout, rel: str) -> bytes | None:
    """The bytes of a memory-root-relative file, or None when it cannot be read.

    LF whatever the checkout's line endings: with `core.autocrlf` a distilled
    file is checked out with CRLF and is still what the distiller wrote.
    """
    try:
        with open(os.path.join(layout.main_memory, rel), "rb") as fh:
            return fh.read().replace(b"\r\n", b"\n")
    except OSError:
        return None


def sweep_leftovers(layout: Layout) -> None:
    """Delete the temp files of a distill killed mid-write.

    Only the lock holder writes temp files in these folders and we hold the lock,
    so every one found belongs to a dead distill; nothing else is touched.
    """
    folders = [layout.main_memory]
    for agent in layout.agents_on_disk():
        folders += [layout.agent_dir(agent), os.path.join(layout.agent_dir(agent), TOPICS)]
    for folder in folders:
        try:
            names = [n for n in os.listdir(folder)
                     if fsutil.is_temp(n) or n.startswith(OLD_TMP_PREFIX)]
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            try:
                os.unlink(os.path.join(folder, name))
            except FileNotFoundError:
                pass


# A file changed less than this long ago is not stamped: a change within the same tick of
# the file system's clock could leave its stamp as it was (git's "racily clean" entries).
STAMP_AFTER_NS = 2_000_000_000


def stamp(layout: Layout, rel: str) -> tuple[int, ...] | None:
    """How a memory-root-relative file stands on disk (size, mtime, ctime, inode), or None
    when it cannot be read. Any write changes its ctime, or its inode when replaced."""
    try:
        st = os.lstat(os.path.join(layout.main_memory, rel))
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def fs_clock(layout: Layout) -> int:
    """Now, by the file system's clock (the mtime of a file just touched in the state
    dir): a network file system may keep a clock of its own, behind this machine's, and
    a stamp is judged against the clock that wrote it."""
    return fsutil.touched_now(os.path.join(layout.state_dir, "cache", "clock")).st_mtime_ns


def digest(data: bytes) -> bytes:
    """The digest a topic file's bytes are kept by when its stamp cannot say (`keep`)."""
    return blake2b(data, digest_size=16).digest()


def holds(layout: Layout, rel: str, kept: tuple[int, ...] | bytes) -> bool:
    """Whether the memory-root-relative file is as the last distill left it: its stamp is
    `kept`, or (a `digest`, when the file was too new to stamp) its bytes' digest is."""
    if isinstance(kept, tuple):
        return stamp(layout, rel) == kept
    try:
        with open(os.path.join(layout.main_memory, rel), "rb") as fh:
            return digest(fh.read()) == kept
    except OSError:
        return False


def settled_stamp(layout: Layout, rel: str, now_ns: int) -> tuple[int, ...] | None:
    """`stamp`, for a file left alone for `STAMP_AFTER_NS` before `now_ns` (`fs_clock`);
    else None (it will be read again)."""
    found = stamp(layout, rel)
    if found is None or max(found[1], found[2]) > now_ns - STAMP_AFTER_NS:
        return None
    return found


def write_files(layout: Layout, changed: dict[str, bytes], deleted: list[str]) -> None:
    """Write the changed distilled files and delete stale ones; the state file goes last.

    The blob ids are recorded in the state dir first, so that a distill killed
    half-way does not mistake its own files for hand edits on the next run.
    """
    blobs = {repo_rel(layout, p): memgit.blob_id(d) for p, d in changed.items()}
    gone = [repo_rel(layout, p) for p in deleted]
    remember(layout, blobs, [], keep_old=True)
    for rel in sorted(changed, key=lambda p: p == DISTILL_STATE):
        # Not `durable`: an fsync per file would cost a one-lesson distill ~15 %, and
        # these files are rebuilt from the journal, whose entries are fsynced.
        fsutil.replace_atomic(os.path.join(layout.main_memory, rel), changed[rel])
    for rel in deleted:
        try:
            os.unlink(os.path.join(layout.main_memory, rel))
        except FileNotFoundError:
            pass
    # Old blobs stay recorded until a commit holds them: an earlier distill killed
    # after `git add` left them staged, and a later one killed before its own
    # `git add` must not take them for hand edits (found by the kill -9 suite). The
    # history holds these blobs since the first call: it is not read and written again.
    remember(layout, blobs, gone, keep_old=True, joined=True)


def repo_rel(layout: Layout, rel: str) -> str:
    """A memory-root-relative path made repository-relative."""
    return f"{layout.memory_root}/{rel}"


def _written_path(layout: Layout) -> str:
    return os.path.join(layout.state_dir, WRITTEN)


def recorded(layout: Layout) -> dict[str, list[str]]:
    """{repo-relative path: blob ids} of distilled files this machine wrote and did not commit."""
    data = fsutil.read_json(_written_path(layout))
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(b) for b in v] for k, v in data.items() if isinstance(v, list)}


# Kept with `marshal` (built in): at 10k lessons ~600 paths of up to 64 blob ids, which
# as JSON took ~8 ms of each distill to read and write again. An older journal-mem kept
# it as JSON (`OLD_HISTORY`): read until the first write replaces it.
HISTORY = "distilled-history.marshal"
OLD_HISTORY = "distilled-history.json"
HISTORY_KEEP = 64  # versions kept per path


def ever_written(layout: Layout) -> dict[str, list[str]]:
    """{repo-relative path: blob ids} of the last versions this machine's distiller wrote,
    committed or not: a file equal to one of them is its own output, not a hand edit
    (after `git reset HEAD~1` undid the distill commit, or a stash took the newer copy)."""
    try:
        with open(os.path.join(layout.state_dir, HISTORY), "rb") as fh:
            data = marshal.loads(fh.read())
    except FileNotFoundError:
        try:
            with open(os.path.join(layout.state_dir, OLD_HISTORY), encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return {}
    except (OSError, ValueError, EOFError, TypeError):  # damaged: as if none
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(b) for b in v] for k, v in data.items() if isinstance(v, list)}


def remember(layout: Layout, blobs: dict[str, str], gone: list[str], keep_old: bool,
             joined: bool = False) -> None:
    """Record the blob ids about to be written (`keep_old`: besides the old ones, else
    only them); `gone` paths are forgotten (deleted, or committed). Every blob also
    joins the paths' history (`ever_written`), which forgets only the oldest; `joined`:
    these blobs joined it already (the same call made before the files were written),
    and joining again would write it as it is."""
    if blobs and not joined:
        history = ever_written(layout)
        for path, blob in blobs.items():
            kept = [b for b in history.get(path, []) if b != blob]
            history[path] = [*kept, blob][-HISTORY_KEEP:]
        fsutil.replace_atomic(os.path.join(layout.state_dir, HISTORY),
                              marshal.dumps(history))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(layout.state_dir, OLD_HISTORY))
    data = recorded(layout)
    for path, blob in blobs.items():
        data[path] = sorted({*data.get(path, []), blob}) if keep_old else [blob]
    for path in gone:
        data.pop(path, None)
    fsutil.replace_atomic(_written_path(layout), json.dumps(data, sort_keys=True))
