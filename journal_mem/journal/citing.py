"""Citations at filing: what a fact's anchored refs cite, recorded in the entry's
`cited` when it is filed (docs/DESIGN.md, "Memory that checks the code it cites"),
and the tracked files a lesson's text names (citations without asking).

Each ref with an anchor (`PATH#L10-L12`, `PATH#name`) records `COMMIT DIGEST
clean|dirty REF`: the writer's HEAD, the digest of the cited text
(`journal/anchor.py`), and whether that text came from a file with uncommitted
changes. `journal/citations.py` follows them at every distill. Kept apart from it
so that `jmem write` does not import the fold.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from journal_mem.errors import InvalidEntry
from journal_mem.gitops import gitcore
from journal_mem.gitops.history import read_objects
from journal_mem.hashes import sha1
from journal_mem.journal.anchor import digest_at, line_range, split
from journal_mem.journal.entry import CITED_RE


class Cited:
    """One recorded citation."""

    __slots__ = ("_ident", "anchor", "commit", "digest", "dirty", "path", "ref")

    def __init__(self, ref: str, commit: str, digest: str, dirty: bool) -> None:
        self.ref, self.commit, self.digest, self.dirty = ref, commit, digest, dirty
        self.path, self.anchor = split(ref)
        self._ident = ""

    @property
    def ident(self) -> str:
        """What the judgement cache knows it by (made once: a distill asks it twice)."""
        if not self._ident:
            text = f"{self.commit} {self.digest} {self.dirty} {self.ref}"
            self._ident = sha1(text.encode()).hexdigest()[:20]
        return self._ident

    def render(self) -> str:
        """The entry's `cited` item."""
        return f"{self.commit} {self.digest} {'dirty' if self.dirty else 'clean'} {self.ref}"


def parse(item: str) -> Cited | None:
    """A `cited` item, or None when it is not one."""
    match = CITED_RE.fullmatch(item)
    if not match:
        return None
    return Cited(match[4], match[1], match[2], match[3] == "dirty")


def _checkout_text(root: str, path: str) -> str | None:
    try:
        with open(os.path.join(root, path), "rb") as fh:
            return fh.read().decode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return None


def recorded_refs(cited: Iterable[str]) -> set[str]:
    """The refs a `cited` list records."""
    return {c.ref for c in map(parse, cited) if c is not None}


def stamp(root: str, refs: Iterable[str], cited: Iterable[str] = ()) -> tuple[str, ...]:
    """`cited` for `refs` filed from the checkout at `root`: every ref not yet recorded
    gets its HEAD, the digest of what an anchor cites (`-` for a whole file) and whether
    its file had uncommitted changes. Raises InvalidEntry when an anchored ref names a
    file or lines this checkout lacks; a file-level ref to a file this checkout lacks is
    kept unrecorded (judged by the tree alone, as before)."""
    have = {c.ref: c for c in map(parse, cited) if c is not None}
    wanted = [r for r in refs if r not in have]
    if not wanted:
        return tuple(sorted(c.render() for c in have.values()))
    names = ["HEAD", *(f"HEAD:{split(r)[0]}" for r in wanted)]
    found = read_objects(root, names)
    head = found[0][0] if found and found[0] is not None else None
    problems = []
    for ref, obj in zip(wanted, found[1:], strict=True):
        path, anchor = split(ref)
        committed = obj[1].decode("utf-8", "surrogateescape") if obj is not None else None
        text = _checkout_text(root, path)
        if text is None:
            text = committed
        if text is None or head is None:
            if anchor:
                problems.append(f"refs: {ref}: no file {path} in this checkout to cite")
            continue
        if not anchor:
            have[ref] = Cited(ref, head, "-", dirty=text != committed)
            continue
        got = digest_at(text, anchor)
        if got is None:
            span = line_range(anchor)
            size = text.count("\n") + (not text.endswith("\n"))
            why = (f"{path} has {size} lines" if span is not None
                   else f"no definition of {anchor} in {path}")
            problems.append(f"refs: {ref}: {why}")
            continue
        have[ref] = Cited(ref, head, got[0], dirty=text != committed)
    if problems:
        raise InvalidEntry(problems)
    return tuple(sorted(c.render() for c in have.values()))


# citations without asking

_SPAN = re.compile(r"`([^`\s]{3,200})`")
_PATHLIKE = re.compile(r"[\w.@+-]+(?:/[\w.@+-]+)*")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
AUTO_REFS = 8  # at most this many refs found in one lesson's text
AUTO_SOURCE = "refs from its text"


def path_candidates(text: str) -> list[str]:
    """Repository paths a text names in backticks (src/pay.py, `docs/x.md:12`), in
    order, each once: a name with a folder or an extension, nothing absolute or
    outside the top."""
    out: list[str] = []
    for raw in _SPAN.findall(text):
        path = raw.removeprefix("./").rstrip(".,;:)").rstrip("/")
        path = re.sub(r":\d+(?:-\d+)?$", "", path)  # path:12 names the file
        if not _PATHLIKE.fullmatch(path) or ".." in path.split("/"):
            continue
        if "/" not in path and not _EXT.search(path):
            continue  # a word, a command or a flag, not a file
        if path not in out:
            out.append(path)
    return out


def tracked(root: str, paths: list[str]) -> dict[str, str]:
    """{name: the tracked path it names} in the checkout at `root`: a path git tracks, a
    folder holding tracked files, or the one tracked file whose path ends with the name
    (`extract.ts`, `parsers/text.ts` written from inside a package). One `git ls-files`,
    and a second for names found that way."""
    if not paths:
        return {}
    res = gitcore.run(["ls-files", "-z", "--full-name", "--", *(f":(top,literal){p}"
                                                                for p in paths)],
                      root, clean=True, check=False)
    if not res.ok:
        return {}
    files = {p for p in res.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
    out = {p: p for p in paths
           if p in files or any(f.startswith(p + "/") for f in files)}
    rest = [p for p in paths if p not in out]
    if rest:
        every = gitcore.run(["ls-files", "-z", "--full-name"], root, clean=True, check=False)
        by_tail: dict[str, list[str]] = {}
        for path in every.stdout.decode("utf-8", "surrogateescape").split("\0"):
            parts = path.split("/")
            for i in range(1, min(len(parts), 4)):
                by_tail.setdefault("/".join(parts[-i:]), []).append(path)
        for name in rest:
            found = by_tail.get(name, [])
            if len(found) == 1:
                out[name] = found[0]
    return out
