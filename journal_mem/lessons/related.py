"""Live facts a new lesson probably corrects, and keys it would silently take over.

An agent that learns a fact is wrong writes what it learned, rarely the key
of the fact it corrects; the wrong fact then stays live for every other
holder. `write` therefore looks up the live facts most like the new lesson
(the recall index's candidates, rescored by `model.similar.similarity`,
same topic first) and names them with their holders and the exact
`--supersedes KEY`. Measured on fixtures/corrections.py (bench/bench_related.py):
see the README, "Corrections without the key".
"""

from __future__ import annotations

from journal_mem.journal.entry import Entry
from journal_mem.journal.similar import MIN_SCORE, normalise_title, similarity
from journal_mem.recall.query import by_key, candidates
from journal_mem.repo import Context
from journal_mem.tuples import NamedTuple

LIMIT = 3


class Related(NamedTuple):
    """A live fact the new lesson may correct."""

    key: str
    title: str
    agents: tuple[str, ...]
    score: float

    def as_json(self) -> dict[str, object]:
        return {"key": self.key, "title": self.title, "agents": list(self.agents),
                "score": round(self.score, 3)}


def related(ctx: Context, entry: Entry) -> list[Related]:
    """At most three live facts `entry` probably corrects, best first; [] when none is close.

    Facts it already supersedes or retracts, and its own key, are settled and left out.
    """
    settled = {entry.key, *entry.supersedes, *entry.retracts}

    found = []
    for hit in candidates(ctx, f"{entry.title} {entry.body}"):
        if hit.key in settled:
            continue
        score = similarity(entry, hit)
        if score >= MIN_SCORE:
            found.append(Related(hit.key, hit.title, hit.agents, score))
    found.sort(key=lambda r: (-r.score, r.key))
    return found[:LIMIT]


def describe(found: list[Related]) -> list[str]:
    """Lines for stderr: the likely facts and the exact option to correct one."""
    if not found:
        return []
    lines = ["jmem: live facts this lesson may correct (if it does, write it again with "
             "--supersedes KEY, or it stays live for their holders):"]
    for item in found:
        lines.append(f"  [{item.key}] {item.title} (held by {', '.join(item.agents)}; "
                     f"--supersedes {item.key})")
    return lines


def key_clash(ctx: Context, entry: Entry) -> str | None:
    """Why a default key must not be used: a live fact of another agent holds it with
    another title (the slug merged two different lessons). None when it is free or the same."""

    hit = by_key(ctx, entry.key)
    if hit is None or entry.agent in hit.agents:
        return None
    if normalise_title(hit.title) == normalise_title(entry.title):
        return None
    return (f"key: {entry.key!r} already names another fact, {hit.title!r} "
            f"(held by {', '.join(hit.agents)}); this lesson would replace it for them")
