"""Markdown memory to lesson drafts: hand-written memory files, CLAUDE.md, retrospectives.

Pure: markdown text in, drafts out (the blocks come from `mdblocks`, which
reads markdown-it-py's token stream). Nothing in a file is dropped: every
list item and paragraph becomes a lesson, or the body of one (a code block,
table or quote joins the lesson before it; nested items join their parent).

* Memory files (`MEMORY.md`, `topics/<topic>.md`): one lesson per item or
  paragraph; a `MEMORY.md` fact's topic is its `##` section, a topic file's
  is the file's name. A topic-file section with no list (a heading and its
  text) is one lesson titled by its heading.
* CLAUDE.md / AGENTS.md: rules (items or paragraphs in a section about rules,
  or worded as one: always, never, must, do not) are `principle`s; the rest
  is `semantic`.
* Retrospectives: only sections about lessons or findings are read; each
  sub-section under one is one `reflective` lesson, else each item or
  paragraph is.

Markdown to blocks: the structure importers read, from markdown-it-py's token stream.

A document becomes a list of top-level blocks, each under the headings that
contain it: a list item (bullet or numbered; its first paragraph is its
text, nested lists and further paragraphs its detail, as written), a
paragraph, or a code, table, quote or HTML block (its source lines). Inline
markdown (links, emphasis) is kept as written: a fact's link stays a link.
"""

from __future__ import annotations

import datetime as dt
import re
import textwrap
from collections.abc import Callable

from journal_mem.journal.drafts import Draft, join_body, title_and_body
from journal_mem.names import is_name, slugify, topic_slug
from journal_mem.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from typing import Any

ITEM = "item"
PARAGRAPH = "paragraph"
HEADING = "heading"  # a `##` (or deeper) heading with nothing under it: a fact by itself
_RAW = {"fence": "code", "code_block": "code", "table_open": "table",
        "blockquote_open": "quote", "html_block": "html"}


class Block(NamedTuple):
    """One top-level piece of a markdown document."""

    kind: str  # item | paragraph | heading | code | table | quote | html
    text: str  # an item's or paragraph's text; the source lines of the others
    detail: str  # an item's nested content (source lines, dedented)
    headings: tuple[tuple[int, str], ...]  # (level, text) of every enclosing heading
    line: int  # 1-based line where the block starts

    @property
    def section(self) -> tuple[int, str] | None:
        """The innermost enclosing heading, or None."""
        return self.headings[-1] if self.headings else None


_PARSER: list[Any] = []


def _parser() -> Any:
    """One parser per process: building one costs ~3 ms, a third of an import's time."""
    if not _PARSER:

        from markdown_it import MarkdownIt  # ~60 ms: only when markdown is read

        _PARSER.append(MarkdownIt("commonmark").enable("table"))
    return _PARSER[0]


def _source(lines: list[str], start: int, end: int) -> str:
    return textwrap.dedent("\n".join(lines[start:end])).strip("\n")


def blocks(text: str) -> list[Block]:
    """Every top-level block of `text`, in document order, with its headings."""
    tokens = _parser().parse(text)
    lines = text.split("\n")
    out: list[Block] = []
    stack: list[tuple[int, str]] = []
    bare: tuple[tuple[tuple[int, str], ...], int] | None = None  # a heading, nothing yet
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.nesting == -1:
            i += 1
            continue
        if tok.type == "heading_open" and tok.markup in ("-", "=") and tok.map \
                and tok.map[1] - tok.map[0] > 2:
            # lines of text over a `---` rule: CommonMark's setext heading, a paragraph as
            # people write it (its words must not vanish into a topic name)
            out.append(Block(PARAGRAPH, tokens[i + 1].content, "", tuple(stack),
                             tok.map[0] + 1))
            bare = None
            i += 3
            continue
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
            if bare is not None and bare[0][-1][0] >= level:  # it held nothing at all
                out.append(Block(HEADING, bare[0][-1][1], "", bare[0], bare[1]))
            stack = [h for h in stack if h[0] < level]
            stack.append((level, tokens[i + 1].content.strip()))
            bare = (tuple(stack), tok.map[0] + 1 if tok.map else 0) if level >= 2 else None
            i += 1
            continue
        bare = None
        if tok.type == "paragraph_open":
            out.append(Block(PARAGRAPH, tokens[i + 1].content, "", tuple(stack),
                             tok.map[0] + 1 if tok.map else 0))
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            i = _items(tokens, i, lines, tuple(stack), out)
            continue
        elif tok.type in _RAW and tok.map:
            out.append(Block(_RAW[tok.type], _source(lines, *tok.map), "", tuple(stack),
                             tok.map[0] + 1))
        i += 1
    if bare is not None:
        out.append(Block(HEADING, bare[0][-1][1], "", bare[0], bare[1]))
    return out


