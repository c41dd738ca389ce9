"""Draining the outbox into the main journal, losing nothing.

See docs/DESIGN.md, "Exclusive atomic writes".

Each outbox file is validated, then made to exist in the agent's journal
under the same name, and only then is the outbox copy removed. The journal
name is created by hard-linking the outbox file itself (the outbox entry was
fsynced when it was written): a link fails on EEXIST instead of replacing, is
atomic, and leaves no temp file behind if the process dies. Where a link is
impossible (another file system) the bytes are copied with the journal's
exclusive create. A crash between the two steps leaves the same name with
the same bytes in both places; the next drain sees that and only removes the
outbox copy. A name taken by different bytes gets a new suffix, so a crash
in that case leaves at most a duplicate with the same key, which the
distiller folds into one fact. An invalid entry stays in the outbox and is
reported.

`drain` itself expects the caller to hold the distill lock (the distiller
does); `drain_now` takes it for `jmem outbox drain`.
"""

from __future__ import annotations

import errno
import os

from journal_mem.errors import InvalidEntry, PolicyViolation
from journal_mem.fsutil import create_exclusive, fsync_dir
from journal_mem.journal.entry import parse
from journal_mem.journal.files import entry_name, iter_outbox
from journal_mem.journal.ignored import refuse_ignored
from journal_mem.journal.lock import DistillLock
from journal_mem.journal.validate import Policy, parse_valid
from journal_mem.layout import Layout
from journal_mem.tuples import NamedTuple


class Drained:
    """What a drain did: journal paths created, and outbox files left (with why)."""

    __slots__ = ("invalid", "moved")

    def __init__(self) -> None:
        self.moved: list[str] = []
        self.invalid: list[str] = []


def _same_bytes(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read() == data
    except OSError:
        return False


def _link(path: str, target: str) -> bool:
    """Hard-link `path` at `target`; False when the name is taken or links are impossible."""
    try:
        os.link(path, target)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            return False
        raise
    fsync_dir(os.path.dirname(target))
    return True


def _file_one(layout: Layout, agent: str, path: str, data: bytes, name_of: str) -> str:
    """Create the journal copy of one outbox file; return its path."""
    folder = layout.journal_dir(agent)
    target = os.path.join(folder, name_of)
    if _same_bytes(target, data):
        return target  # a drain died after copying: the copy is already safe
    os.makedirs(folder, exist_ok=True)
    if _link(path, target):
        return target
    entry = parse(data, filename=name_of, folder_agent=agent, entry_bytes=1 << 30)
    names = iter([name_of])  # the outbox name first; a fresh suffix if it is taken

    def name_for(suffix: str) -> str:
        return next(names, None) or entry_name(entry, suffix)

    return create_exclusive(folder, name_for, data)


def drain(layout: Layout, policy: Policy) -> Drained:
    """Move every valid outbox entry into the main journal (the caller holds the lock)."""
    report = Drained()
    for agent, path in list(iter_outbox(layout)):
        name = os.path.basename(path)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            parse_valid(data, policy, filename=name, folder_agent=agent)
        except InvalidEntry as exc:
            report.invalid += [f"{path}: {p}" for p in exc.problems]
            continue
        except OSError as exc:
            report.invalid.append(f"{path}: cannot read: {exc.strerror}")
            continue
        report.moved.append(_file_one(layout, agent, path, data, name))
        os.unlink(path)  # only now: its copy is safely in the journal
    return report


# --- `jmem outbox list|drain` ----------------------------------------------------


class Waiting(NamedTuple):
    """One file in the outbox, and whether the next drain will file it."""

    agent: str
    path: str
    title: str
    problems: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {"agent": self.agent, "path": self.path, "title": self.title,
                "valid": not self.problems, "problems": list(self.problems)}


def waiting(layout: Layout, policy: Policy) -> list[Waiting]:
    """Every outbox file, validated the way a drain will validate it."""
    out = []
    for agent, path in iter_outbox(layout):
        name = os.path.basename(path)
        try:
            with open(path, "rb") as fh:
                entry = parse_valid(fh.read(), policy, filename=name, folder_agent=agent)
            out.append(Waiting(agent, path, entry.title, ()))
        except InvalidEntry as exc:
            out.append(Waiting(agent, path, "", tuple(exc.problems)))
        except OSError as exc:
            out.append(Waiting(agent, path, "", (f"cannot read: {exc.strerror}",)))
    return out


def drain_now(layout: Layout, policy: Policy) -> Drained:
    """`jmem outbox drain`: drain under the distill lock (a running distill drains too)."""

    links = layout.symlinked_folders()  # a distill checks the same before its drain
    if links:
        raise PolicyViolation(
            "outbox drain refused, nothing moved: symlinks on the way to memory: "
            + ", ".join(links), hint="replace each link with a real folder")
    refuse_ignored(layout, sorted({agent for agent, _ in iter_outbox(layout)}), "outbox drain")
    with DistillLock(layout.state_dir):
        return drain(layout, policy)
