"""What a distill adopts (`distill/unadopted.py` found it): lessons, never overwritten.

* a foreign file: every fact in it is imported, as `jmem import memory` does
  (idempotent: facts already imported are skipped); a native memory file is
  adopted whole (`importers/native.py`);
* a hand edit of a distilled file: the diff against what the distiller wrote
  becomes lessons (`distill/handedit.py`).

A hand edit that deletes too much, one whose distilled original cannot be
read, or a fact that cannot become a valid lesson refuses the distill with
nothing changed. The new entries are committed with the distill.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable

from journal_mem.distill.files import recorded
from journal_mem.distill.folding import previous_facts
from journal_mem.distill.handedit import Edit, edit_lessons
from journal_mem.distill.unadopted import Adopted, Found
from journal_mem.errors import PolicyViolation
from journal_mem.gitops import history, memgit
from journal_mem.importers import native
from journal_mem.importers.found import MemFile
from journal_mem.importers.markdown import Resolver
from journal_mem.importers.memfiles import drafts_of
from journal_mem.intake.pipeline import Proposal, Refused, file
from journal_mem.journal.entry import now as stamp_now
from journal_mem.journal.fold import Fact, fact_of
from journal_mem.journal.foldstate import read_state
from journal_mem.journal.reader import Journal, read_journal
from journal_mem.layout import DISTILL_STATE
from journal_mem.repo import Context

HINT = ("memory changes go through lessons (`jmem write`, or --supersedes KEY / --retracts "
        "KEY); put a file back with `git restore --staged --worktree -- PATH`")


def state_behind(ctx: Context) -> bool:
    """True when the distill state on disk is an older one than HEAD's (a stash or a
    checkout of files took the fresh distilled files): what is on disk then is the
    distiller's own older output, not a hand edit."""
    rel = f"{ctx.layout.memory_root}/{DISTILL_STATE}"
    try:
        with open(os.path.join(ctx.repo.main_root, rel), "rb") as fh:
            disk = fh.read()
    except OSError:
        return False
    head = history.file_at(ctx.repo.main_root, "HEAD", rel)
    return head is not None and disk != head and history.had_blob(
        ctx.repo.main_root, rel, memgit.blob_id(disk))


def base_of(ctx: Context, rel: str) -> str | None:
    """What the distiller last wrote at `rel` (memory-root-relative) in the main checkout:
    its recorded blob if git has it, else HEAD's; None when neither can be known."""
    root = ctx.repo.main_root
    path = f"{ctx.layout.memory_root}/{rel}"
    mine = recorded(ctx.layout).get(path, [])
    for blob_id in mine:
        data = history.blob(root, blob_id)
        if data is not None:
            return data.decode("utf-8", "replace")
    head = history.file_at(root, "HEAD", path)
    if head is None or (mine and memgit.blob_id(head) not in mine):
        return None  # written by a --no-commit distill of an older jmem: unknown
    return head.decode("utf-8", "replace")


def shown_facts(ctx: Context, journal: Journal) -> dict[str, Fact]:
    """The live facts the distilled files showed (the last distill's fold)."""
    state = read_state(ctx.layout.distill_state)
    return {key: fact_of(row)
            for key, row in previous_facts(journal, state, ctx.agents, ctx).items()}


def index_resolver(ctx: Context, journal: Journal, agent: str,
                   also: Iterable[str] = ()) -> Resolver:
    """Whether a link in `agent`'s `MEMORY.md` names a memory file: on disk in the main
    checkout, filed from one already (adopted or captured), or in `also` (absolute
    paths adopted in the same change)."""
    folder = ctx.layout.agent_dir(agent)
    filed = native.adopted_paths(ctx.layout, [e.source or "" for _, e in journal.entries])
    filed |= {os.path.normpath(p) for p in also}

    def exists(link: str) -> bool:
        path = os.path.normpath(os.path.join(folder, link))
        return path in filed or os.path.isfile(path)
    return exists


def _edits(ctx: Context, edited: list[MemFile], journal: Journal, now: dt.datetime,
           also: list[str]) -> tuple[list[Edit], list[str]]:
    facts = shown_facts(ctx, journal)
    edits: list[Edit] = []
    problems: list[str] = []
    for f in edited:
        base = base_of(ctx, f.rel)
        if base is None:
            problems.append(f"{ctx.layout.rel(f.path)}: hand edit of a distilled file whose "
                            "distilled version git does not have: cannot tell what changed")
            continue
        edits.append(edit_lessons(f.agent, f.rel, base, f.text, facts, now,
                                  index_resolver(ctx, journal, f.agent, also)))
    return edits, problems


def limits(edits: list[Edit], root: str) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(shown, gone) for the intake's one-third limit: per file, and per agent across its
    `MEMORY.md` and topic files (one decision of one agent)."""
    shown: dict[str, set[str]] = {}
    gone: dict[str, set[str]] = {}
    for e in edits:
        for label in (f"{root}/{e.rel}", f"{root}/{e.rel.split('/', 1)[0]}"):
            shown.setdefault(label, set()).update(e.shown)
            gone.setdefault(label, set()).update(e.gone)
    return shown, gone


def adopt_found(ctx: Context, found: Found) -> Adopted:
    """Import the foreign memory files `found` and adopt its hand edits; raise
    `PolicyViolation` (nothing written) when one cannot be adopted."""
    layout, policy = ctx.layout, ctx.policy
    foreign, edited, natives = found.foreign, found.edited, found.natives
    if edited and state_behind(ctx):
        return Adopted(lines=[f"{layout.memory_root}: the distilled files on disk are older "
                              "than HEAD's (a stash or checkout took the newer ones): nothing "
                              "adopted; they are written again"])
    now = stamp_now()  # the precision `write` stamps: no tie with the fact it retracts
    journal = read_journal(layout, ctx.policy)
    filed = native.adopted_paths(layout, [e.source or "" for _, e in journal.entries])
    judged = native.judge(layout, ctx.config.default_agent, policy, natives, filed)
    drafts = drafts_of(layout, foreign, adopted=filed) + judged.drafts
    edits, problems = _edits(ctx, edited, journal, now, [nf.path for nf, _ in judged.adopted])
    if problems:
        raise PolicyViolation("distill refused, nothing changed:\n" + "\n".join(problems),
                              hint=HINT)
    drafts += [d for e in edits for d in e.drafts]
    shown, gone = limits(edits, layout.memory_root)
    try:
        done = file(ctx, Proposal(drafts, "hand edit", shown, gone, check_paths=False),
                    journal=journal, now=now)
    except Refused as exc:
        raise PolicyViolation("distill refused, nothing changed:\n" + "\n".join(exc.reasons),
                              hint=HINT) from None
    out = Adopted(paths=done.paths)
    removed, out.lines = native.clear(layout, judged)
    prefix = layout.memory_root + "/"
    out.removed = [p[len(prefix):] for p in removed]
    out.lines += [f"{layout.memory_root}/{f.rel}: not written by jmem: its facts imported "
                  "as lessons" for f in foreign]
    out.lines += [f"{layout.memory_root}/{e.summary()}" for e in edits]
    return out
