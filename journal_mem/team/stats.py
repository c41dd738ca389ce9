"""`jmem stats`: the team's memory in numbers.

Journal entries written (per agent, per month), the distilled topic files,
the lines of maintained memory (every line of every agent's `MEMORY.md`: the
memory agents load, under the line cap; topic-file lines are counted apart),
the agents with a `MEMORY.md` of their own ("personal files"),
the line cap and each agent's use of it, facts evicted by the budget, facts
dropped by each rule, pending lessons, and the ratio of entries to maintained
lines. Counts come from the files on disk and a fold at the last distill's
recorded date, the same fold `jmem check` rebuilds.
"""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from typing import Any

from journal_mem.journal.foldstate import read_state
from journal_mem.journal.reader import read_journal
from journal_mem.journal.render import render
from journal_mem.names import MEMORY_MD, TOPICS
from journal_mem.repo import Context

RULES = (("retracted", "retracted"), ("superseded", "superseded"), ("expired", "expired"),
         ("stale refs", "refs gone"), ("episodic TTL", "episodic older"),
         ("merged (same title)", "merged into"))


def _lines(path: str) -> tuple[int, int]:
    """(lines, bytes) of a file."""
    with open(path, "rb") as fh:
        data = fh.read()
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1), len(data)


def files(ctx: Context) -> dict[str, Any]:
    """Distilled files on disk: topic files, lines, personal files, budget use."""
    cap = ctx.config.budget.memory_lines
    topic_files = lines = topic_lines = 0
    per_agent: dict[str, dict[str, Any]] = {}
    for agent in ctx.layout.agents_on_disk():
        memory = ctx.layout.memory_md(agent)
        if os.path.isfile(memory):
            n, size = _lines(memory)
            lines += n
            per_agent[agent] = {"lines": n, "bytes": size, "use": round(n / cap, 3)}
        folder = os.path.join(ctx.layout.main_memory, agent, TOPICS)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if name.endswith(".md") and os.path.isfile(os.path.join(folder, name)):
                topic_files += 1
                topic_lines += _lines(os.path.join(folder, name))[0]
    return {"topic_files": topic_files, "maintained_lines": lines, "topic_lines": topic_lines,
            "personal_files": len(per_agent), "cap": cap, "agents": per_agent}


def dropped_and_evicted(ctx: Context, entries: list[Any]) -> dict[str, Any]:
    """The fold at the last distill's date: facts dropped per rule, evicted per agent."""
    state = read_state(ctx.layout.distill_state)
    date = state.date if state else dt.datetime.now(dt.UTC).date()
    folded = set(state.folded) if state else set()
    done = [(rel, e) for rel, e in entries if rel in folded]
    agents = ctx.agents
    result = ctx.fold(done, date, agents=agents)
    rendered = render(result, agents, ctx.config.budget)
    reasons: Counter[str] = Counter()
    for why in result.removed.values():
        label = next((name for name, prefix in RULES if why.startswith(prefix)), "other")
        reasons[label] += 1
    evicted = {a: len(r.evicted) for a, r in rendered.agents.items() if r.evicted}
    stale = {k: why for k, why in result.removed.items() if why.startswith("refs gone")}
    conflicts = [{"key": old, "newer": new, "agents": list(result.facts[old].holders)}
                 for old, new in result.conflicts if old in result.facts]
    return {"live_facts": len(result.facts), "dropped": {n: reasons[n] for n, _ in RULES},
            "open_conflicts": conflicts,
            "evicted": evicted, "evicted_total": sum(evicted.values()), "stale_keys": stale,
            "cited_changed": {k: [c.text() for c in changes]
                              for k, changes in sorted(result.code.items())
                              if k in result.facts},
            "distill_date": date.isoformat() if state else None,
            "pending": len(entries) - len(done)}


def collect(ctx: Context, since: dt.date | None = None) -> dict[str, Any]:
    """Every number of the team table."""
    journal = read_journal(ctx.layout, ctx.policy)
    written = [(rel, e) for rel, e in journal.entries
               if since is None or e.created.date() >= since]
    per_agent = Counter(e.agent for _, e in written)
    per_month = Counter(e.created.strftime("%Y-%m") for _, e in written)
    out: dict[str, Any] = {
        "since": since.isoformat() if since else None,
        "entries": len(written), "invalid_entries": len(journal.invalid),
        "entries_per_agent": dict(sorted(per_agent.items())),
        "entries_per_month": dict(sorted(per_month.items())),
    }
    out.update(files(ctx))
    out.update(dropped_and_evicted(ctx, journal.entries))
    lines = out["maintained_lines"]
    out["entries_per_line"] = round(len(journal.entries) / lines, 3) if lines else None
    return out


def render_lines(s: dict[str, Any]) -> list[str]:
    """The team table as text."""
    since = f" since {s['since']}" if s["since"] else ""
    out = [
        f"journal entries{since}: {s['entries']}"
        + (f" ({s['invalid_entries']} invalid)" if s["invalid_entries"] else ""),
        f"distilled topic files: {s['topic_files']}",
        f"lines of maintained memory ({MEMORY_MD} files): {s['maintained_lines']}"
        f" (topic files hold {s['topic_lines']} more)",
        f"personal files (agents with a {MEMORY_MD}): {s['personal_files']}",
        f"cap: {s['cap']} lines per {MEMORY_MD}",
        f"live facts: {s['live_facts']} · evicted by the budget: {s['evicted_total']} · "
        f"pending lessons: {s['pending']}",
        "dropped: " + ", ".join(f"{k} {v}" for k, v in s["dropped"].items()),
        f"open conflicts (a newer lesson probably corrects a fact): {len(s['open_conflicts'])}",
        f"entries per maintained line: {s['entries_per_line']}",
        "",
        "per agent: entries · MEMORY.md lines (use of the cap)",
    ]
    for agent in sorted(set(s["entries_per_agent"]) | set(s["agents"])):
        mem = s["agents"].get(agent)
        use = f"{mem['lines']} ({mem['use']:.0%})" if mem else "no MEMORY.md"
        out.append(f"  {agent:<16} {s['entries_per_agent'].get(agent, 0):>5} · {use}")
    out += ["", "per month: " + ", ".join(f"{m} {n}" for m, n in s["entries_per_month"].items())]
    return out
