"""The team report as one static HTML page: pure, data in, text out.

No server, no network: CSS and the one small script (a filter box) are
inline, the timelines are inline SVG. Everything that comes from a lesson
(titles, agent names, sources) is untrusted and goes through `esc`; the
script reads only the page's own attributes and sets no HTML.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from html import escape
from typing import Any

LANE, LEFT, WIDTH = 22, 150, 760  # lane height, label column, plot width (px)
CURRENT, EARLIER = "#2e7d32", "#c62828"

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;border-bottom:1px solid #eee;
text-align:left}th{background:#f6f6f6}td.n{text-align:right;font-variant-numeric:tabular-nums}
.fact{margin:18px 0;padding:8px 12px;border:1px solid #e3e3e3;border-radius:6px}
.fact h3{font-size:15px;margin:0 0 6px}.key{color:#555;font-family:monospace}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
.bar{height:10px;background:#1565c0}.barbox{width:200px;background:#eee}
.over{background:#c62828}input{padding:4px 8px;width:320px}
"""

SCRIPT = """
document.getElementById('filter').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('.fact').forEach(function (el) {
    el.style.display = el.getAttribute('data-search').indexOf(q) >= 0 ? '' : 'none';
  });
});
"""


def esc(value: object) -> str:
    return escape(str(value), quote=True)


@dataclass
class Lane:
    """One holder of a fact: (start, end or None, version index, text) segments."""

    agent: str
    segments: list[tuple[dt.date, dt.date | None, int, str]] = field(default_factory=list)


@dataclass
class Timeline:
    """A fact held by several agents or corrected: its lanes and the dates that matter."""

    key: str
    title: str
    versions: list[str]
    lanes: list[Lane]
    entry_dates: list[tuple[dt.date, str]]  # (date, what)
    distill_dates: list[dt.date]


def _x(day: dt.date, start: dt.date, span_days: int) -> float:
    return LEFT + WIDTH * (day - start).days / span_days


def timeline_svg(t: Timeline, today: dt.date) -> str:
    """One fact's lanes: each holder's loaded version over time, with entry and distill marks."""
    dates = [d for d, _ in t.entry_dates] + t.distill_dates
    dates += [s[0] for lane in t.lanes for s in lane.segments]
    start = min(dates, default=today)
    end = max([*dates, today])
    span = max((end - start).days, 1)
    height = LANE * len(t.lanes) + 34
    last = len(t.versions) - 1
    out = [f'<svg class="timeline" width="{LEFT + WIDTH + 20}" height="{height}" '
           f'role="img" aria-label="timeline of {esc(t.key)}">']
    for i, lane in enumerate(t.lanes):
        y = 4 + i * LANE
        out.append(f'<g class="lane" data-agent="{esc(lane.agent)}">'
                   f'<text x="0" y="{y + 13}">{esc(lane.agent)}</text>')
        for seg_start, seg_end, version, text in lane.segments:
            x0 = _x(seg_start, start, span)
            x1 = _x(seg_end or today, start, span)
            color = CURRENT if version == last else EARLIER
            state = "current" if version == last else "earlier"
            until = seg_end.isoformat() if seg_end else "now"
            out.append(f'<rect class="segment {state}" x="{x0:.1f}" y="{y}" '
                       f'width="{max(x1 - x0, 2):.1f}" height="{LANE - 6}" fill="{color}">'
                       f'<title>{esc(lane.agent)}: {esc(text)} '
                       f'({seg_start.isoformat()} to {until})</title></rect>')
        out.append("</g>")
    axis = 4 + len(t.lanes) * LANE
    for day, what in t.entry_dates:
        x = _x(day, start, span)
        out.append(f'<line class="entry-mark" x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{axis}" '
                   f'stroke="#555" stroke-dasharray="2,2"><title>{esc(day.isoformat())}: '
                   f'{esc(what)}</title></line>')
    for day in t.distill_dates:
        x = _x(day, start, span)
        out.append(f'<polygon class="distill-mark" points="{x - 4:.1f},{axis + 12} '
                   f'{x + 4:.1f},{axis + 12} {x:.1f},{axis + 4}" fill="#1565c0">'
                   f'<title>distill {esc(day.isoformat())}</title></polygon>')
    out.append(f'<text x="{LEFT}" y="{axis + 28}">{esc(start.isoformat())}</text>'
               f'<text x="{LEFT + WIDTH - 70}" y="{axis + 28}">{esc(end.isoformat())}</text>')
    out.append("</svg>")
    return "".join(out)


