"""Before a distill renders: the memory it did not write, which it adopts as lessons.

Two kinds, both found in the main checkout under the lock, before anything
is written (docs/DESIGN.md, "Invariants": memory jmem did not generate is
imported or adopted, never overwritten):

* a foreign file — a `MEMORY.md` or topic file without the generated header
  (hand-written, or from before jmem), or a native memory file;
* a hand edit of a distilled file — the generated header, but neither the
  blob this machine last wrote nor HEAD's.

This module only looks, with the standard library (`importers/found.py`).
What adopts a file it found (`distill/adopt.py`: the markdown rules, the
hand-edit diff, the intake) is imported by the distiller only then: most
distills find nothing, and that import cost each of them ~45 ms.
"""

from __future__ import annotations

from journal_mem.distill.files import ever_written, fs_clock, is_distilled, recorded
from journal_mem.gitops import history, memgit
from journal_mem.importers.found import Heads, MemFile, NativeFile, memory_files, native_files
from journal_mem.layout import Layout
from journal_mem.repo import Context
from journal_mem.tuples import NamedTuple


class Adopted:
    """What adoption wrote: new journal entries and one line per file adopted. (A plain
    class, and `Found` a named tuple: `dataclasses` cost every distill ~11 ms.)"""

    __slots__ = ("lines", "paths", "removed")

    def __init__(self, paths: list[str] | None = None, lines: list[str] | None = None,
                 removed: list[str] | None = None) -> None:
        self.paths: list[str] = paths or []  # absolute paths of new entries
        self.lines: list[str] = lines or []
        self.removed: list[str] = removed or []  # native files filed (memory-root rel)


class Found(NamedTuple):
    """The memory files a distill adopts: foreign, hand-edited and native ones."""

    foreign: list[MemFile]
    edited: list[MemFile]
    natives: list[NativeFile]


def _edited(ctx: Context, status: list[tuple[str, str]], files: list[MemFile]) -> list[MemFile]:
    """Generated files changed since the distiller wrote them (not its own unfinished write)."""
    prefix = ctx.layout.memory_root + "/"
    changed = {path[len(prefix):] for xy, path in status
               if path.startswith(prefix) and "D" not in xy and is_distilled(path[len(prefix):])}
    listed = [f for f in files if f.generated and f.rel in changed]
    if not listed:  # the usual case: the distiller's blob history (~0.5 MB) is not read
        return []
    mine = recorded(ctx.layout)
    ever = ever_written(ctx.layout)
    out = []
    for f in listed:
        with open(f.path, "rb") as fh:
            blob = memgit.blob_id(fh.read())
        path = prefix + f.rel
        if blob not in mine.get(path, []) and blob not in ever.get(path, []) \
                and not history.had_blob(ctx.repo.main_root, path, blob):
            out.append(f)
    return out


def _heads(layout: Layout) -> Heads | None:
    """The memory files' heads as the last distill read them (None: no cache dir)."""
    try:
        return Heads(layout, fs_clock(layout))
    except OSError:
        return None


def find(ctx: Context, status: list[tuple[str, str]]) -> Found | None:
    """The memory files to adopt (`status`: git's view of the memory root); None when
    there is none."""
    layout = ctx.layout
    heads = _heads(layout)
    files = memory_files(layout, heads=heads)
    if heads is not None:
        heads.save()
    foreign = [f for f in files if not f.generated and f.text.strip()]
    edited = _edited(ctx, status, files)
    natives = native_files(layout)
    return Found(foreign, edited, natives) if foreign or edited or natives else None
