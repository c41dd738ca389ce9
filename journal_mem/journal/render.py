"""Facts to distilled files: pure, deterministic bytes, never over budget.

See docs/DESIGN.md, "Distilled files".

Per agent: the topic files (`render_topic`: each fact in at most three
lines, best-ranked first; a fact with no room is evicted, and the topic file,
`MEMORY.md`'s last line, the distill report and `jmem status` count it). `MEMORY.md` holds
a short header, the principles, then one line per fact grouped by topic,
each ending with its key in brackets, up to the line, byte and line-length
budgets; what does not fit stays in its topic file. Every line is checked
against the budget by construction.

Nothing a lesson says may leave its place: titles and bodies are one line
each, a body that starts like Markdown block syntax is escaped, and `<!--`
is written so that no renderer hides what follows (docs/DESIGN.md,
"Distilled files").

One agent's topic files: each fact in at most three lines, best-ranked first.

See docs/DESIGN.md, "Distilled files". `topics/<topic>.md` holds each fact's
title, its body on one line cut at 240 characters with a pointer to the entry,
and one provenance line citing the entry, up to `budget.topic_lines`. A fuller
topic goes on in `<topic>-2.md`, `<topic>-3.md`… up to `TOPIC_PARTS` files;
only past that is a fact evicted (it stays in the journal). `inline` keeps a
lesson's text on its line: a body that starts like Markdown block syntax is
escaped, and `<!--` is written so that no renderer hides what follows.
"""

from __future__ import annotations

import datetime as dt
import itertools
import operator
import os
import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from journal_mem.hashes import blake2b
from journal_mem.journal import anchor as anchor_source
from journal_mem.journal import entry as entry_source
from journal_mem.journal.anchor import CodeChange
from journal_mem.journal.entry import CODE_SPAN_RE
from journal_mem.journal.fold import Fact, FactRow, Fold, fact_row, ranked, ranked_since
from journal_mem.journal.similar import OUTDATED_KEY_ONLY, OUTDATED_MARK, stems
from journal_mem.names import MEMORY_MD, TOPICS
from journal_mem.schema import Budget
from journal_mem.tuples import NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable

