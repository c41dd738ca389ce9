"""`jmem log KEY` and `jmem blame FILE`: the life of one fact across the team.

The journal says who wrote, corrected, superseded or retracted a fact, and
which bug or pull request paid for it (`source`, `refs`); git says which
commit brought each entry in and what every agent's `MEMORY.md` held at each
distill (`store.history`); the session log says when a running agent was
given it. Together: "the same wrong line in six memory files, fixed for two
on one day and for the other four eighteen days later" as a list of dates.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
from typing import Any

from journal_mem.errors import JournalMemError
from journal_mem.journal import citations
from journal_mem.journal.entry import Entry
from journal_mem.journal.fold import today
from journal_mem.journal.reader import Journal, read_entries, read_journal
from journal_mem.names import NAME
from journal_mem.recall.index import connect, index_path, mentioning, update
from journal_mem.repo import Context
from journal_mem.team import history
from journal_mem.wake import sessions

_KEY_IN_LINE = re.compile(r"\[(" + NAME + r")\]\s*$|key `(" + NAME + r")`")


def _role(entry: Entry, key: str, last_title: str | None) -> str | None:
    if entry.key == key:
        return "corrected" if last_title not in (None, entry.title) else "wrote"
    if key in entry.supersedes:
        return f"superseded by {entry.key}"
    if key in entry.retracts:
        return "retracted"
    return None


def entry_events(ctx: Context, key: str, journal: Journal) -> list[dict[str, Any]]:
    """Every journal entry that wrote, corrected, superseded or retracted `key`, oldest first."""
    related = sorted(((e.created, rel, e) for rel, e in journal.entries
                      if e.key == key or key in e.supersedes or key in e.retracts),
                     key=lambda t: (t[0], t[1]))
    added = history.entry_commits(ctx, [rel for _, rel, _ in related])
    out, last_title = [], None
    for created, rel, entry in related:
        role = _role(entry, key, last_title)
        last_title = entry.title if entry.key == key else last_title
        commit = added.get(rel)
        out.append({
            "date": created.isoformat(), "agent": entry.agent, "role": role,
            "title": entry.title, "source": entry.source, "refs": list(entry.refs),
            "entry": f"{ctx.layout.memory_root}/{rel}",
            "commit": commit.sha if commit else None,
            "valid_until": str(entry.valid_until) if entry.valid_until else None,
        })
    last = next((e for _, _, e in reversed(related) if e.key == key), None)
    if last is not None and last.valid_until is not None:
        until = last.valid_until
        day = until.date() if isinstance(until, dt.datetime) else until
        if day < dt.datetime.now(dt.UTC).date():
            out.append({"date": str(until), "agent": last.agent, "role": "expired",
                        "title": last.title, "source": None, "refs": [], "entry": None,
                        "commit": None, "valid_until": str(until)})
    return out


def successors(journal: Journal, key: str) -> list[str]:
    """`key`, then the keys that superseded it, transitively, in order."""
    by_old: dict[str, list[tuple[dt.datetime, str]]] = {}
    for _, entry in journal.entries:
        for old in entry.supersedes:
            by_old.setdefault(old, []).append((entry.created, entry.key))
    chain = [key]
    while by_old.get(chain[-1]) and len(chain) < 20:
        nxt = max(by_old[chain[-1]])[1]
        if nxt in chain:
            break
        chain.append(nxt)
    return chain


def distill_events(ctx: Context, key: str,
                   journal: Journal) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the commits that changed the fact in some MEMORY.md, every holder's spans).

    A fact superseded under a new key is followed to that key: what a holder
    loads after the correction is part of the fact's life.
    """
    agents = ctx.agents
    chain = successors(journal, key)
    snaps = history.memory_history(ctx, agents, chain)
    changes, before = [], dict[str, str]()
    for snap in snaps:
        now = {a: v for a, lines in snap.memory.items()
               if (v := history.version(lines, chain)) is not None}
        diff = [{"agent": a, "before": before.get(a), "after": now.get(a)}
                for a in sorted(set(now) | set(before)) if now.get(a) != before.get(a)]
        if diff:
            changes.append({"commit": snap.commit.sha, "date": snap.commit.date.isoformat(),
                            "subject": snap.commit.subject, "changes": diff})
        before = now
    spans = [{"agent": s.agent, "text": s.text, "from": s.start.date.isoformat(),
              "from_commit": s.start.sha, "to": s.end.date.isoformat() if s.end else None,
              "to_commit": s.end.sha if s.end else None}
             for s in history.spans(snaps, chain)]
    return changes, spans


def loads(ctx: Context, key: str) -> dict[str, dict[str, Any]]:
    """Per agent: how many recorded wake-ups were given `key`, first and last time."""
    out: dict[str, dict[str, Any]] = {}
    for rec in sessions.read(ctx.layout.state_dir):
        keys = rec.get("keys")
        if isinstance(keys, list) and key in keys:
            row = out.setdefault(str(rec.get("agent")), {"loads": 0, "first": None, "last": None})
            row["loads"] += 1
            row["first"] = row["first"] or rec.get("time")
            row["last"] = rec.get("time")
    return out


