"""Before a distill renders: memory it did not write becomes lessons, never overwritten.

Two kinds, both found in the main checkout under the lock, before anything
is written (docs/DESIGN.md, "Invariants": memory jmem did not generate is
imported or adopted, never overwritten):

* a foreign file — a `MEMORY.md` or topic file without the generated header
  (hand-written, or from before jmem): every fact in it is imported, as
  `jmem import memory` does (idempotent: facts already imported are skipped);
* a hand edit of a distilled file — the generated header, but neither the
  blob this machine last wrote nor HEAD's: the diff against what the
  distiller wrote becomes lessons (`model/handedit.py`).

A hand edit that deletes too much, one whose distilled original cannot be
read, or a fact that cannot become a valid lesson refuses the distill with
nothing changed. The new entries are committed with the distill.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field, replace

from journal_mem.distill.files import ever_written, is_distilled, recorded
from journal_mem.distill.folding import previous_fold
from journal_mem.distill.handedit import Edit, edit_lessons, too_many_gone
from journal_mem.errors import PolicyViolation
from journal_mem.gitops import history, memgit
from journal_mem.importers import native
from journal_mem.importers.intake import Known, write_drafts
from journal_mem.importers.memfiles import MemFile, drafts_of, memory_files
from journal_mem.journal.drafts import Draft, problems_of
from journal_mem.journal.entry import now as stamp_now
from journal_mem.journal.fold import Fact
from journal_mem.journal.foldstate import read_state
from journal_mem.journal.order import latest_by_key, newest_of
from journal_mem.journal.reader import Journal, read_journal
from journal_mem.journal.validate import Policy
from journal_mem.layout import DISTILL_STATE
from journal_mem.repo import Context

HINT = ("memory changes go through lessons (`jmem write`, or --supersedes KEY / --retracts "
        "KEY); put a file back with `git restore --staged --worktree -- PATH`")


@dataclass
class Adopted:
    """What adoption wrote: new journal entries and one line per file adopted."""

    paths: list[str] = field(default_factory=list)  # absolute paths of new entries
    lines: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # native files filed (memory-root rel)


def _edited(ctx: Context, status: list[tuple[str, str]], files: list[MemFile]) -> list[MemFile]:
    """Generated files changed since the distiller wrote them (not its own unfinished write)."""
    prefix = ctx.layout.memory_root + "/"
    changed = {path[len(prefix):] for xy, path in status
               if path.startswith(prefix) and "D" not in xy and is_distilled(path[len(prefix):])}
    mine = recorded(ctx.layout)
    ever = ever_written(ctx.layout)
    out = []
    for f in files:
        if f.generated and f.rel in changed:
            with open(f.path, "rb") as fh:
                blob = memgit.blob_id(fh.read())
            path = prefix + f.rel
            if blob not in mine.get(path, []) and blob not in ever.get(path, []) \
                    and not history.had_blob(ctx.repo.main_root, path, blob):
                out.append(f)
    return out


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


def _base(ctx: Context, f: MemFile) -> str | None:
    """What the distiller last wrote at `f`: its recorded blob if git has it, else HEAD's."""
    root = ctx.repo.main_root
    path = ctx.layout.rel(f.path)
    mine = recorded(ctx.layout).get(path, [])
    for blob_id in mine:
        data = history.blob(root, blob_id)
        if data is not None:
            return data.decode("utf-8", "replace")
    head = history.file_at(root, "HEAD", path)
    if head is None or (mine and memgit.blob_id(head) not in mine):
        return None  # written by a --no-commit distill and never staged: unknown
    return head.decode("utf-8", "replace")


def _facts(ctx: Context, journal: Journal) -> dict[str, Fact]:
    """The live facts the distilled files showed (the last distill's fold)."""

    agents = ctx.agents
    state = read_state(ctx.layout.distill_state)
    return dict(previous_fold(journal, state, agents, ctx).facts)