ELLIPSIS = "…"
BODY_CHARS = 240  # a topic file keeps this much of a body; the entry has the rest
TOPIC_PARTS = 5  # files per topic (`t.md`, `t-2.md`…) before facts are evicted
_BLOCK_START = ("#", ">", "-", "*", "+", "=", "|", "<", "`", "~", "[", "]", "!", "_")


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending in `…` when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def clip_middle(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters in its middle (`…`): a lesson's title
    often ends in what it says (the new value, the new name), so its end stays too."""
    if len(text) <= limit or limit < 16:
        return clip(text, limit)
    tail = (limit - 1) // 2
    head = text[: limit - 1 - tail].rstrip()
    return head + ELLIPSIS + text[len(text) - tail:].lstrip()


def clip_news(text: str, limit: int, old: str) -> str:
    """`text` (a correction's title) cut to at most `limit` characters around a word the
    older fact (`old`) never says (the first with a digit, else the last): what the
    correction changes (the new value, the new name) is what its holder must see;
    `clip_middle` when no word is new."""
    if len(text) <= limit:
        return text
    said = stems(old)
    words = text.split(" ")
    fresh = [i for i, w in enumerate(words) if stems(w) - said]
    if not fresh:
        return clip_middle(text, limit)
    lo = hi = next((i for i in fresh if any(c.isdigit() for c in words[i])), fresh[-1])

    def size(a: int, b: int) -> int:
        return len(" ".join(words[a:b + 1])) + (a > 0) + (b < len(words) - 1)

    if size(lo, hi) > limit:
        return clip_middle(text, limit)
    grown = True
    while grown:
        grown = False
        for a, b in ((lo, hi + 1), (lo - 1, hi)):
            if a >= 0 and b < len(words) and size(a, b) <= limit:
                lo, hi, grown = a, b, True
    return ((ELLIPSIS if lo > 0 else "") + " ".join(words[lo:hi + 1])
            + (ELLIPSIS if hi < len(words) - 1 else ""))


def _date(fact: Fact) -> str:

    return fact.created.astimezone(dt.UTC).date().isoformat()


def _unhidden(line: str) -> str:
    """`line` with every `<!--` and `-->` outside code spans escaped: they cannot open or
    close an HTML comment that would hide what follows when rendered."""
    if "<!--" not in line and "-->" not in line:
        return line
    out, at = [], 0
    for span in CODE_SPAN_RE.finditer(line):
        out.append(line[at:span.start()].replace("<!--", "<\\!--").replace("-->", "--\\>"))
        out.append(span.group())
        at = span.end()
    out.append(line[at:].replace("<!--", "<\\!--").replace("-->", "--\\>"))
    return "".join(out)


def inline(text: str) -> str:
    """One line of lesson text that cannot open a Markdown block or hide what follows."""
    line = _unhidden(" ".join(text.split()))
    if line.startswith(_BLOCK_START) or line[:1].isdigit():
        line = "\\" + line
    return line


_PARSER: list[Any] = []
# a Markdown escape of punctuation other than brackets and backslash, kept as written; or
# a bracket or backslash, escaped
_LINK_TEXT_RE = re.compile(r"(\\[!-/:-@^-`{-~])|([\\\[\]])")


# what commonmark's inline syntax starts with: a line without any is shown as written
_MARKUP_RE = re.compile(r"[\\`*_\[\]<>!&]")
# ASCII a heading's id drops (of lower case text: `-`, `_`, space, letters and digits stay)
_ASCII_DROP = {c: None for c in range(128)
               if not (chr(c) in "-_ " or chr(c).isdigit() or "a" <= chr(c) <= "z")}


def _text_of(markdown: str) -> str:
    """The text a renderer shows for one line of inline markdown (emphasis, code and link
    markup gone, escapes resolved)."""
    if _MARKUP_RE.search(markdown) is None:
        return markdown
    if not _PARSER:
        from markdown_it import MarkdownIt  # ~25 ms: only for a heading with markup

        _PARSER.append(MarkdownIt("commonmark"))
    out: list[str] = []
    for block in _PARSER[0].parseInline(markdown):
        for tok in block.children or ():
            if tok.type in ("text", "code_inline", "html_inline") or tok.type == "image":
                out.append(tok.content)
    return "".join(out)


def anchor(heading_markdown: str, taken: set[str]) -> str:
    """The id GitHub gives a heading (lower case; letters, digits, marks, `-`, `_` kept,
    spaces as `-`; `-1`, `-2`… for a repeat in the same file), added to `taken`."""
    return _unique(slug_of(heading_markdown), taken)


def slug_of(heading_markdown: str) -> str:
    """A heading's id before `anchor` tells it from a repeat in its file."""
    text = _text_of(heading_markdown).strip().lower()
    if text.isascii():
        slug = text.translate(_ASCII_DROP)
    else:
        slug = "".join(c for c in text if c in "-_ " or unicodedata.category(c)[0] in "LNM")
    return slug.replace(" ", "-")


def _unique(slug: str, taken: set[str]) -> str:
    """`slug`, or the first of `slug-1`, `slug-2`… not in `taken`; added to it."""
    name, n = slug, 0
    while name in taken:
        n += 1
        name = f"{slug}-{n}"
    taken.add(name)
    return name


def link_text(title: str) -> str:
    """A title as a link's text: one line, brackets and backslashes escaped so the link
    holds (`unlinked` undoes it), emphasis, code and a title's own escapes (`\\*`) as
    written, `<!--` unable to hide what follows."""
    line = " ".join(title.split())
    # the pattern matches at a backslash or a bracket only: most titles have neither, and
    # `sub` with its callback cost ~5 us a line (a distill of 10k lessons makes ~2.5k)
    if "\\" in line or "[" in line or "]" in line:
        line = _LINK_TEXT_RE.sub(_link_escape, line)
    return _unhidden(line)


def _link_escape(match: re.Match[str]) -> str:
    return match[1] or "\\" + match[2]


# `[title](topics/t.md#anchor)`: the link `fact_line` wraps a title in
_LINKED_RE = re.compile(r"^\[(?P<text>(?:\\.|[^\\\]])*)\]\(topics/[^()\s]*\)$", re.DOTALL)
_UNESCAPE_RE = re.compile(r"\\([\\\[\]])")


def unlinked(text: str) -> str:
    """A fact line's text without the link `fact_line` wrapped its title in (the title as
    written); any other text as it is."""
    match = _LINKED_RE.match(text.strip())
    return _UNESCAPE_RE.sub(r"\1", match["text"]) if match else text


def provenance(fact: Fact) -> str:
    """The one line that says where a fact comes from."""
    line = (f"> key `{fact.key}` · {fact.type} · confidence {fact.confidence:g} · "
            f"{fact.importance} · {_date(fact)} · entry {fact.path}")
    if fact.source:
        line += f" · source {inline(fact.source)}"
    return line


def fact_block(fact: Fact, code: list[CodeChange] | None = None) -> list[str]:
    """A fact as it appears in a topic file: title, body on one line, provenance (which
    ends with every change of the code it cites)."""
    lines = [f"## {inline(fact.title)}"]
    if fact.body.strip():
        body = inline(fact.body)
        if len(body) > BODY_CHARS:
            body = clip(body, BODY_CHARS) + " (more in its entry)"
        lines.append(body)
    changes = "".join(f" · {inline(change.text())}" for change in code or ())
    return [*lines, provenance(fact) + changes]


def part_name(topic: str, index: int, taken: set[str]) -> str:
    """The file of a topic's `index`-th part (0-based): `t`, then `t-2`… not another topic's."""
    if index == 0:
        return topic
    number = index + 1
    while f"{topic}-{number}" in taken:
        number += 1
    return f"{topic}-{number}"


# A fact's block and its heading's id (`slug_of`), made once per render: a fact is in the
# topic files of each of its holders (at 10k lessons 8.4k facts, 22k times).
Blocks = dict[str, tuple[list[str], str]]


def render_topic(
    agent: str, topic: str, facts: list[Fact], max_lines: int, taken: set[str] | None = None,
    code: dict[str, list[CodeChange]] | None = None, blocks: Blocks | None = None,
) -> tuple[list[tuple[str, str]], list[str], dict[str, str]]:
    """A topic's files [(name, text)], the keys with no room, and {key: file name}.

    `facts` are in rank order; each part holds what fits in `max_lines`, up to
    TOPIC_PARTS parts. `taken` are the agent's other topics (no part takes their name).
    `blocks`: the facts' blocks made so far in this render (a key is one fact in it),
    kept for the next topic.
    """
    parts: list[tuple[str, list[str]]] = []
    evicted: list[str] = []
    placed: dict[str, str] = {}
    names = set(taken or ()) - {topic}
    ids: set[str] = set()
    blocks = {} if blocks is None else blocks
    for fact in facts:
        made = blocks.get(fact.key)
        if made is None:
            block = fact_block(fact, (code or {}).get(fact.key))
            made = blocks[fact.key] = (block, slug_of(block[0][3:]))
        block = made[0]
        if not parts or len(parts[-1][1]) + len(block) > max_lines - 1:  # 1: eviction note
            if len(parts) == TOPIC_PARTS or len(block) + 4 > max_lines - 1:
                evicted.append(fact.key)
                continue
            name = part_name(topic, len(parts), names)
            names.add(name)
            head = f"# {topic} ({agent})" + (f", part {len(parts) + 1}" if parts else "")
            ids = set()
            anchor(head[2:], ids)
            parts.append((name, [head, "<!-- Generated by `jmem distill` from the journal. "
                                       "Do not edit: write a lesson. -->", ""]))
        parts[-1][1].extend(block)
        placed[fact.key] = f"{parts[-1][0]}#{_unique(made[1], ids)}"
    if not parts:
        parts.append((topic, [f"# {topic} ({agent})", ""]))
    if evicted:
        parts[-1][1].append(f"{len(evicted)} more facts on this topic are only in the journal "
                            "(`jmem recall`).")
    out = []
    for name, lines in parts:
        while lines and not lines[-1]:
            lines.pop()
        out.append((name, "\n".join(lines) + "\n"))
    return out, evicted, placed


class AgentReport:
    """What one agent's files hold. (The render's records are plain classes and named
    tuples: `dataclasses`, with the `inspect` it imports, cost a distill ~11 ms.)"""

    __slots__ = ("evicted", "in_memory", "in_topics", "parts")

    def __init__(self) -> None:
        self.in_memory = 0  # fact lines in MEMORY.md
        self.in_topics = 0  # facts written into topic files
        self.evicted: list[str] = []  # keys in no file (journal only)
        self.parts: dict[str, list[str]] = {}  # topic -> its file names

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return _REPORT(self) == _REPORT(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mutable value

    def __repr__(self) -> str:
        return ("AgentReport(in_memory={!r}, in_topics={!r}, evicted={!r}, parts={!r})"
                .format(*_REPORT(self)))


_REPORT = operator.attrgetter("in_memory", "in_topics", "evicted", "parts")


# A topic's rendering, with what decides its reuse: the keys of its facts in order (joined
# by NUL), the rest of its input (`_inputs`), its files [(name, stamp)], the keys with no
# room, and the file name#anchor of each key in order ("" for those with no room; joined
# by NUL). Joined, a topic is two strings, not two objects per fact: at 100k lessons the
# cache held 146k keys twice and their places, 23 MB that took ~50 ms to load at each
# distill (9 MB and ~15 ms joined). A file's stamp is how the distill that kept it found it on disk
# (`distill.files.stamp`); for a file changed too recently for its stamp to say (the
# last distill wrote it), the digest of its bytes (`distill.files.digest`); or None. No
# text: a reused file is on disk as it was rendered (its stamp or digest says so), or is
# rendered again (`Again`).
Stamp = tuple[int, ...] | bytes
TopicCache = dict[tuple[str, str], tuple[str, tuple[object, ...],
                                          list[tuple[str, Stamp | None]], list[str], str]]


# An agent's MEMORY.md, with what decides its reuse besides its topics: (the rest of its
# input (`_memory_inputs`), its text, its fact lines). It is reused when every one of the
# agent's topics is (so are its facts, their order and where each is placed) and the
# rest of its input is the same.
MemoryCache = dict[str, tuple[tuple[object, ...], str, int]]
_NO_MEMORY: Mapping[str, tuple[tuple[object, ...], str, int]] = MappingProxyType({})


class Earlier(NamedTuple):
    """An earlier render's topics (`Rendered.topics`) and the facts of the fold they were
    rendered from, as rows (`fold.fact_row`, as `cache.FoldCache` keeps them); `memory`:
    its MEMORY.md files (`Rendered.memory`), when kept with those topics."""

    topics: TopicCache
    rows: dict[str, FactRow]
    # the keys of the facts being rendered whose row differs from theirs in `rows` (or
    # that `rows` lacks), when the caller compared them already (`cache.changed_rows`);
    # else the render compares
    changed: set[str] | None = None
    memory: Mapping[str, tuple[tuple[object, ...], str, int]] = _NO_MEMORY
    # the keys of the facts of `rows` in rank order, NUL-joined (`Rendered.order`), when
    # kept with them (`cache.FoldCache.order_of`): the facts being rendered are ranked
    # by putting those that changed among them (`fold.ranked_since`)
    order: str | None = None


def code_key() -> str:
    """What the reuse of a rendering also depends on: the code that renders it (this
    module and the ones its text comes from), so that another version never reuses one."""
    if not _CODE_KEY:
        digest = blake2b(digest_size=16)
        try:
            for module in (__file__, anchor_source.__file__, entry_source.__file__):
                with open(module or "", "rb") as fh:
                    digest.update(fh.read())
        except OSError:  # no source to read: a key of its own, nothing reused
            digest.update(os.urandom(16))
        _CODE_KEY.append(digest.hexdigest())
    return _CODE_KEY[0]


_CODE_KEY: list[str] = []


def _inputs(max_lines: int, taken: tuple[str, ...], facts: list[Fact],
            code: dict[str, list[CodeChange]]) -> tuple[object, ...]:
    """What `render_topic` reads besides its facts' rows: the room, the agent's other
    topics, and the text of each change of the code its facts cite."""
    if not code:  # no fact cites changed code: the facts are not walked (each topic, each agent)
        return (max_lines, taken, ())
    return (max_lines, taken,
            tuple((f.key, tuple(c.text() for c in code[f.key])) for f in facts if f.key in code))


def _changed(facts: dict[str, Fact], rows: dict[str, FactRow]) -> set[str]:
    """The keys of the facts not equal to their row in `rows` (or without one), field by
    field, compared once per fact (not once per holder) and in C. A topic file reads each
    field as text that equal values give alike (strings, `confidence` by `:g`, the UTC
    date of `created`), so facts equal to those rows, in the same order, render the same
    bytes."""
    keys = facts.keys()
    differ = map(operator.ne, map(fact_row, facts.values()), map(rows.get, keys))
    return set(itertools.compress(keys, differ))


class Again:
    """A reused topic's files, rendered again only when asked: when its file on disk is
    not as the last distill left it (its stamp), or for `Rendered.every_file`. Reuse means
    the same input, so the same bytes; the cache keeps no text (at 100k lessons it took
    the topic cache from 23 to 38 MB, read and written at each distill)."""

    __slots__ = ("agent", "blocks", "code", "facts", "max_lines", "taken", "texts", "topic")

    def __init__(self, agent: str, topic: str, facts: list[Fact], max_lines: int,
                 taken: tuple[str, ...], code: dict[str, list[CodeChange]],
                 blocks: Blocks | None = None) -> None:
        self.agent, self.topic, self.facts, self.max_lines = agent, topic, facts, max_lines
        self.taken, self.code, self.blocks = taken, code, blocks
        self.texts: dict[str, bytes] | None = None

    def rendered(self, name: str) -> bytes | None:
        """The bytes of its file `name` if they were rendered again already."""
        return self.texts.get(name) if self.texts is not None else None

    def data(self, name: str) -> bytes:
        """The bytes of its file `name`."""
        if self.texts is None:
            files, _, _ = render_topic(self.agent, self.topic, self.facts, self.max_lines,
                                       set(self.taken), self.code, self.blocks)
            self.texts = {n: text.encode("utf-8") for n, text in files}
        return self.texts[name]


class Rendered:
    """Every distilled file (memory-root-relative path -> bytes) and a report per agent;
    `kept`: the topic files reused from the earlier render, with their stamps (path ->
    (stamp, its topic rendered again, its name)); `topics`: each topic's rendering, and
    `memory` each agent's MEMORY.md, for the next render to reuse (`Earlier`)."""

    __slots__ = ("agents", "files", "kept", "memory", "order", "topics")

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.agents: dict[str, AgentReport] = {}
        self.topics: TopicCache = {}
        self.kept: dict[str, tuple[Stamp | None, Again, str]] = {}
        self.memory: MemoryCache = {}
        self.order = ""  # the keys of the facts rendered, in rank order, NUL-joined

    def every_file(self) -> dict[str, bytes]:
        """`files` and the kept topic files, rendered again."""
        out = dict(self.files)
        out.update((rel, again.data(name)) for rel, (_, again, name) in self.kept.items())
        return out


def header(agent: str, width: int) -> list[str]:
    """MEMORY.md's first lines: what it is and how to add, correct or retract a lesson."""
    lines = [
        f"# Memory of {agent}",
        "Generated by `jmem distill` from the journal: do not edit, write a lesson.",
        f'Add: `jmem write --agent {agent} --topic TOPIC --title "…"` (details on stdin).',
        f"Correct: `jmem write --agent {agent} --supersedes KEY …`, or reuse its `--key KEY`.",
        f"Retract: `jmem write --agent {agent} --retracts KEY …`. KEY is in [brackets].",
    ]
    return [clip(line, width) for line in lines]


MIN_OLD_TITLE = 12  # characters of the old fact's title kept before the correction's words
MIN_WORDS = 30  # of the correction's words, before the old fact's title is cut for them


def outdated_mark(key: str, title: str, room: int, old: str = "") -> str:
    """The words that replace a flagged fact (its title: `old`), within `room`
    characters: the correcting lesson's key and title (the title cut around what it
    changes, `clip_news`, never the key); "" if not even the key fits."""
    bare = OUTDATED_MARK.format(key=key, title="")
    if room >= len(bare) + 8:
        return OUTDATED_MARK.format(key=key,
                                    title=clip_news(inline(title), room - len(bare), old))
    short = OUTDATED_KEY_ONLY.format(key=key)
    return short if room >= len(short) else ""


CODE_WAS = " — was: "


def code_mark(change: CodeChange, room: int) -> str:
    """The words that say a fact's cited code changed, within `room` characters: the path
    and commit with its subject, then without it, then the commit alone; "" if not even
    that fits."""
    for text in (change.text(), change.text(subject=False)):
        if len(text) + len(CODE_WAS) <= room:
            return text + CODE_WAS
    what = "cited file deleted" if change.gone else "cited code changed"
    short = f"{what} in {change.commit[:7]}: "
    return short if len(short) <= room else ""


def fact_line(fact: Fact, width: int, principle: bool, file: str = "",
              outdated: tuple[str, str] | None = None,
              code: CodeChange | None = None) -> str | None:
    """`- [title](topics/t.md#anchor) [key]`: a link to the fact in its topic file
    (`file`: `name#anchor`), then its key. The whole title comes first: when it does not
    fit beside the anchor the link names the file alone, and only then is the title cut;
    `- title [key]` for a fact in no topic file; None if the key cannot fit.

    `outdated`: the key and title of a newer lesson that probably corrects this fact;
    the line then starts with them, so every holder sees the words that replace it on
    the fact itself, however many there are. When the line is too short for both, the
    correction's words are cut to `MIN_WORDS`, then the old fact's title (to
    `MIN_OLD_TITLE`), then the correction's words again: they are never dropped while
    the old title can give way."""
    title = link_text(fact.title)
    tails = [f" [{fact.key}]"]
    if file:
        name, _, ref = file.partition("#")
        tails = [f"]({TOPICS}/{name}.md#{ref}) [{fact.key}]"] if ref else []
        tails.append(f"]({TOPICS}/{name}.md) [{fact.key}]")
    mark = ""
    if outdated:
        bare = len(OUTDATED_MARK.format(key=outdated[0], title=""))
        words = min(len(inline(outdated[1])), MIN_WORDS)
        for keep in (len(title), MIN_OLD_TITLE, 8):
            room = width - 3 - min(len(title), keep) - len(tails[-1])
            if keep == len(title) and room < bare + words:
                continue  # the whole old title leaves too few of the correction's words
            mark = outdated_mark(*outdated, room, fact.title)
            if "“" in mark:
                break
        if not mark:  # the flag without its link, rather than a line with no flag
            short = OUTDATED_KEY_ONLY.format(key=outdated[0])
            mark = short if width - 4 - len(fact.key) - len(short) >= 2 else ""
    elif code is not None:  # the old title gives way to the path and the commit
        keep = min(len(title), MIN_OLD_TITLE)
        mark = code_mark(code, width - 3 - keep - len(tails[-1]))
    if file:
        for tail in tails:
            if len(title) <= width - 3 - len(mark) - len(tail):
                return f"- {mark}[{title}{tail}"
        room = width - 3 - len(mark) - len(tails[-1])
        if room >= 8:
            return f"- {mark}[{_clip_old(title, room, bool(outdated))}{tails[-1]}"
    tail = f" [{fact.key}]"
    room = width - 2 - len(tail) - len(mark)
    if room < 2:
        return None
    return f"- {mark}{clip_middle(inline(fact.title), room)}{tail}"


def _clip_old(text: str, limit: int, marked: bool) -> str:
    """A flagged fact's link text keeps its value beside the correction's (the window
    around its first word with a digit, `clip_news`): its holder compares the two. Any
    other title is cut in its middle (`_clip_link`)."""
    if marked and any(c.isdigit() for c in text):
        cut = clip_news(text, limit, "")
        if any(c.isdigit() for c in cut) and not cut.rstrip(ELLIPSIS).endswith("\\"):
            return cut
    return _clip_link(text, limit)


def _clip_link(text: str, limit: int) -> str:
    """Link text cut to `limit` characters in its middle (as `clip_middle`) without
    splitting an escape: the head never ends in half of one, the tail never starts
    on an escaped character."""
    if len(text) <= limit:
        return text
    tail = (limit - 1) // 2 if limit >= 16 else 0
    cut = text[: max(limit - 1 - tail, 0)]
    if (len(cut) - len(cut.rstrip("\\"))) % 2:
        cut = cut[:-1]
    start = len(text) - tail
    while tail and start < len(text) and (start - len(text[:start].rstrip("\\"))) % 2:
        start += 1  # text[start] is escaped: the tail starts after it
    return cut.rstrip() + ELLIPSIS + (text[start:].lstrip() if tail else "")


def _nbytes(line: str) -> int:
    return len(line.encode("utf-8")) + 1


def heading(topic: str | None, width: int, parts: list[str] | None = None) -> str:
    """A MEMORY.md section heading: principles, or a topic and its files."""
    if topic is None:
        return clip("## Principles", width)
    files = ", ".join(f"{name}.md" for name in (parts or [topic])[1:])
    more = f" (and {files})" if files else ""
    return clip(f"## {topic} · {TOPICS}/{topic}.md{more}", width)


def _sections(chosen: list[tuple[Fact, str]], width: int,
              parts: dict[str, list[str]]) -> list[str]:
    """Principles first, then topics ordered by their best fact; facts in rank order."""
    out: list[str] = []
    principles = [line for fact, line in chosen if fact.type == "principle"]
    if principles:
        out += ["", heading(None, width), *principles]
    topics: dict[str, list[str]] = {}
    for fact, line in chosen:
        if fact.type != "principle":
            topics.setdefault(fact.topic, []).append(line)
    for topic, lines in topics.items():
        out += ["", heading(topic, width, parts.get(topic)), *lines]
    return out


def footer(here: int, in_topics: int, evicted: int) -> str:
    """The last line: every live fact counted once, by where it can be read."""
    total = here + in_topics + evicted
    text = (f"{total} live fact{'' if total == 1 else 's'}: {here} here, {in_topics} more only in "
            f"the topic files ({TOPICS}/)")
    if evicted:
        text += f", {evicted} only in the journal (no room; `jmem recall` finds them)"
    return text + "."


CONFLICT_LINES = 5  # "possibly outdated" lines at most, per MEMORY.md


def outdated_lines(agent: str, fold: Fold, width: int) -> list[str]:
    """The section naming facts `agent` holds that a newer lesson of another agent
    probably corrects (until a supersede, retract or restatement settles it)."""
    out = []
    for old, new in fold.conflicts:
        fact, newer = fold.facts.get(old), fold.lesson(new)
        if fact is None or newer is None or agent not in fact.holders:
            continue
        who = newer.path.split("/", 1)[0]
        out.append(clip(f"- possibly outdated: [{old}] — see the newer lesson by {who} "
                        f"({new}): {inline(newer.title)}", width))
    if not out:
        return []
    head = clip("## Possibly outdated (settle: --supersedes KEY, --retracts KEY, or restate "
                "it with --key KEY)", width)
    more = len(out) - CONFLICT_LINES
    tail = [clip(f"… and {more} more (`jmem distill --json`: conflicts)", width)] * (more > 0)
    return ["", head, *out[:CONFLICT_LINES], *tail]


# The fewest bytes a fact's line costs besides its key: "- ", " [", "]" and the newline
# (`fact_line`). A fact whose key alone leaves less room is skipped without rendering it.
LINE_FLOOR = 6


def least_bytes(fact: Fact, file: str, width: int, marked: bool, left: int | None = None,
                ) -> int:
    """Fewer bytes than the line `fact_line` makes for `fact` in topic file `file`
    (`name#anchor`), its newline counted: a fact with less room left is skipped without
    rendering its line (at 100k lessons an agent's budget is full long before its 7k
    facts are tried). A line that keeps its link, as it does when no mark (`marked`)
    takes room and 8 characters of its title fit beside it, is `- [`, its title, whole
    (escapes only lengthen it) or cut to about its room, and a tail that ends in
    `](topics/NAME.md) [KEY]`. With `left` (the bytes left: only whether the line fits
    is asked), a floor past it is given without weighing the title.

    Counted, not formatted: it runs for each of the ~50k facts of a 100k-lesson team
    that come after an agent's budget is nearly full, and the tail's f-string and the
    title's normalising took four fifths of its time."""
    key = fact.key
    least = len(key) + LINE_FLOOR
    if file and not marked:
        cut = file.find("#")
        tail = _TAIL + (cut if cut >= 0 else len(file)) + len(key)
        room = width - 3 - tail
        if room >= 8:  # a cut title keeps more than half its room
            if left is not None and tail + 4 > left:
                return tail + 4  # past `left` whatever the title
            title = len(" ".join(fact.title.split()))
            least = max(least, 3 + min(title, room // 2) + tail + 1)
    return least


_TAIL = len(f"]({TOPICS}/.md) []")  # a link's tail but the file's name and the key


def render_memory(agent: str, facts: list[Fact], budget: Budget, *, evicted: int = 0,
                  placed: dict[str, str] | None = None, parts: dict[str, list[str]] | None = None,
                  notes: list[str] | None = None,
                  outdated: dict[str, tuple[str, str]] | None = None,
                  code: dict[str, list[CodeChange]] | None = None) -> tuple[str, int]:
    """MEMORY.md's text and how many fact lines it holds. `facts` (rank order) are those in
    topic files; `evicted` counts the rest; `placed` names each key's topic file; `notes`
    (the "possibly outdated" section) follow the header."""
    width = budget.line_chars
    placed = placed or {}
    head = header(agent, width)
    notes = list(notes or [])
    worst_foot = ["", clip(footer(len(facts), len(facts), evicted), width)]
    lines_left = budget.memory_lines - len(head) - len(worst_foot)
    bytes_left = budget.memory_bytes - sum(map(_nbytes, head + worst_foot))
    for note in notes:
        lines_left -= 1
        bytes_left -= _nbytes(note)
    while notes and (lines_left < 0 or bytes_left < 0):  # tiny budgets: facts first
        gone = notes.pop()
        lines_left += 1
        bytes_left += _nbytes(gone)
    if len(notes) <= 2:
        lines_left, bytes_left = lines_left + len(notes), bytes_left + sum(map(_nbytes, notes))
        notes = []  # a heading with no line under it says nothing
    while head[1:] and (lines_left < 0 or bytes_left < 0):  # tiny budgets: shorter header
        gone = head.pop()
        lines_left += 1
        bytes_left += _nbytes(gone)
    chosen: list[tuple[Fact, str]] = []
    opened: set[str] = set()
    for fact in facts:
        if lines_left < 1:
            break  # every fact costs a line: no later one fits
        principle = fact.type == "principle"
        section = "\x00principles" if principle else fact.topic
        if (len(fact.key) + LINE_FLOOR > bytes_left
                or (section not in opened and lines_left < 3)):
            continue  # it cannot fit, whatever its line: not rendered (100k facts, 200 lines)
        changed = (code or {}).get(fact.key)
        file = placed.get(fact.key, "")
        if bytes_left <= width and least_bytes(  # a floor past LINE_FLOOR's is < width
                fact, file, width, bool(changed) or fact.key in (outdated or {}),
                bytes_left) > bytes_left:
            continue
        line = fact_line(fact, width, principle, file,
                         (outdated or {}).get(fact.key), changed[0] if changed else None)
        if line is None:
            continue
        cost_lines, cost_bytes = 1, _nbytes(line)
        if section not in opened:
            title = heading(None if principle else fact.topic, width,
                            (parts or {}).get(fact.topic))
            cost_lines, cost_bytes = cost_lines + 2, cost_bytes + 1 + _nbytes(title)
        if cost_lines <= lines_left and cost_bytes <= bytes_left:
            chosen.append((fact, line))
            opened.add(section)
            lines_left -= cost_lines
            bytes_left -= cost_bytes
    while True:
        foot = ["", clip(footer(len(chosen), len(facts) - len(chosen), evicted), width)]
        text = "\n".join(head + notes + _sections(chosen, width, parts or {}) + foot) + "\n"
        # The footer was reserved at its worst counts, but a clipped line loses its cut
        # word's trailing space: the real one can be a byte longer. Then the last fact
        # goes (it stays in its topic file, and the footer counts it there).
        if not chosen or (len(text.encode("utf-8")) <= budget.memory_bytes
                          and text.count("\n") <= budget.memory_lines):
            return text, len(chosen)
        chosen.pop()


def render(fold: Fold, agents: list[str], budget: Budget, earlier: Earlier | None = None,
           ) -> Rendered:
    """Every agent's topic files and MEMORY.md. `earlier`: an earlier render's topics and the
    facts they were rendered from; a topic whose facts and other input are the same as
    then is not rendered again (at 10k lessons, rendering every topic is most of a
    render). Deciding that compares rows, without pickling or hashing any fact."""
    out = Rendered()
    marks: dict[str, tuple[str, str]] = {}
    for old, new in fold.conflicts:
        lesson = fold.lesson(new)
        if old in fold.facts and lesson is not None:
            marks.setdefault(old, (new, lesson.title))
    changed = set() if earlier is None else (
        earlier.changed if earlier.changed is not None else _changed(fold.facts, earlier.rows))
    facts = (ranked_since(fold.facts, earlier.order.split("\0"), changed)
             if earlier is not None and earlier.order is not None else None)
    if facts is None:
        facts = ranked(fold.facts.values())
    out.order = "\0".join(map(_KEY, facts))  # a key is a name (`names.NAME`): never a NUL
    blocks: Blocks = {}
    by_agent: dict[str, list[Fact]] = {a: [] for a in agents}
    for fact in facts:
        for holder in fact.holders:
            by_agent.setdefault(holder, []).append(fact)
    for agent in sorted(by_agent):
        report = out.agents[agent] = AgentReport()
        by_topic: dict[str, list[Fact]] = {}
        for fact in by_agent[agent]:
            by_topic.setdefault(fact.topic, []).append(fact)
        placed: dict[str, str] = {}
        taken = tuple(sorted(by_topic))
        reused = 0
        for topic in taken:
            names, evicted, where, hit = _topic(out, earlier, changed, agent, topic,
                                                by_topic[topic], budget.topic_lines, taken,
                                                fold.code, blocks)
            report.parts[topic] = names
            report.evicted += evicted
            placed.update(where)
            reused += hit
        report.in_topics = len(placed)
        report.evicted.sort()
        notes = outdated_lines(agent, fold, budget.line_chars)
        inputs = _memory_inputs(budget, notes, marks, placed, taken)
        memory = (earlier.memory.get(agent) if earlier is not None and reused == len(taken)
                  else None)
        if memory is None or memory[0] != inputs:
            shown = [f for f in by_agent[agent] if f.key in placed]
            text, count = render_memory(
                agent, shown, budget, evicted=len(report.evicted), placed=placed,
                parts=report.parts, notes=notes, outdated=marks, code=fold.code)
            memory = (inputs, text, count)
        out.memory[agent] = memory
        report.in_memory = memory[2]
        out.files[f"{agent}/{MEMORY_MD}"] = memory[1].encode("utf-8")
    return out


def _memory_inputs(budget: Budget, notes: list[str], marks: dict[str, tuple[str, str]],
                   placed: dict[str, str], taken: tuple[str, ...]) -> tuple[object, ...]:
    """What `render_memory` reads besides what the agent's topics decide (its facts, in
    order, where each is placed, what had no room, and the changes of the code they
    cite): the budget, the "possibly outdated" lines, and the corrections that mark its
    facts (few: a walk of them, not of the facts); and which topics it has (an agent
    left with none has every one of its topics reused)."""
    mine = tuple(sorted((key, mark) for key, mark in marks.items() if key in placed))
    return (budget.memory_lines, budget.memory_bytes, budget.line_chars, tuple(notes), mine,
            taken)


_KEY = operator.attrgetter("key")


def _topic(out: Rendered, earlier: Earlier | None, changed: set[str], agent: str, topic: str,
           facts: list[Fact], max_lines: int, taken: tuple[str, ...],
           code: dict[str, list[CodeChange]], blocks: Blocks,
           ) -> tuple[list[str], list[str], Iterable[tuple[str, str]], bool]:
    """Put `render_topic`'s files in `out` (reused, packed, from `earlier` when its input
    is the same and none of its facts is in `changed` since), and its rendering in
    `out.topics`; returns its file names, evicted keys, placements and whether it was
    reused."""
    keys = tuple(map(_KEY, facts))  # in C: every topic of every agent, each render
    joined = "\0".join(keys)  # a key is a name (`names.NAME`): never a NUL
    inputs = _inputs(max_lines, taken, facts, code)
    hit = earlier.topics.get((agent, topic)) if earlier else None
    if (hit is not None and earlier is not None and hit[0] == joined and hit[1] == inputs
            and changed.isdisjoint(keys)):
        out.topics[(agent, topic)] = hit
        again = Again(agent, topic, facts, max_lines, taken, code, blocks)
        for name, stamp in hit[2]:
            out.kept[f"{agent}/{TOPICS}/{name}.md"] = (stamp, again, name)
        places = hit[4].split("\0")
        pairs = zip(keys, places, strict=True)
        placed = itertools.compress(pairs, places) if hit[3] else pairs  # "": no room
        return [name for name, _ in hit[2]], hit[3], placed, True
    files, evicted, where = render_topic(agent, topic, facts, max_lines, set(taken), code,
                                         blocks)
    for name, text in files:
        out.files[f"{agent}/{TOPICS}/{name}.md"] = text.encode("utf-8")
    out.topics[(agent, topic)] = (joined, inputs, [(name, None) for name, _ in files], evicted,
                                  "\0".join(map(where.get, keys, itertools.repeat(""))))
    return [name for name, _ in files], evicted, where.items(), False


def over_budget(text: str, budget: Budget) -> list[str]:
    """Every way a MEMORY.md text breaks the budget (empty when it holds)."""
    problems = []
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    if len(lines) > budget.memory_lines:
        problems.append(f"{len(lines)} lines, budget {budget.memory_lines}")
    size = len(text.encode("utf-8"))
    if size > budget.memory_bytes:
        problems.append(f"{size} bytes, budget {budget.memory_bytes}")
    for number, line in enumerate(lines, 1):
        if len(line) > budget.line_chars:
            problems.append(f"line {number}: {len(line)} characters, budget {budget.line_chars}")
    return problems