def fact_journal(ctx: Context, key: str) -> Journal:
    """The entries the life of `key` is told from: through the recall index's table of
    the keys each entry mentions (brought up to date first), so a log at 10k lessons
    reads a few entries; the whole journal when the index cannot be used."""
    try:
        conn = connect(index_path(ctx.layout))
        try:
            update(ctx, conn, today())
            rels = mentioning(conn, key)
        finally:
            conn.close()
    except (sqlite3.Error, OSError):  # a damaged or unwritable index is only slower
        return read_journal(ctx.layout, ctx.policy)
    return read_entries(ctx.layout, ctx.policy, rels)


def fact_log(ctx: Context, key: str) -> dict[str, Any]:
    """The whole history of `key` as one mapping (what `--json` prints)."""
    journal = fact_journal(ctx, key)
    entries = entry_events(ctx, key, journal)
    distills, spans = distill_events(ctx, key, journal)
    if not entries and not distills:
        raise JournalMemError(f"no journal entry and no distilled file mention key {key!r}",
                           hint="`jmem recall WORDS` finds a fact's key")
    last = max((e for _, e in journal.entries if e.key == key), default=None,
               key=lambda e: e.created)
    cited = citations.history(ctx.repo.main_root, "HEAD", last.cited) if last else []
    return {"key": key, "entries": entries, "distills": distills, "holders": spans,
            "loads": loads(ctx, key), "citations": cited}


def key_at(ctx: Context, path: str, line: int) -> str:
    """The key of the fact at `line` (1-based) of a distilled file."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise JournalMemError(f"{path}: cannot read it ({exc.strerror})") from exc
    if not 1 <= line <= len(lines):
        raise JournalMemError(f"{path}: has {len(lines)} lines, not line {line}")
    for text in lines[line - 1:]:
        m = _KEY_IN_LINE.search(text)
        if m:
            return m[1] or m[2]
        if text.startswith("## ") and text is not lines[line - 1]:
            break
    raise JournalMemError(f"{os.path.basename(path)}:{line}: not a fact line (no [key] on it)")


def blame(ctx: Context, path: str) -> list[dict[str, Any]]:
    """Every fact line of a distilled file with the entry that last stated it."""
    journal = read_journal(ctx.layout, ctx.policy)
    newest: dict[str, tuple[str, Entry]] = {}
    for rel, entry in journal.entries:
        if entry.key not in newest or newest[entry.key][1].created <= entry.created:
            newest[entry.key] = (rel, entry)
    added = history.entry_commits(ctx)
    out = []
    with open(path, encoding="utf-8") as fh:
        for number, text in enumerate(fh.read().splitlines(), 1):
            m = _KEY_IN_LINE.search(text)
            key = (m[1] or m[2]) if m else None
            if key is None or key not in newest:
                continue
            rel, entry = newest[key]
            commit = added.get(rel)
            out.append({"line": number, "key": key, "date": entry.created.date().isoformat(),
                        "agent": entry.agent, "source": entry.source,
                        "commit": commit.sha[:10] if commit else None, "text": text})
    return out


CITED_STATE = {"there": "the cited code is as cited", "changed": "the cited code changed",
               "deleted": "the cited file was deleted",
               "pending": "not in this branch's history yet"}


def render(log: dict[str, Any]) -> list[str]:
    """`jmem log KEY` as text."""
    out = [f"fact [{log['key']}]", "", "journal entries (oldest first):"]
    for e in log["entries"]:
        paid = f" · source {e['source']}" if e["source"] else ""
        refs = f" · refs {', '.join(e['refs'])}" if e["refs"] else ""
        commit = f" · commit {e['commit'][:10]}" if e["commit"] else " · not committed"
        out.append(f"  {e['date'][:10]}  {e['agent']:<12} {e['role']}: {e['title']}"
                   f"{paid}{refs}{commit}")
    for c in log.get("citations") or []:
        dirty = ", uncommitted" if c["dirty"] else ""
        out += ["", f"cites {c['ref']} (recorded at {c['recorded'][:10]}{dirty}): "
                    f"{CITED_STATE[c['state']]}"]
        for step in c["commits"]:
            what = "cited text there" if step["cited_text"] else "cited text gone"
            out.append(f"  {step['commit'][:10]}  {what}: {step['subject']}")
    out += ["", "distills that changed it:"]
    for d in log["distills"] or []:
        out.append(f"  {d['date'][:10]}  {d['commit'][:10]}  {d['subject']}")
        for c in d["changes"]:
            what = ("added" if c["before"] is None else "removed" if c["after"] is None
                    else "changed")
            out.append(f"      {c['agent']}: {what}" + (f": {c['after']}" if c["after"] else ""))
    if not log["distills"]:
        out.append("  (none committed yet)")
    out += ["", "what each holder loaded:"]
    for s in log["holders"]:
        until = s["to"][:10] if s["to"] else "now"
        out.append(f"  {s['agent']:<12} {s['from'][:10]} → {until}: {s['text']}")
    for agent, row in sorted(log["loads"].items()):
        out.append(f"  {agent}: given at {row['loads']} wake-up(s), {row['first']} … "
                   f"{row['last']}")
    return out


def render_blame(rows: list[dict[str, Any]]) -> list[str]:
    return [f"{r['date']} {r['agent']:<12} {(r['commit'] or 'uncommitted'):<11} "
            f"{r['source'] or '':<12} {r['line']:>4}) {r['text']}" for r in rows]