def _edits(ctx: Context, edited: list[MemFile], journal: Journal,
           now: dt.datetime) -> tuple[list[Edit], list[str]]:
    facts = _facts(ctx, journal)
    edits: list[Edit] = []
    problems: list[str] = []
    for f in edited:
        base = _base(ctx, f)
        if base is None:
            problems.append(f"{ctx.layout.rel(f.path)}: hand edit of a distilled file whose "
                            "distilled version git does not have: cannot tell what changed")
            continue
        edit = edit_lessons(f.agent, f.rel, base, f.text, facts, now)
        if edit.refused:
            problems.append(f"{ctx.layout.memory_root}/{edit.refused}")
        edits.append(edit)
    problems += _too_much_per_agent(ctx, edits)
    return edits, problems


def _too_much_per_agent(ctx: Context, edits: list[Edit]) -> list[str]:
    """The one-third limit across an agent's files: deletions split between its
    `MEMORY.md` and a topic file are one decision of one agent."""
    shown: dict[str, set[str]] = {}
    gone: dict[str, set[str]] = {}
    for e in edits:
        agent = e.rel.split("/", 1)[0]
        shown.setdefault(agent, set()).update(e.shown)
        gone.setdefault(agent, set()).update(e.gone)
    return [f"{ctx.layout.memory_root}/{agent}: hand edits delete {len(gone[agent])} of its "
            f"{len(shown[agent])} facts across its files; more than a third at once looks "
            "like an accident, not a decision"
            for agent in sorted(gone) if too_many_gone(len(gone[agent]), len(shown[agent]))
            and not any(e.refused for e in edits if e.rel.startswith(agent + "/"))]


def _knowing(drafts: list[Draft], journal: Journal) -> list[Draft]:
    """Hand-edit lessons that change or retract a fact know the entry it showed
    (`journal/order.py`): a deleted line beats the fact whatever the clocks say."""
    last = latest_by_key(journal.entries)
    return [replace(d, knew=newest_of(last, {d.identity, *d.retracts, *d.drops}))
            if d.retracts or d.drops or d.replaces else d for d in drafts]


def _validate(drafts: list[Draft], now: dt.datetime, policy: Policy) -> list[str]:
    return [f"{d.source}: cannot become a lesson: {p}" for d, p in problems_of(drafts, now,
                                                                                policy)]


def adopt(ctx: Context, status: list[tuple[str, str]]) -> Adopted:
    """Import foreign memory files and adopt hand edits; raise `PolicyViolation` (nothing
    written) when one cannot be adopted."""

    layout, policy = ctx.layout, ctx.policy
    files = memory_files(layout)
    foreign = [f for f in files if not f.generated and f.text.strip()]
    edited = _edited(ctx, status, files)
    natives = native.native_files(layout)
    if not foreign and not edited and not natives:
        return Adopted()
    if edited and state_behind(ctx):
        return Adopted(lines=[f"{layout.memory_root}: the distilled files on disk are older "
                              "than HEAD's (a stash or checkout took the newer ones): nothing "
                              "adopted; they are written again"])
    now = stamp_now()  # the precision `write` stamps: no tie with the fact it retracts
    journal = read_journal(layout, ctx.policy)
    filed = native.adopted_paths(layout, [e.source or "" for _, e in journal.entries])
    judged = native.judge(layout, ctx.config.default_agent, policy, natives, filed)
    drafts = drafts_of(layout, foreign, adopted=filed) + judged.drafts
    edits, problems = _edits(ctx, edited, journal, now)
    drafts += _knowing([d for e in edits for d in e.drafts], journal)
    problems += _validate(drafts, now, policy)
    if problems:
        raise PolicyViolation("distill refused, nothing changed:\n" + "\n".join(problems),
                              hint=HINT)
    done = write_drafts(layout, drafts, Known(journal.entries), policy, now=now)
    out = Adopted(paths=done.paths)
    removed, out.lines = native.clear(layout, judged)
    prefix = layout.memory_root + "/"
    out.removed = [p[len(prefix):] for p in removed]
    out.lines += [f"{layout.memory_root}/{f.rel}: not written by jmem: its facts imported "
                  "as lessons" for f in foreign]
    out.lines += [f"{layout.memory_root}/{e.summary()}" for e in edits]
    return out
