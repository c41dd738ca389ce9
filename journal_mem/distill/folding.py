"""The fold and render step of a distill, and the fold the last distill made.

The previous fold is what the commit message and the report compare against;
it is cached under the fold's signature so that an unchanged journal is not
folded twice.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass

from journal_mem.gitops import gitcore
from journal_mem.journal.cache import load_fold, load_topics, save_fold, save_topics
from journal_mem.journal.fold import FACT_FIELDS, Fold, fact_of, fact_row
from journal_mem.journal.foldstate import FoldState, parse_state, read_state
from journal_mem.journal.reader import Journal
from journal_mem.journal.render import Rendered, code_key, render
from journal_mem.repo import Context


@dataclass(frozen=True)
class Step:
    """One fold and render of the journal, with the fold it replaces."""

    date: dt.date
    agents: list[str]
    after: Fold  # the new fold
    rendered: Rendered
    state: FoldState | None  # the distill state on disk
    base: FoldState | None  # the state the commit changes (HEAD's when committing)
    before: Fold  # the fold `base` made
    folded: tuple[str, ...]  # every valid entry, sorted


def fold_step(ctx: Context, journal: Journal, date: dt.date, *, committing: bool,
              save: bool) -> Step:
    """Fold `journal` on `date` for every agent and render it; with `save`, cache the fold."""
    layout, config = ctx.layout, ctx.config
    agents = ctx.agents
    after = ctx.fold(journal.entries, date, agents=agents)
    rendered = render(after, agents, config.budget, load_topics(layout.state_dir, code_key()))
    state = read_state(layout.distill_state)
    base = committed_state(ctx) if committing else state
    before = previous_fold(journal, base, agents, ctx)
    folded = tuple(sorted(rel for rel, _ in journal.entries))
    if save:
        save_fold(layout.state_dir, fold_signature(FoldState(date, folded), agents, ctx),
                  {key: fact_row(fact) for key, fact in after.facts.items()})
        save_topics(layout.state_dir, rendered.topics, code_key())
    return Step(date, agents, after, rendered, state, base, before, folded)


def committed_state(ctx: Context) -> FoldState | None:
    """The distill state in HEAD (None before the first committed distill)."""
    path = ctx.layout.rel(ctx.layout.distill_state)
    res = gitcore.run(["cat-file", "blob", f"HEAD:{path}"], ctx.repo.main_root, clean=True,
                       check=False)
    return parse_state(res.stdout) if res.ok else None


def previous_fold(journal: Journal, state: FoldState | None, agents: list[str],
                  ctx: Context) -> Fold:
    """The fold the last distill made: its folded entries on its date (cached)."""
    if state is None:
        return Fold()
    cached = load_fold(ctx.layout.state_dir, fold_signature(state, agents, ctx))
    if cached is not None:
        return Fold(facts={key: fact_of(row) for key, row in cached.items()})
    was = set(state.folded)
    entries = [(rel, e) for rel, e in journal.entries if rel in was]
    return ctx.fold(entries, state.date, agents=agents, report_near=False)


def fold_signature(state: FoldState, agents: list[str], ctx: Context) -> str:
    """What a fold depends on besides entry contents and refs: folded set, date, agents,
    config; and the fields a kept fact's values stand for (`fact_row`)."""
    text = json.dumps([state.date.isoformat(), agents, ctx.config.as_dict(),
                       sorted(state.folded), FACT_FIELDS])
    return hashlib.sha256(text.encode()).hexdigest()


