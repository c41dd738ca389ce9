"""A hand edit of a distilled file, as lessons: the diff between what the distiller wrote
and what is on disk now. Pure: two texts and the live facts in, drafts out.

Claude Code tells an agent with project memory to maintain its `MEMORY.md`
with its own file tools, so such edits happen; they are adopted, not lost:

* a fact line (`MEMORY.md`) or fact section (topic file) whose key is gone:
  a retraction of that key;
* one whose text changed: a lesson with the same key (it supersedes the old
  text for every holder), keeping the fact's other fields;
* anything new (a line, a paragraph, a `##` section): a new lesson, its topic
  from its section (`MEMORY.md`) or the topic file.

An edit that deletes more than a third of a file's facts (and more than
one) is refused: that is an accident (a truncated file), not a decision.
`edit_lessons` serves `jmem distill` in the main checkout and `jmem rescue`
in a linked worktree alike.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from journal_mem.importers.markdown import ITEM, Block, blocks, plain_heading, topic_of
from journal_mem.journal.drafts import Draft, join_body, title_and_body
from journal_mem.journal.fold import Fact, normalise_title
from journal_mem.journal.render import unlinked
from journal_mem.names import MEMORY_MD, NAME, is_name

SOURCE = "hand edit"
_KEYED = re.compile(r"^(?P<text>.*?)(?: \(topics/[a-z0-9-]+\.md\))? "
                    r"\[(?P<key>" + NAME + r")\]$", re.DOTALL)
_PROVENANCE = re.compile(r"^> key `(?P<key>" + NAME + r")`")
PRINCIPLES = "Principles"


@dataclass
class Edit:
    """The lessons one hand edit of one file amounts to."""

    rel: str  # memory-root-relative path of the file
    drafts: list[Draft] = field(default_factory=list)
    added: int = 0
    changed: int = 0
    deleted: int = 0
    facts: int = 0  # facts the distilled file held
    refused: str = ""  # why this edit is not adopted ("" when it is)

    def summary(self) -> str:
        return (f"{self.rel}: hand edit adopted: {self.added} added, {self.changed} changed, "
                f"{self.deleted} retracted")


@dataclass(frozen=True)
class _Piece:
    """A fact of a distilled file (key set) or a new piece of text (key "")."""

    key: str
    title: str
    body: str
    topic: str
    principle: bool = False


def _memory_pieces(text: str) -> list[_Piece]:
    """Keyed fact lines, and every other line on its own (MEMORY.md is line-oriented: a
    note typed under the footer joins its paragraph, but is still a new line)."""
    out = []
    for block in blocks(text):
        section = block.section
        heading = section[1] if section and section[0] >= 2 else ""
        principle = heading == PRINCIPLES
        topic = "general" if principle or not heading else topic_of(heading)
        if block.kind == ITEM:
            match = _KEYED.match(" ".join(block.text.split()))
            if match:
                out.append(_Piece(match["key"], unlinked(match["text"]), block.detail, topic,
                                  principle))
            else:
                out.append(_Piece("", block.text, block.detail, topic, principle))
            continue
        out += [_Piece("", line.strip(), "", topic, principle)
                for line in block.text.split("\n") if line.strip()]
    return out


def _section_key(group: list[Block]) -> int:
    """The index of the provenance line in a fact section, or -1."""
    for i, block in enumerate(group):
        if block.kind == "quote" and _PROVENANCE.match(block.text):
            return i
    return -1


def _topic_pieces(text: str, topic: str) -> list[_Piece]:
    """Fact sections (keyed by their provenance line) and every other block on its own."""
    out = []
    groups: list[list[Block]] = []
    for block in blocks(text):
        if groups and groups[-1][0].headings == block.headings:
            groups[-1].append(block)
        else:
            groups.append([block])
    for group in groups:
        section = group[0].section
        at = _section_key(group) if section and section[0] >= 2 else -1
        if section is not None and section[0] >= 2 and at < 0:  # a new section by hand
            out.append(_Piece("", section[1], join_body(*map(_as_markdown, group)), topic))
            continue
        if at >= 0:
            match = _PROVENANCE.match(group[at].text)
            assert match is not None and section is not None
            out.append(_Piece(match["key"], section[1],
                              join_body(*map(_as_markdown, group[:at])), topic))
        out += [_Piece("", _as_markdown(b), "", topic) for b in group[at + 1:]]
    return out


def _as_markdown(block: Block) -> str:
    if block.kind != ITEM:
        return block.text
    nested = "\n".join("  " + line if line else "" for line in block.detail.split("\n"))
    return f"- {block.text}" + (f"\n{nested}" if block.detail else "")


def pieces(rel: str, text: str) -> list[_Piece]:
    """The facts and loose text of a distilled file (`rel` says which kind it is)."""
    parts = rel.split("/")
    if parts[-1] == MEMORY_MD:
        return _memory_pieces(text)
    stem = parts[-1][:-3] if parts[-1].endswith(".md") else parts[-1]
    return _topic_pieces(text, stem if is_name(stem) else "general")


def retraction(agent: str, key: str, title: str, topic: str, source: str,
               now: dt.datetime) -> Draft:
    """A lesson retracting `key`. It expires the day before it is written, so it never
    shows up as a fact itself; the retraction stays in the journal."""
    note, _ = title_and_body(f"Retracted by hand: {title}")
    return Draft(agent=agent, topic=topic, title=note, type="episodic", created=now,
                 source=source, key=f"retract-{key}"[:64].rstrip("-"), retracts=(key,),
                 valid_until=(now.date() - dt.timedelta(days=1)).isoformat(),
                 where=source)


def _changed(agent: str, fact: Fact, piece: _Piece, memory_md: bool, source: str,
             now: dt.datetime) -> Draft:
    title, extra = title_and_body(piece.title)
    body = fact.body if memory_md else join_body(extra, piece.body)
    if memory_md and extra:
        body = join_body(extra, fact.body)
    return Draft(agent=agent, topic=fact.topic, title=title, body=body, type=fact.type,
                 created=now, source=source, key=fact.key, confidence=fact.confidence,
                 importance=fact.importance, tags=fact.tags, refs=fact.refs, replaces=True,
                 where=source)


def edit_lessons(agent: str, rel: str, base: str, edited: str, facts: dict[str, Fact],
                 now: dt.datetime) -> Edit:
    """The lessons that turn `base` (what the distiller wrote) into `edited` (on disk)."""
    edit = Edit(rel)
    source = f"{SOURCE}: {rel}"
    before = pieces(rel, base)
    after = pieces(rel, edited)
    old = {p.key: p for p in before if p.key}
    new = {p.key: p for p in after if p.key}
    loose = {(p.title, p.body) for p in before if not p.key}
    edit.facts = len(old)
    memory_md = rel.endswith(MEMORY_MD)
    gone = sorted(set(old) - set(new))
    if len(gone) > 1 and len(gone) * 3 > len(old):
        edit.deleted = len(gone)
        edit.refused = (f"{rel}: a hand edit deletes {len(gone)} of its {len(old)} facts; "
                        "more than a third at once looks like an accident, not a decision")
        return edit
    for key in gone:
        fact = facts.get(key)
        title = fact.title if fact else old[key].title
        edit.drafts.append(retraction(agent, key, title, fact.topic if fact else
                                      old[key].topic, source, now))
        edit.deleted += 1
    for key, piece in new.items():
        was = old.get(key)
        fact = facts.get(key)
        if was is None or (was.title, was.body) == (piece.title, piece.body) or fact is None:
            continue
        edit.drafts.append(_changed(agent, fact, piece, memory_md, source, now))
        edit.changed += 1
    shown = {normalise_title(p.title) for p in before if p.key}
    for piece in after:
        if (piece.key and piece.key in old) or (not piece.key and (piece.title, piece.body)
                                                in loose):
            continue
        if not piece.key and normalise_title(piece.title) in shown:
            continue  # a fact line copied without its key: the fact is there already
        title, extra = title_and_body(plain_heading(piece.title))
        edit.drafts.append(Draft(
            agent=agent, topic=piece.topic, title=title, body=join_body(extra, piece.body),
            type="principle" if piece.principle else "semantic", created=now, source=source,
            key=piece.key, where=source))
        edit.added += 1
    return edit
