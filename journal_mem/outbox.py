"""Draining the outbox into the main journal (DESIGN §2.2), losing nothing.

Each outbox file is validated, then its exact bytes are created in the
agent's journal under the same name (exclusive: never replacing a file), and
only then is the outbox copy removed. A crash between the two leaves the
same name with the same bytes in both places; the next drain sees that and
only removes the outbox copy. A name taken by different bytes gets a new
suffix. An invalid entry stays in the outbox and is reported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from journal_mem.entry import parse
from journal_mem.errors import InvalidEntry
from journal_mem.journal import create_exclusive, entry_name, iter_outbox
from journal_mem.layout import Layout


@dataclass
class Drained:
    """What a drain did: journal paths created, and outbox files left (with why)."""

    moved: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)


def _same_bytes(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read() == data
    except OSError:
        return False


def _file_one(layout: Layout, agent: str, path: str, data: bytes, name_of: str) -> str:
    """Create the journal copy of one outbox file; return its path."""
    folder = layout.journal_dir(agent)
    target = os.path.join(folder, name_of)
    if _same_bytes(target, data):
        return target  # a drain died after copying: the copy is already safe
    entry = parse(data, filename=name_of, folder_agent=agent, entry_bytes=1 << 30)
    names = iter([name_of])  # the outbox name first; a fresh suffix if it is taken

    def name_for(suffix: str) -> str:
        return next(names, None) or entry_name(entry, suffix)

    return create_exclusive(folder, name_for, data)


def drain(layout: Layout, entry_bytes: int) -> Drained:
    """Move every valid outbox entry into the main journal."""
    report = Drained()
    for agent, path in list(iter_outbox(layout)):
        name = os.path.basename(path)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            parse(data, filename=name, folder_agent=agent, entry_bytes=entry_bytes)
        except InvalidEntry as exc:
            report.invalid += [f"{path}: {p}" for p in exc.problems]
            continue
        except OSError as exc:
            report.invalid.append(f"{path}: cannot read: {exc.strerror}")
            continue
        report.moved.append(_file_one(layout, agent, path, data, name))
        os.unlink(path)  # only now: its copy is fsynced in the journal
    return report
