"""Lesson drafts: what an importer read, before it is a validated journal entry.

Every import source (hand-written memory files, CLAUDE.md, retrospectives, a
mem0 export, a jmem snapshot, a hand edit of a distilled file) produces
drafts; `to_entry` validates one exactly as `jmem write` would. Pure: no disk.

A draft's key is derived from its title, so a second import of the same text
finds it already in the journal (idempotent); two different texts whose titles
slug alike get a short content hash appended instead of replacing each other.
"""

from __future__ import annotations

import datetime as dt

from journal_mem.errors import InvalidEntry
from journal_mem.hashes import sha256
from journal_mem.journal.entry import TITLE_MAX, Entry, build, default_key
from journal_mem.journal.validate import Policy, check_built
from journal_mem.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from typing import Any

SOURCE_MAX = 500


class Draft(NamedTuple):
    """One lesson read from somewhere else, with where it came from."""

    agent: str
    topic: str
    title: str
    body: str = ""
    type: str = "semantic"
    created: dt.datetime | None = None
    source: str = ""
    key: str = ""
    confidence: float | None = None
    importance: str | None = None
    tags: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    cited: tuple[str, ...] = ()  # what anchored refs cited, kept across a hand edit
    applies_to: tuple[str, ...] = ()
    valid_until: str | None = None
    retracts: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    drops: tuple[str, ...] = ()
    knew: tuple[str, ...] = ()  # journal entries it was made knowing (`journal/order.py`)
    where: str = ""  # "file:line" for messages; not stored
    replaces: bool = False  # keep the key even when it names another fact (a hand edit)
    # the key is the writer's own name for it (a native memory's `name`): qualified with
    # the agent when another writer holds it (`intake/pipeline.py`)
    per_writer: bool = False

    @property
    def identity(self) -> str:
        """The key this draft will carry."""
        return self.key or default_key(self.title)


def title_and_body(text: str) -> tuple[str, str]:
    """A title (one line, at most 150 characters) and the rest, from a block of text.

    Short text is all title. Longer text keeps its first sentence as the title
    when that fits, else the text cut on a word with `…`; the body then holds
    the whole text, so nothing is lost.
    """
    flat = " ".join(text.split())
    if len(flat) <= TITLE_MAX:
        return flat, ""
    stop = flat.find(". ")
    if 0 < stop < TITLE_MAX:
        return flat[: stop + 1], flat
    cut = flat[: TITLE_MAX - 1]
    if " " in cut[TITLE_MAX // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "…", flat


def join_body(*parts: str) -> str:
    """Non-empty parts separated by a blank line."""
    return "\n\n".join(p.strip("\n") for p in parts if p.strip())


def fingerprint(title: str, body: str) -> str:
    """A short, stable hash of a lesson's text."""
    return sha256(f"{title}\n{body}".encode()).hexdigest()[:8]


def hashed_key(draft: Draft) -> str:
    """The draft's key with its text's hash appended (cut so it stays a valid name)."""
    base = draft.identity[:55].rstrip("-")
    return f"{base}-{fingerprint(draft.title, draft.body)}"


def unique_keys(drafts: list[Draft]) -> list[Draft]:
    """Drafts whose keys differ unless their texts are equal (then they are one fact)."""
    texts: dict[str, set[tuple[str, str]]] = {}
    for d in drafts:
        texts.setdefault(d.identity, set()).add((d.title, d.body))
    out = []
    for d in drafts:
        if len(texts[d.identity]) > 1:
            d = d._replace(key=hashed_key(d))
        elif not d.key:
            d = d._replace(key=d.identity)
        out.append(d)
    return out


def clip_source(text: str) -> str:
    """A `source:` value: one line, at most 500 characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= SOURCE_MAX else flat[: SOURCE_MAX - 1] + "…"


def to_entry(draft: Draft, now: dt.datetime, policy: Policy) -> Entry:
    """The validated entry for `draft` (raises `InvalidEntry` naming the problems),
    judged by `policy` as `write` judges a lesson."""
    fields: dict[str, Any] = {
        "type": draft.type, "key": draft.identity, "source": clip_source(draft.source) or None,
        "confidence": draft.confidence, "importance": draft.importance,
        "tags": list(draft.tags), "refs": list(draft.refs),
        "cited": list(draft.cited), "applies_to": list(draft.applies_to),
        "valid_until": draft.valid_until,
        "retracts": list(draft.retracts), "supersedes": list(draft.supersedes),
        "drops": list(draft.drops), "knew": list(draft.knew),
    }  # fmt: skip
    entry = build(agent=draft.agent, topic=draft.topic, title=draft.title, body=draft.body,
                  created=draft.created or now, entry_bytes=policy.entry_bytes, **fields)
    return check_built(entry, policy)


def problems_of(drafts: list[Draft], now: dt.datetime,
                policy: Policy) -> list[tuple[Draft, str]]:
    """(draft, problem) for every draft that cannot become a valid entry."""
    out = []
    for d in drafts:
        try:
            to_entry(d, now, policy)
        except InvalidEntry as exc:
            out += [(d, p) for p in exc.problems]
    return out