def _table(head: list[str], rows: list[list[Any]]) -> str:
    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{esc(c)}</td>' if isinstance(c, (int, float))
                         else f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{cells}</tr>{body}</table>"


def _fact(t: Timeline, today: dt.date) -> str:
    holders = ", ".join(lane.agent for lane in t.lanes)
    search = esc(f"{t.key} {t.title} {holders}".lower())
    versions = "".join(f"<li>{esc(v)}</li>" for v in t.versions)
    return (f'<div class="fact" data-search="{search}"><h3>{esc(t.title)} '
            f'<span class="key">[{esc(t.key)}]</span></h3>'
            f"<div>{len(t.lanes)} holder(s), {len(t.versions)} version(s):</div>"
            f"<ol>{versions}</ol>{timeline_svg(t, today)}</div>")


def _budgets(data: dict[str, Any]) -> str:
    stats = data["stats"]
    rows = []
    for agent, row in sorted(stats["agents"].items()):
        pct = min(row["use"], 1.0) * 100
        over = " over" if row["use"] > 1 else ""
        bar = (f'<div class="barbox"><div class="bar{over}" style="width:{pct:.0f}%">'
               "</div></div>")
        rows.append(f"<tr><td>{esc(agent)}</td><td class=\"n\">{row['lines']}</td>"
                    f"<td class=\"n\">{row['bytes']}</td><td>{bar}</td>"
                    f"<td class=\"n\">{stats['evicted'].get(agent, 0)}</td></tr>")
    head = (f"<tr><th>agent</th><th>lines (cap {stats['cap']})</th>"
            f"<th>bytes (cap {data['byte_cap']})</th><th>use</th><th>evicted</th></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def page(data: dict[str, Any]) -> str:
    """The whole report page."""
    today: dt.date = data["today"]
    s = data["stats"]
    summary = [
        ["journal entries", s["entries"]], ["distilled topic files", s["topic_files"]],
        ["lines of maintained memory", s["maintained_lines"]],
        ["personal files (agents with MEMORY.md)", s["personal_files"]],
        ["cap (lines per MEMORY.md)", s["cap"]], ["live facts", s["live_facts"]],
        ["evicted by the budget", s["evicted_total"]], ["pending lessons", s["pending"]],
        *[[f"dropped: {k}", v] for k, v in s["dropped"].items()],
        ["open conflicts", len(data["conflicts"])],
        ["entries per maintained line", s["entries_per_line"]],
    ]
    facts = "".join(_fact(t, today) for t in data["timelines"])
    more = (f"<p>… and {data['more_timelines']} more facts.</p>"
            if data["more_timelines"] else "")
    pending = _table(["agent", "lesson", "written", "age (days)"],
                     [[p["agent"], p["title"], p["date"], p["age"]] for p in data["pending"]])
    stale = _table(["key", "why"], [[k, w] for k, w in data["stale"]])
    cited = _table(["key", "what changed"],
                   [[k, "; ".join(w)] for k, w in data.get("cited", [])])
    conflicts = _table(["key", "held by", "possibly corrected by"],
                       [[c["key"], ", ".join(c["agents"]), c["newer"]]
                        for c in data["conflicts"]])
    months = _table(["month", "entries"], [[m, n] for m, n in s["entries_per_month"].items()])
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>journal-mem report: {esc(data['repo'])}</title><style>{CSS}</style></head>",
        f"<body><h1>Team memory: {esc(data['repo'])}</h1>",
        f"<p>Generated by <code>jmem report</code> on {esc(today.isoformat())}; last distill "
        f"{esc(s['distill_date'] or 'never')}.</p>",
        "<h2>The numbers</h2>", _table(["", ""], summary), months,
        "<h2>Facts across agents</h2>",
        "<p>Each fact held by more than one agent or corrected at least once: one lane per "
        "holder, coloured by the version it loaded.<span class=\"legend\">"
        f'<span style="background:{EARLIER}"></span>earlier version'
        f'<span style="background:{CURRENT}"></span>current version</span></p>',
        '<p><input id="filter" placeholder="filter by key, title or agent"></p>',
        facts or "<p>No fact is held by several agents or was corrected yet.</p>", more,
        "<h2>Budgets</h2>", _budgets(data),
        "<h2>Pending lessons</h2>", pending,
        "<h2>Cited code changed</h2>", cited,
        "<h2>Dropped for stale refs</h2>", stale,
        "<h2>Open conflicts</h2>", conflicts,
        f"<script>{SCRIPT}</script></body></html>", ""])