def _items(tokens: list[Any], i: int, lines: list[str], headings: tuple[tuple[int, str], ...],
           out: list[Block]) -> int:
    """Append a block per item of the list opening at `tokens[i]`; return the index after it."""
    depth = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
            if depth == 0:
                return i + 1
        elif tok.type == "list_item_open" and depth == 1 and tok.map:
            out.append(_item(tokens, i, lines, headings))
        i += 1
    return i


def _item(tokens: list[Any], i: int, lines: list[str],
          headings: tuple[tuple[int, str], ...]) -> Block:
    """One list item: its first paragraph is the text, everything after it the detail."""
    start, end = tokens[i].map
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is not None and nxt.type == "paragraph_open" and nxt.map:
        text = tokens[i + 2].content
        detail = _source(lines, nxt.map[1], end)
    else:  # an item starting with a code block or a nested list: keep it all as text
        text = _source(lines, start, end).lstrip("-*+0123456789.) \t")
        detail = ""
    return Block(ITEM, text, detail, headings, start + 1)


def headings(text: str) -> list[tuple[int, str]]:
    """(level, text) of every heading of `text`, in order."""
    tokens = _parser().parse(text)
    return [(int(t.tag[1:]), tokens[i + 1].content.strip()) for i, t in enumerate(tokens)
            if t.type == "heading_open"]


def plain_heading(text: str) -> str:
    """A heading's text without a trailing `(YYYY-MM-DD)` date."""

    return re.sub(r"\s*\(\d{4}-\d{2}-\d{2}\)\s*$", "", text).strip()


DEFAULT_TOPIC = "general"
_RULE_SECTION = re.compile(
    r"\b(rules?|conventions?|guidelines?|musts?|never|always|don'?t|do not|requirements?|"
    r"polic(y|ies)|constraints?|principles?)\b", re.IGNORECASE)
_RULE_TEXT = re.compile(
    r"^\W*(always|never|must|do not|don'?t|avoid|only|prefer)\b|\b(MUST|NEVER|ALWAYS)\b",
    re.IGNORECASE)
_LESSON_SECTION = re.compile(
    r"\b(lessons?|learn(ed|ings?)?|findings?|takeaways?|insights?|what went|went (well|wrong)|"
    r"improve(ments?)?|action items?|recommendations?|root causes?)\b", re.IGNORECASE)
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")


class Origin(NamedTuple):
    """Where the drafts come from: writer, who else holds them, provenance, date."""

    agent: str
    source: str  # e.g. "import memory: .claude/agent-memory/api/MEMORY.md@1a2b3c4"
    created: dt.datetime | None = None
    applies_to: tuple[str, ...] = ()


def topic_of(heading: str, default: str = DEFAULT_TOPIC) -> str:
    """A topic name from a heading's text, or `default`: a heading that is a topic name
    already (the distiller's `## topic · topics/topic.md`) is that topic; any other its
    short slug (`names.topic_slug`)."""
    text = plain_heading(heading.split("·")[0]).strip()
    if is_name(text):
        return text
    slug = topic_slug(text)
    return slug if is_name(slug) else default


_TASK_RE = re.compile(r"^\\?\[([ xX])\\?\]\s+")  # a task list's box: markup, not words
_NEGATION_RE = re.compile(r"^\W*(?:do\s+not|don'?t|never|avoid|no|not)\b", re.IGNORECASE)


def fact_text(text: str) -> str:
    """An item's text as a fact says it: a task list's `[x]` box dropped, an open `[ ]`
    said in words ("To do: …": an unchecked item is not yet true)."""
    return _TASK_RE.sub(lambda m: "" if m[1] in "xX" else OPEN_TASK, text, count=1)


OPEN_TASK = "To do: "


