"""Live facts a new lesson probably corrects, and keys it would silently take over.

An agent that learns a fact is wrong writes what it learned, rarely the key
of the fact it corrects; the wrong fact then stays live for every other
holder. `write` therefore looks up the live facts most like the new lesson
(the recall index's candidates, rescored by the share of content words they
share, same topic first) and names them with their holders and the exact
`--supersedes KEY`. Measured on fixtures/corrections.py (bench/bench_related.py):
see the README, "Corrections without the key".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from journal_mem.model.entry import Entry
from journal_mem.model.fold import normalise_title
from journal_mem.store.context import Context

LIMIT = 3
MIN_SCORE = 0.3  # below it a candidate shares too few words to be worth an agent's attention
SAME_TOPIC_BONUS = 0.1
_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    "a an and are as at be by can do does for from how i in is it its of on or should the "
    "this that to use we what when where which who why with you not no never now".split()
)


@dataclass(frozen=True)
class Related:
    """A live fact the new lesson may correct."""

    key: str
    title: str
    agents: tuple[str, ...]
    score: float

    def as_json(self) -> dict[str, object]:
        return {"key": self.key, "title": self.title, "agents": list(self.agents),
                "score": round(self.score, 3)}


def stems(text: str) -> set[str]:
    """Content words cut to 5 letters: "filters"/"filtering" meet, "the" is gone."""
    return {w[:5] for w in (m.lower() for m in _WORD.findall(text))
            if w not in _STOP and len(w) > 1}


def similarity(new: Entry, title: str, body: str, topic: str) -> float:
    """Cosine of the two lessons' stem sets (title words count twice), plus a topic bonus."""
    a = stems(new.title) | stems(new.body)
    b = stems(title) | stems(body)
    if not a or not b:
        return 0.0
    shared = len(a & b) + len(stems(new.title) & stems(title))
    score = shared / math.sqrt(len(a) * len(b)) / 1.5
    return min(score + (SAME_TOPIC_BONUS if topic == new.topic else 0.0), 1.0)


def related(ctx: Context, entry: Entry) -> list[Related]:
    """At most three live facts `entry` probably corrects, best first; [] when none is close.

    Facts it already supersedes or retracts, and its own key, are settled and left out.
    """
    settled = {entry.key, *entry.supersedes, *entry.retracts}
    from journal_mem.commands.recall import candidates

    found = []
    for hit in candidates(ctx, f"{entry.title} {entry.body}"):
        if hit.key in settled:
            continue
        score = similarity(entry, hit.title, hit.body, hit.topic)
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
    from journal_mem.commands.recall import by_key

    hit = by_key(ctx, entry.key)
    if hit is None or entry.agent in hit.agents:
        return None
    if normalise_title(hit.title) == normalise_title(entry.title):
        return None
    return (f"key: {entry.key!r} already names another fact, {hit.title!r} "
            f"(held by {', '.join(hit.agents)}); this lesson would replace it for them")
