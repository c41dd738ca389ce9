"""When files were last committed: the provenance an import records (one git call)."""

from __future__ import annotations

import datetime as dt

from journal_mem.gitops import gitcore


def last_commits(root: str, paths: list[str]) -> dict[str, tuple[str, dt.datetime]]:
    """{repo-relative path: (commit id, commit date)} of the newest commit touching each path.

    One `git log` walk over the paths, newest first; paths never committed are
    missing from the result.
    """
    if not paths:
        return {}
    wanted = set(paths)
    res = gitcore.run(["log", "-z", "--no-renames", "--format=%x01%H %cI", "--name-only",
                        "--", *sorted(wanted)], root, clean=True, check=False)
    found: dict[str, tuple[str, dt.datetime]] = {}
    if not res.ok:
        return found
    for chunk in res.stdout.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        head, _, names = chunk.partition("\n")
        sha, _, when = head.strip().partition(" ")
        try:
            date = dt.datetime.fromisoformat(when)
        except ValueError:
            continue
        for name in names.split("\0"):
            name = name.strip("\n")
            if name in wanted and name not in found:
                found[name] = (sha, date)
        if len(found) == len(wanted):
            break
    return found


def file_at(root: str, rev: str, path: str) -> bytes | None:
    """The bytes of `path` in `rev`, or None when it is not there."""
    res = gitcore.run(["cat-file", "blob", f"{rev}:{path}"], root, clean=True, check=False)
    return res.stdout if res.ok else None


def blob(root: str, blob_id: str) -> bytes | None:
    """The bytes of the blob `blob_id`, or None when this repository does not have it."""
    res = gitcore.run(["cat-file", "blob", blob_id], root, clean=True, check=False)
    return res.stdout if res.ok else None


def had_blob(root: str, path: str, blob_id: str, depth: int = 500) -> bool:
    """True when `path` held `blob_id` in one of the last `depth` commits of HEAD that
    changed it (`git log --raw`: each change's old and new blob)."""
    res = gitcore.run(["log", "-n", str(depth), "--format=", "--raw", "--no-abbrev", "--no-renames",
                       "HEAD", "--", path], root, clean=True, check=False)
    return res.ok and blob_id in res.text().split()


def read_objects(root: str, names: list[str]) -> list[tuple[str, bytes] | None]:
    """(object id, bytes) of each object name (`REV:path`, an id…), in order, in one
    `git cat-file --batch`; None for a name this repository cannot resolve."""
    if not names:
        return []
    res = gitcore.run(["cat-file", "--batch"], root, clean=True, check=False,
                       stdin=("\n".join(names) + "\n").encode("utf-8", "surrogateescape"))
    out, pos = res.stdout, 0
    found: list[tuple[str, bytes] | None] = []
    for _ in names:
        end = out.find(b"\n", pos)
        if end < 0:
            found.append(None)
            continue
        header = out[pos:end].split(b" ")
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():  # "<name> missing" / "ambiguous"
            found.append(None)
            continue
        size = int(header[2])
        found.append((header[0].decode(), out[pos:pos + size]))
        pos += size + 1
    return found


def object_ids(root: str, names: list[str]) -> list[tuple[str, str] | None]:
    """(object id, type) of each object name (`REV:path`…), in order, in one
    `git cat-file --batch-check`; None for a name that resolves to nothing."""
    if not names:
        return []
    res = gitcore.run(["cat-file", "--batch-check"], root, clean=True, check=False,
                       stdin=("\n".join(names) + "\n").encode("utf-8", "surrogateescape"))
    lines = res.stdout.decode("utf-8", "surrogateescape").split("\n")
    out: list[tuple[str, str] | None] = []
    for i in range(len(names)):
        fields = lines[i].split(" ") if i < len(lines) else []
        out.append((fields[0], fields[1]) if len(fields) == 3 else None)
    return out