def _draft(origin: Origin, topic: str, text: str, detail: str, block: Block,
           kind: str = "semantic") -> Draft:
    title, body = title_and_body(fact_text(text) if block.kind == ITEM else text)
    return Draft(agent=origin.agent, topic=topic, title=title, body=join_body(body, detail),
                 type=kind, created=origin.created, source=f"{origin.source}, line {block.line}",
                 applies_to=origin.applies_to, where=f"line {block.line}")


def _attach(drafts: list[Draft], block: Block) -> bool:
    """Add a code/table/quote block to the body of the lesson just before it."""
    if not drafts or block.kind in (ITEM, PARAGRAPH):
        return False
    last = drafts[-1]
    drafts[-1] = last._replace(body=join_body(last.body, block.text))
    return True


def lead_in(group: list[Block], at: int) -> str | None:
    """The words that lead the list an item belongs to, when they carry its meaning: a
    line ending in `:` just before the list ("Never do these:"), else a heading that
    negates ("## Do NOT do these"). An item under it says nothing without them."""
    block = group[at]
    if block.kind != ITEM:
        return None
    first = at
    while first > 0 and group[first - 1].kind == ITEM:
        first -= 1
    before = group[first - 1] if first > 0 else None
    if before is not None and before.kind == PARAGRAPH and _leads(before):
        return " ".join(before.text.split())
    section = block.section
    if section is not None and _NEGATION_RE.match(plain_heading(section[1])):
        return plain_heading(section[1]).rstrip(":") + ":"
    return None


def _leads(block: Block) -> bool:
    """A short paragraph ending in `:` (a list's lead-in, not a fact of its own)."""
    text = " ".join(block.text.split())
    return text.endswith(":") and len(text) <= 120 and "\n" not in block.text.strip()


def _fact(origin: Origin, group: list[Block], at: int, topic: str, kind: str) -> Draft | None:
    """The lesson of `group[at]`: an item said with its list's lead-in; None for the lead-in
    itself (each item carries it); a heading with nothing under it is a fact by itself."""
    block = group[at]
    if block.kind == PARAGRAPH and _leads(block) and at + 1 < len(group) \
            and group[at + 1].kind == ITEM:
        return None
    if block.kind == HEADING:
        return _draft(origin, topic, plain_heading(block.text), "", block, kind)
    lead = lead_in(group, at)
    text = fact_text(block.text)
    said = f"{lead} {text}" if lead else text
    return _draft(origin, topic, said, block.detail, block._replace(kind=PARAGRAPH), kind)


def _per_block(origin: Origin, group: list[Block], topic: str, kind_of: KindOf) -> list[Draft]:
    """One lesson per item or paragraph (an item with its list's lead-in); other blocks
    join the lesson before them, or make one titled by their section when none is."""
    out: list[Draft] = []
    for at, block in enumerate(group):
        if _attach(out, block):
            continue
        if block.kind not in (ITEM, PARAGRAPH, HEADING):
            out.append(_alone(origin, block, topic, kind_of(block)))
            continue
        nested = _led_items(block)
        if nested:  # "1. **Theme packaging**:" over its own list: each item, led
            out += _per_block(origin, nested, topic, kind_of)
            continue
        draft = _fact(origin, group, at, topic, kind_of(_said(group, at)))
        if draft is not None:
            out.append(draft)
    return out


def _led_items(block: Block) -> list[Block]:
    """The nested items of a list item that only leads them (its text a short `X:`, its
    content a list), each said with that lead ("**Theme packaging**: Themes ship as …");
    [] for any other block."""
    text = " ".join(fact_text(block.text).split())
    if block.kind != ITEM or not text.endswith(":") or len(text) > 120 or \
            not block.detail.strip():
        return []
    inner = blocks(block.detail)
    if not inner or inner[0].kind != ITEM:
        return []
    return [b._replace(text=f"{text} {b.text}" if b.kind == ITEM else b.text,
                    headings=block.headings, line=block.line + b.line) for b in inner]


def _said(group: list[Block], at: int) -> Block:
    """The block as the rule finder should read it: with its lead-in."""
    lead = lead_in(group, at)
    block = group[at]
    return block._replace(text=f"{lead} {block.text}") if lead else block


