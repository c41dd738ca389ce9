"""`wake --query`: the topic facts that best answer a question, by word overlap.

Deliberately small and isolated: it reads the main checkout's
`<agent>/topics/*.md` as plain markdown sections (`## <title>`, body, one
provenance line) and will be switched to the `recall` index once that exists.
A confidence is honoured only when the provenance line states one
(`confidence 0.8` or `confidence: 0.8`); a fact without one is kept.
"""

from __future__ import annotations

import os
import re

from journal_mem.layout import TOPICS, Layout

_WORD_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
_CONF_RE = re.compile(r"confidence\W{0,3}([01](?:\.\d+)?)", re.IGNORECASE)
_KEY_RE = re.compile(r"(?:\bkey\W{0,3}|\[)([a-z0-9][a-z0-9-]{0,63})\b")
_STOP = frozenset({"a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for",
                   "from", "how", "i", "in", "is", "it", "of", "on", "or", "the", "to",
                   "what", "when", "where", "which", "who", "why", "with"})
BODY_CHARS = 240


class Fact:
    """One `## ` section of a topic file, scored against a query."""

    __slots__ = ("body", "confidence", "detail", "key", "score", "source", "title")

    def __init__(self, title: str, body: str, source: str) -> None:
        self.title = title
        self.body = body
        self.source = source
        conf = _CONF_RE.search(body)
        self.confidence = float(conf.group(1)) if conf else None
        prov = _provenance(body)
        key = _KEY_RE.search(prov)
        self.key = key.group(1) if key else ""
        # what the pack shows: the body without its provenance line
        self.detail = body.rsplit(prov, 1)[0] if (key or conf) and prov else body
        self.score = 0.0

    def line(self) -> str:
        """The fact as one pack line: title, a short body, where it comes from."""
        text = " ".join(self.detail.split())
        if len(text) > BODY_CHARS:
            text = text[: BODY_CHARS - 1].rsplit(" ", 1)[0] + "…"
        key = f" [{self.key}]" if self.key else ""
        return f"- {self.title}{key}: {text} ({self.source})"


def words(text: str) -> set[str]:
    """Lower-case content words of `text`."""
    return {w for w in _WORD_RE.findall(text.lower()) if w not in _STOP}


def best_facts(layout: Layout, agent: str, query: str, min_confidence: float,
               limit: int = 10) -> list[Fact]:
    """The facts of `agent`'s topic files sharing most words with `query`, best first."""
    wanted = words(query)
    found: list[Fact] = []
    for fact in _facts(layout, agent):
        if fact.confidence is not None and fact.confidence < min_confidence:
            continue
        title_hits = len(wanted & words(fact.title))
        body_hits = len(wanted & words(fact.body))
        fact.score = 2 * title_hits + body_hits
        if fact.score:
            found.append(fact)
    found.sort(key=lambda f: (-f.score, -(f.confidence or 0), f.title))
    return found[:limit]


def _facts(layout: Layout, agent: str) -> list[Fact]:
    folder = os.path.join(layout.agent_dir(agent), TOPICS)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))
    except (FileNotFoundError, NotADirectoryError):
        return []
    facts: list[Fact] = []
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
            facts += _sections(fh.read(), f"{agent}/{TOPICS}/{name}")
    return facts


def _sections(text: str, source: str) -> list[Fact]:
    facts: list[Fact] = []
    title, body = "", list[str]()
    for line in [*text.split("\n"), "## "]:
        if line.startswith("## "):
            if title:
                facts.append(Fact(title, "\n".join(body).strip(), source))
            title, body = line[3:].strip(), []
        elif title:
            body.append(line)
    return facts


def _provenance(body: str) -> str:
    """The provenance line: the last non-empty line of a section."""
    lines = [x for x in body.split("\n") if x.strip()]
    return lines[-1] if lines else ""
