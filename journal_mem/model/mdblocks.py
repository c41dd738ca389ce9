"""Markdown to blocks: the structure importers read, from markdown-it-py's token stream.

A document becomes a list of top-level blocks, each under the headings that
contain it: a list item (bullet or numbered; its first paragraph is its
text, nested lists and further paragraphs its detail, as written), a
paragraph, or a code, table, quote or HTML block (its source lines). Inline
markdown (links, emphasis) is kept as written: a fact's link stays a link.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

ITEM = "item"
PARAGRAPH = "paragraph"
_RAW = {"fence": "code", "code_block": "code", "table_open": "table",
        "blockquote_open": "quote", "html_block": "html"}


@dataclass(frozen=True)
class Block:
    """One top-level piece of a markdown document."""

    kind: str  # item | paragraph | code | table | quote | html
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
        from markdown_it import MarkdownIt

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
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.nesting == -1:
            i += 1
            continue
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
            stack = [h for h in stack if h[0] < level]
            stack.append((level, tokens[i + 1].content.strip()))
        elif tok.type == "paragraph_open":
            out.append(Block(PARAGRAPH, tokens[i + 1].content, "", tuple(stack),
                             tok.map[0] + 1 if tok.map else 0))
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            i = _items(tokens, i, lines, tuple(stack), out)
            continue
        elif tok.type in _RAW and tok.map:
            out.append(Block(_RAW[tok.type], _source(lines, *tok.map), "", tuple(stack),
                             tok.map[0] + 1))
        i += 1
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
    import re

    return re.sub(r"\s*\(\d{4}-\d{2}-\d{2}\)\s*$", "", text).strip()