def _alone(origin: Origin, block: Block, topic: str, kind: str) -> Draft:
    """A code block, table or quote with no fact before it in its section: a fact titled
    by the section's heading (else by its first line of words), the block its body."""
    heading = plain_heading(block.section[1]) if block.section else ""
    words = next((line.strip() for line in block.text.split("\n")
                  if re.search(r"\w", line) and not line.lstrip().startswith(("```", "~~~"))),
                 block.kind)
    title, extra = title_and_body(heading or words)
    return Draft(agent=origin.agent, topic=topic, title=title, body=join_body(extra, block.text),
                 type=kind, created=origin.created, source=f"{origin.source}, line {block.line}",
                 applies_to=origin.applies_to, where=f"line {block.line}")


def _whole(origin: Origin, group: list[Block], topic: str, kind: str) -> Draft:
    """A section with no list: one lesson titled by its heading, its text the body."""
    assert group[0].section is not None
    title, extra = title_and_body(plain_heading(group[0].section[1]))
    body = join_body(extra, *(_as_text(b) for b in group))
    return Draft(agent=origin.agent, topic=topic, title=title, body=body, type=kind,
                 created=origin.created, source=f"{origin.source}, line {group[0].line}",
                 applies_to=origin.applies_to, where=f"line {group[0].line}")


def _as_text(block: Block) -> str:
    """A block as markdown again: an item keeps its bullet and its nested detail."""
    if block.kind != ITEM:
        return block.text
    nested = "\n".join("  " + line if line else "" for line in block.detail.split("\n"))
    return f"- {block.text}" + (f"\n{nested}" if block.detail else "")


class KindOf:
    """The lesson type of a block (a callable, so every importer can decide its own)."""

    def __init__(self, rules: bool = False) -> None:
        self.rules = rules

    def __call__(self, block: Block) -> str:
        if not self.rules:
            return "semantic"
        ruled = any(_RULE_SECTION.search(h) for _, h in block.headings)
        return "principle" if ruled or _RULE_TEXT.search(block.text) else "semantic"


def _sections(items: list[Block]) -> list[list[Block]]:
    """Consecutive blocks under the same headings."""
    groups: list[list[Block]] = []
    for block in items:
        if groups and groups[-1][0].headings == block.headings:
            groups[-1].append(block)
        else:
            groups.append([block])
    return groups


def _section_topic(block: Block, default: str) -> str:
    outer = [h for level, h in block.headings if level >= 2]
    return topic_of(outer[0], default) if outer else default


_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)
_PLACEHOLDER_RE = re.compile(
    r"(?i)^[\s_*(\[-]*(?:(?:none|nothing)(?: else)? yet\b[^\n]{0,80}"
    r"|no (?:active |current )?[\w -]{0,40}(?:entries|items|notes|memories|lessons|findings)"
    r"(?: yet)?[.\s_*)\]]*|(?:tbd|todo|empty|none|n/a)[.\s_*)\]]*)$")
_LINK_RE = re.compile(r"^\s*(\*\*|__)?\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)(\*\*|__)?")
_HOOK_LEAD_RE = re.compile(r"^\s*(?:—|–|--|-|:)?\s*")
Resolver = Callable[[str], bool]  # an index link's target -> the file exists


def drop_comments(text: str) -> str:
    """`text` without HTML comments outside code fences (each becomes as many blank lines,
    so line numbers stay): a comment is hidden when rendered, it never held a fact."""
    parts = _FENCE_RE.split(text)
    out, fenced, i = [], False, 0
    while i < len(parts):
        part = parts[i]
        if i % 2 == 1:  # a fence marker
            out.append(part)
            fenced = not fenced
        elif fenced:
            out.append(part)
        else:
            out.append(_COMMENT_RE.sub(lambda m: "\n" * m.group().count("\n"), part))
        i += 1
    return "".join(out)


def is_placeholder(text: str) -> bool:
    """"No active feedback entries.", "(none yet — add … here)", "_Nothing else yet._": a
    line holding a place for memory, not a fact."""
    return _PLACEHOLDER_RE.match(" ".join(text.split())) is not None


def index_link(text: str) -> tuple[str, str, str] | None:
    """(link text, target, the hook after the link) of an index line
    `[Title](file.md) — hook` (bold links too), or None for any other text."""
    match = _LINK_RE.match(text)
    if match is None or "://" in match.group("target") or match.group("target").startswith("#"):
        return None
    hook = _HOOK_LEAD_RE.sub("", text[match.end():], count=1).strip()
    return match.group("text"), match.group("target"), hook


