"""`jmem report`: the team's memory as one static HTML page.

For every fact held by more than one agent or corrected at least once, a
timeline across agents (one lane per holder, coloured by the version it
loaded, with the dates of the entries and distills, from `store.history`);
budgets per agent, pending lessons and their age, evictions, stale-ref drops,
open conflicts, and the `jmem stats` table. Rendering is `model.htmlreport`.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from journal_mem.fsutil import replace_atomic
from journal_mem.journal.entry import Entry
from journal_mem.journal.foldstate import read_state
from journal_mem.journal.reader import read_journal
from journal_mem.repo import Context
from journal_mem.team import history, stats
from journal_mem.team import html as htmlreport

MAX_TIMELINES = 300  # a page stays readable; the rest is counted


def _chains(entries: list[tuple[str, Entry]]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(key -> the key it supersedes (its predecessor), key -> its successors in order)."""
    pred: dict[str, str] = {}
    for _, entry in sorted(entries, key=lambda t: t[1].created):
        for old in entry.supersedes:
            if old != entry.key:
                pred.setdefault(entry.key, old)
    succ: dict[str, list[str]] = {}
    for new, old in pred.items():
        succ.setdefault(old, []).append(new)
    return pred, succ


def _root(key: str, pred: dict[str, str]) -> str:
    seen = {key}
    while key in pred and pred[key] not in seen:
        key = pred[key]
        seen.add(key)
    return key


def _chain(root: str, succ: dict[str, list[str]]) -> list[str]:
    chain = [root]
    while succ.get(chain[-1]) and len(chain) < 20:
        nxt = succ[chain[-1]][-1]
        if nxt in chain:
            break
        chain.append(nxt)
    return chain


def timelines(ctx: Context, entries: list[tuple[str, Entry]]) -> list[htmlreport.Timeline]:
    """Every fact held by several agents or corrected: its lanes, versions and dates."""
    agents = ctx.agents
    snaps = history.memory_history(ctx, agents)
    pred, succ = _chains(entries)
    roots = sorted({_root(k, pred) for s in snaps for lines in s.memory.values() for k in lines})
    naming: dict[str, list[int]] = {}  # key -> the entries stating, superseding, retracting it
    for at, (_, entry) in enumerate(entries):
        for key in {entry.key, *entry.supersedes, *entry.retracts}:
            naming.setdefault(key, []).append(at)
    out = []
    for root in roots:
        chain = _chain(root, succ)
        spans = history.spans(snaps, chain)
        versions = list(dict.fromkeys(s.text for s in spans))
        holders = sorted({s.agent for s in spans})
        if len(holders) < 2 and len(versions) < 2:
            continue
        lanes = {a: htmlreport.Lane(a) for a in holders}
        for s in spans:
            lanes[s.agent].segments.append((s.start.date, s.end.date if s.end else None,
                                            versions.index(s.text), s.text))
        related = [(e.created.date(), f"{e.agent}: {e.title}")
                   for e in (entries[at][1] for at in sorted(
                       {at for key in chain for at in naming.get(key, ())}))]
        distills = sorted({s.start.date for s in spans} | {s.end.date for s in spans if s.end})
        title = versions[-1].rsplit(" [", 1)[0] if versions else root
        out.append(htmlreport.Timeline(root, title, versions, list(lanes.values()),
                                       sorted(related), distills))
    out.sort(key=lambda t: (-len(t.versions), -len(t.lanes), t.key))
    return out


def pending(ctx: Context, entries: list[tuple[str, Entry]], today: dt.date) -> list[dict[str, Any]]:
    state = read_state(ctx.layout.distill_state)
    folded = set(state.folded) if state else set()
    rows = [{"agent": e.agent, "title": e.title, "date": e.created.date().isoformat(),
             "age": (today - e.created.date()).days} for rel, e in entries if rel not in folded]
    return sorted(rows, key=lambda r: (-r["age"], r["agent"], r["title"]))


def collect(ctx: Context, today: dt.date | None = None) -> dict[str, Any]:
    """Everything the page shows."""
    day = today or dt.datetime.now(dt.UTC).date()
    journal = read_journal(ctx.layout, ctx.policy)
    found = timelines(ctx, journal.entries)
    table = stats.collect(ctx)
    return {
        "repo": os.path.basename(ctx.repo.main_root), "today": day, "stats": table,
        "byte_cap": ctx.config.budget.memory_bytes,
        "timelines": found[:MAX_TIMELINES], "more_timelines": max(len(found) - MAX_TIMELINES, 0),
        "pending": pending(ctx, journal.entries, day),
        "stale": sorted(table.get("stale_keys", {}).items()),
        "cited": sorted(table.get("cited_changed", {}).items()),
        "conflicts": table["open_conflicts"],
    }


def write_report(ctx: Context, out_dir: str) -> str:
    """Write `index.html` into `out_dir` (created if needed); its path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(os.path.abspath(out_dir), "index.html")
    replace_atomic(path, htmlreport.page(collect(ctx)).encode("utf-8"))
    return path