def _index_draft(origin: Origin, topic: str, block: Block, exists: Resolver) -> Draft | None:
    """An index line: None when its file exists (the file is the memory; an item nested
    under it is kept with the link's text as its title); else the memory the line names."""
    found = index_link(block.text)
    assert found is not None
    label, target, hook = found
    stem = target.rsplit("/", 1)[-1].removesuffix(".md")
    if exists(target):
        if not block.detail.strip():
            return None
        return _draft(origin, topic, label, block.detail, block)
    kind = native_type(stem.split("_", 1)[0]) if "_" in stem else None
    draft = _draft(origin, topic, label, hook, block)
    key = slugify(stem, 64)
    return draft._replace(body=join_body(draft.body, block.detail), key=key if is_name(key)
                   else "", type=kind or "semantic", tags=(stem.split("_", 1)[0],) if kind
                   else ())


NATIVE_TYPES = {"feedback": "procedural", "project": "semantic", "reference": "semantic",
                "user": "semantic"}


def native_type(kind: str | None) -> str | None:
    """Our lesson type for one of Claude Code's memory types (None: not one of them)."""
    return NATIVE_TYPES.get((kind or "").strip().lower())


def memory_drafts(text: str, origin: Origin, topic: str | None = None,
                  index: Resolver | None = None) -> list[Draft]:
    """Lessons from a hand-written `MEMORY.md` (`topic` None) or topic file (`topic`).

    HTML comments and placeholders are not facts. With `index` (a Claude Code index,
    `- [Title](file.md) — hook`), a line whose file exists is skipped (the file is the
    memory) and one whose file does not is the memory it names, keyed by that file.
    """
    out: list[Draft] = []
    plain = KindOf()
    for group in _sections(blocks(drop_comments(text))):
        group = [b for b in group if b.kind != "html" and not (
            b.kind in (ITEM, PARAGRAPH) and not b.detail and is_placeholder(b.text))]
        if not group:
            continue
        section = group[0].section
        if topic is not None and section and section[0] >= 2 and not any(
                b.kind == ITEM for b in group):
            out.append(_whole(origin, group, topic, "semantic"))
            continue
        where = topic or _section_topic(group[0], DEFAULT_TOPIC)
        if index is None:
            out += _per_block(origin, group, where, plain)
            continue
        linked = [b for b in group if b.kind in (ITEM, PARAGRAPH) and index_link(b.text)]
        found = [d for b in linked if (d := _index_draft(origin, where, b, index)) is not None]
        rest = [b for b in group if b not in linked]
        out += found + (_per_block(origin, rest, where, plain) if rest else [])
    return out


def claude_md_drafts(text: str, origin: Origin) -> list[Draft]:
    """Lessons from a CLAUDE.md or AGENTS.md: rules become principles."""
    out: list[Draft] = []
    kinds = KindOf(rules=True)
    for group in _sections(blocks(drop_comments(text))):
        out += _per_block(origin, group, _section_topic(group[0], DEFAULT_TOPIC), kinds)
    return out


def retro_date(name: str, text: str) -> dt.datetime | None:
    """A retrospective's date: from its file name, else from its first heading."""
    match = _DATE.search(name)
    if match is None:
        found = headings(text)
        match = _DATE.search(found[0][1]) if found else None
    if match is None:
        return None
    try:
        day = dt.date.fromisoformat(match.group(1))
    except ValueError:
        return None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def retro_drafts(text: str, origin: Origin, topic: str) -> list[Draft]:
    """Reflective lessons from a retrospective's lesson and finding sections."""
    out: list[Draft] = []
    plain = KindOf()
    for group in _sections(blocks(drop_comments(text))):
        heads = group[0].headings
        marked = [i for i, (_, h) in enumerate(heads) if _LESSON_SECTION.search(h)]
        if not marked:
            continue
        if marked[0] < len(heads) - 1:  # a sub-section under a findings section: one lesson
            out.append(_whole(origin, group, topic, "reflective"))
        else:
            out += [d._replace(type="reflective")
                    for d in _per_block(origin, group, topic, plain)]
    return out
