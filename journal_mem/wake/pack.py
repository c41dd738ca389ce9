"""The wake-up pack (docs/DESIGN.md, "Claude Code hooks"): what an agent must know when it
starts, and its fitting to the budget.

In order: the MAIN checkout's `MEMORY.md` (a worktree's copy is as old as its
branch; a line a pending lesson probably corrects without its key starts with
that lesson's key and words; a mark quoting a lesson restated, superseded or
retracted since follows it), the lessons for the agent written since the
last distill (journal and outbox, newest first), the keys corrected since
then ("do not rely on", with the correction's words),
and with a query the live facts the agent holds that best answer it (the
`recall` index: the same facts its topic files hold, ranked by bm25, with
their exact confidence).

Budget cutting drops whole lines, highest rank first (a lower rank survives
longer): MEMORY.md from its end (the distiller ranks it top-down, and it stays
on disk), then the oldest pending lessons, then the weakest query facts; the
header and the corrections go last, and a heading goes with the last line of
its section. One final line says what was cut and where to read it. Standard
library only without a query: the SessionStart hook builds a pack on every
session start.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from journal_mem.errors import ConfigError
from journal_mem.journal.reader import PendingFile, pending
from journal_mem.journal.similar import OUTDATED_MARK, held_corrections
from journal_mem.journal.validate import Policy
from journal_mem.layout import Layout
from journal_mem.names import TOPICS
from journal_mem.repo import open_context
from journal_mem.settings import agent_name
from journal_mem.wake.claude import PACK_LIMIT, utf16_len
from journal_mem.wake.held import KEY_RE as _KEY_RE
from journal_mem.wake.held import Held, digest

# Rank bands: a lower rank survives longer.
HEAD_RANK, QUERY_RANK, PENDING_RANK, MEMORY_RANK = 0, 1_000_000, 2_000_000, 3_000_000


class Line:
    """One line of the pack, with its rank and what cutting it means."""

    __slots__ = ("keys", "kind", "rank", "text")

    def __init__(self, text: str, rank: int, kind: str, keys: tuple[str, ...] = ()) -> None:
        self.text = text
        self.rank = rank
        self.kind = kind
        self.keys = keys


class Pack:
    """A built pack: its text, the keys it carries, and what was cut."""

    __slots__ = ("agent", "corrections", "cut", "held_keys", "keys", "lessons", "news",
                 "offered", "problems", "text")

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.text = ""
        self.keys: list[str] = []
        self.cut: dict[str, int] = {}
        self.lessons: list[PendingFile] = []
        self.corrections: dict[str, str] = {}
        self.problems: list[str] = []
        self.offered: list[str] = []  # digests of every candidate line, kept or cut
        self.held_keys: list[str] = []  # keys of those lines
        self.news = 0  # content lines in the text (0: nothing to tell)

    def as_json(self) -> dict[str, object]:
        """The pack for `wake --json`."""
        return {
            "agent": self.agent,
            "text": self.text,
            "keys": self.keys,
            "pending": [{"key": x.key, "title": x.title, "path": x.path,
                         "created": x.stamp or None}
                        for x in self.lessons],
            "do_not_rely_on": self.corrections,
            "cut": self.cut,
            "problems": self.problems,
        }

def fit(lines: list[Line], max_chars: int, pack: Pack) -> list[Line]:
    """Drop whole lines, highest rank first, until the pack and its note fit."""
    total = sum(utf16_len(line.text) + 1 for line in lines)
    if total <= max_chars:
        return lines
    dropped: set[int] = set()
    counts: dict[str, int] = {}
    order = sorted(range(len(lines)), key=lambda i: lines[i].rank, reverse=True)
    for i in order:
        if total + utf16_len(cut_note(counts, pack)) + 1 <= max_chars:
            break
        if lines[i].kind == "heading":
            continue  # a heading goes with the last line of its section, below
        dropped.add(i)
        counts[lines[i].kind] = counts.get(lines[i].kind, 0) + 1
        total -= utf16_len(lines[i].text) + 1
    kept = [line for i, line in enumerate(lines) if i not in dropped]
    kept = [line for j, line in enumerate(kept)
            if line.kind != "heading" or (j + 1 < len(kept) and kept[j + 1].kind
                                          not in ("heading", "head"))]
    pack.cut = counts
    return [*kept, Line(cut_note(counts, pack), HEAD_RANK, "note")]


_WHERE = {"memory": "lines of MEMORY.md", "pending": "pending lessons",
          "query": "query facts", "correction": "corrected keys", "head": "header lines",
          "heading": "headings"}


def cut_note(counts: dict[str, int], pack: Pack) -> str:
    """The last line of a cut pack: what was cut, and how to read all of it."""
    parts = [f"{n} {_WHERE[kind]}" for kind, n in sorted(counts.items())] or ["nothing"]
    return (f"[jmem: cut {', '.join(parts)} to fit the budget; read the rest with "
            f"`jmem wake --agent {pack.agent} --max-chars 100000`, or in the main checkout's "
            f"MEMORY.md, topics/ and journal/]")


TYPE_CHECKING = False  # `typing` costs the wake hook ~3 ms: annotations only
if TYPE_CHECKING:  # recall (sqlite3, the fold) is imported only for --query
    from journal_mem.recall.query import Hit

DEFAULT_MAX_CHARS = PACK_LIMIT  # UTF-16 units: a margin below Claude Code's 10,000 cap
DEFAULT_MIN_CONFIDENCE = 0.7
QUERY_LIMIT = 10
QUERY_BODY_CHARS = 240
INVALID_SHOWN = 5


def build(layout: Layout, agent: str, policy: Policy, *, max_chars: int = DEFAULT_MAX_CHARS,
          with_memory: bool = True, query: str | None = None,
          facts: list[Hit] | None = None,
          min_confidence: float = DEFAULT_MIN_CONFIDENCE,
          held: Held | None = None, delta: bool = False, team_only: bool = False,
          own: frozenset[str] = frozenset()) -> Pack:
    """The wake-up pack of `agent`, within `max_chars` UTF-16 units.

    `facts` are the recalled facts answering `query` (see `for_command`).
    With `held`, the lines the session already has are left out and the keys
    it holds that are no longer true are named (each fact reaches it once);
    `delta` marks an update to a running session rather than its first pack.
    `team_only` (an agent without memory): only lessons meant for every agent.
    `own`: entry files the session wrote itself, not listed back to it (their keys
    still replace the lines they correct).
    Pending entries are judged by `policy`, as the next distill will judge
    them: an invalid one is named in the pack and never applied.
    """
    pack = Pack(agent)
    lessons = pending(layout, policy)
    memory = _read(layout.memory_md(agent)) if with_memory and not team_only else None
    held_keys = {m[1] for line in (memory or "").split("\n") if (m := _KEY_RE.match(line))}
    live, corrections = _sort_pending(lessons, agent, pack, held_keys)
    pack.lessons, pack.corrections = live, corrections
    replaced = set(corrections) | {x.key for x in live}
    # the lessons whose words may correct a held fact they do not name (a supersede or a
    # retraction of one wording may correct another); a lesson corrected since says
    # nothing now
    keyless = [x for x in lessons if not x.problems and x.key not in corrections]
    # the lessons the corrections quote, and the listed ones: a newer pending lesson may
    # correct them in turn
    by_key = {x.key: x for x in reversed(lessons) if not x.problems}  # newest wins
    quoted = {old: by_key[why.split()[2].rstrip(":")] for old, why in corrections.items()
              if len(why.split()) > 2 and why.split()[2].rstrip(":") in by_key}
    marks = _pending_corrected([*live, *quoted.values()], keyless)
    sections = [
        _memory_lines(layout, agent, memory, replaced, keyless, _successors(lessons),
                      {k for k, why in corrections.items() if why.startswith("retracted")})
        if with_memory and not team_only else [],
        _pending_lines(layout, [x for x in live if x.rel.rsplit("/", 1)[-1] not in own],
                       marks),
        [] if team_only else _correction_lines(corrections, {
            old: marks[lesson.key] for old, lesson in quoted.items() if lesson.key in marks}),
        _query_lines(query, facts or [], min_confidence) if query else [],
    ]
    content = [line for s in sections for line in s if line.kind in _CONTENT]
    pack.offered = sorted({digest(line.text) for line in content})
    current = {k for line in content for k in line.keys}
    if held is not None:
        sections = [_unheld(s, held) for s in sections]
        sections.append(_gone_lines(held.keys - current))
    kept = fit([*_head(agent, pack, delta), *(line for s in sections for line in s)],
                max_chars, pack)
    pack.text = "\n".join(line.text for line in kept) + "\n"
    pack.keys = sorted({k for line in kept for k in line.keys})
    pack.held_keys = sorted(current)
    pack.news = sum(1 for line in kept if line.kind in _CONTENT)
    return pack


_CONTENT = ("memory", "pending", "correction", "query")


def _head(agent: str, pack: Pack, delta: bool) -> list[Line]:
    title = (f"# journal-mem: memory of agent {agent} changed since it was last given to you"
             if delta else f"# journal-mem: memory of agent {agent}")
    head = [Line(title, HEAD_RANK, "head"),
            Line(f"Record a lesson: jmem write --agent {agent} --topic TOPIC --title "
                 "\"…\" (body on stdin); correct one: add --supersedes KEY.", HEAD_RANK, "head")]
    return head[:1] if delta else head + _invalid_lines(pack.problems)


def _unheld(section: list[Line], held: Held) -> list[Line]:
    """The section without the lines the session holds (its heading only if any is left)."""
    fresh = [line for line in section if line.kind in _CONTENT and line.text.strip()
             and digest(line.text) not in held.digests]
    if not fresh:
        return []
    heading = [line for line in section[:1] if line.kind == "heading"]
    if heading and heading[0].text.startswith("## MEMORY.md"):
        heading = [Line("## MEMORY.md lines you do not have yet (each replaces the line with "
                        "the same key you were given)", heading[0].rank, "heading")]
    return heading + fresh


def _gone_lines(keys: set[str]) -> list[Line]:
    if not keys:
        return []
    lines = [Line("## No longer in MEMORY.md", HEAD_RANK, "heading")]
    lines += [Line(f"do not rely on: {key} (no longer a fact in the main checkout's MEMORY.md; "
                   f"`jmem recall {key}` shows what replaced it)", HEAD_RANK, "correction", (key,))
              for key in sorted(keys)]
    return lines


def _sort_pending(lessons: list[PendingFile], agent: str, pack: Pack,
                  held: set[str]) -> tuple[list[PendingFile], dict[str, str]]:
    """Live pending lessons for `agent` (newest first) and the corrected keys, each with
    why: the key of the lesson that superseded or retracted it, and that lesson's title
    when the pack does not list it (a teammate's correction written for other agents):
    a holder never sees "do not rely on" without the words that replace it.

    Keys are team-wide: a lesson superseded or retracted by a newer pending
    one, or older than a pending lesson with the same key, is not live; a lesson
    restating a key the agent holds (`held`: its MEMORY.md's keys) is for it, whoever
    wrote it (the distill makes the agent hold it).
    """
    gone: dict[str, str] = {}
    seen: set[str] = set()
    live: list[PendingFile] = []
    for lesson in lessons:  # newest first
        if lesson.problems:  # distill will not fold it: it must not hide anything either
            pack.problems.append(f"{lesson.rel}: {'; '.join(lesson.problems)}")
            continue
        shown = lesson.key not in gone and lesson.key not in seen and (
            lesson.is_for(agent) or lesson.key in held)  # a key's holders hold its restatement
        if shown:
            live.append(lesson)
        seen.add(lesson.key)
        # the correction's own words, for a holder it is not written for (nor shown to)
        said = lesson.key if shown else f"{lesson.key}: {lesson.title}"
        for key in lesson.supersedes:
            gone.setdefault(key, f"superseded by {said}")
        for key in lesson.retracts:
            gone.setdefault(key, f"retracted by {said}")
    corrections = {k: why for k, why in sorted(gone.items()) if k not in {x.key for x in live}}
    return live, corrections


def _invalid_lines(problems: list[str]) -> list[Line]:
    """Invalid pending entries, named (the first few) so that someone fixes them."""
    if not problems:
        return []
    lines = [Line(f"jmem warning: {len(problems)} pending entries are invalid: distill will "
                  "not fold them and this pack does not apply them (fix each file, or write "
                  "a new lesson)", HEAD_RANK, "head")]
    lines += [Line(f"- invalid: {p}", HEAD_RANK, "head") for p in problems[:INVALID_SHOWN]]
    if len(problems) > INVALID_SHOWN:
        lines.append(Line(f"- … and {len(problems) - INVALID_SHOWN} more (`jmem check`)",
                          HEAD_RANK, "head"))
    return lines


def _successors(lessons: list[PendingFile]) -> dict[str, PendingFile]:
    """{key: the newest pending lesson that restates or supersedes it}: what a distilled mark
    quoting that key says now."""
    found: dict[str, PendingFile | None] = {}
    for lesson in lessons:  # newest first: a key's newest word on it speaks for it
        if lesson.problems:
            continue
        for key in lesson.retracts:
            found.setdefault(key, None)
        if not lesson.retracts or lesson.supersedes:
            for key in (lesson.key, *lesson.supersedes):
                found.setdefault(key, lesson)
    return {key: lesson for key, lesson in found.items() if lesson is not None}


def _memory_lines(layout: Layout, agent: str, text: str | None, replaced: set[str],
                  keyless: list[PendingFile], successors: dict[str, PendingFile],
                  retracted: set[str]) -> list[Line]:
    """MEMORY.md's lines: a fact corrected since the last distill is left out, and one that
    a pending lesson probably corrects (whoever wrote it, without naming the key) starts
    with that lesson's key and words, as the next distill will mark it. A distilled mark
    quoting a lesson restated or superseded since quotes the newer lesson; one quoting a
    lesson retracted since goes (that lesson says nothing now)."""
    if text is None:
        return []
    raw_lines = text.rstrip("\n").split("\n")
    marks = _probably_corrected(raw_lines, keyless, layout.agent_dir(agent))
    where = "main checkout" if not layout.repo.is_main else "this checkout"
    folder, texts = layout.agent_dir(agent), dict[str, str | None]()

    def title_of(key: str, text: str) -> str:  # a linked fact's heading in its topic file
        link = text[text.rindex("](") + 2:-1].split("#", 1)[0]
        if not link.startswith(f"{TOPICS}/") or ".." in link:
            return ""
        return _topic_section(os.path.join(folder, link), key, texts)[0]

    lines = [Line(f"## MEMORY.md ({where}: {layout.memory_md(agent)})", MEMORY_RANK, "heading")]
    for i, raw in enumerate(raw_lines, 1):
        keys = tuple(_KEY_RE.findall(raw))
        if keys and replaced.intersection(keys):
            continue  # corrected since the last distill: never show the stale fact
        if keys and keys[-1] in marks:
            raw = _marked(raw, marks[keys[-1]])
        else:
            followed = _followed(raw, keys, successors, retracted, replaced, title_of)
            if followed is None:
                continue
            raw = followed
        lines.append(Line(raw, MEMORY_RANK + i, "memory", keys))
    return lines


def _followed(raw: str, keys: tuple[str, ...], successors: dict[str, PendingFile],
              retracted: set[str], replaced: set[str],
              title_of: Callable[[str, str], str]) -> str | None:
    """A MEMORY.md line whose mark (or summary line) quotes a lesson restated, superseded
    or retracted since: quoting the newer lesson, without the mark, or None (a summary
    line of a retracted lesson)."""
    if keys:
        by = _MARK_KEY.match(raw)
        if by is None:
            return raw
        if by[1] in successors:
            newer = successors[by[1]]
            return raw if newer.key == keys[-1] else _marked(raw, newer)
        fact = _FACT_LINE.match(raw)
        if by[1] not in retracted or fact is None:
            return raw
        text = fact["text"]  # cut to fit beside the mark: the whole title again
        whole = title_of(keys[-1], text) if text.startswith("[") and "…" in text else ""
        if whole and not set(whole) & set("[]\\"):  # a heading is no link text: plain only
            return f"- [{whole}]{text[text.rindex('](') + 1:]} [{keys[-1]}]"
        return "- " + fact["rest"]
    see = re.match(_SEE_NEWER, raw)
    if see is None:
        return raw
    if see["old"] in replaced:
        return None  # that fact's own line is gone: corrected since the last distill
    if see["new"] in successors:
        newer = successors[see["new"]]
        return f"{see['head']}{newer.agent} ({newer.key}): {_cut(newer.title)}"
    return None if see["new"] in retracted else raw


# A fact line of MEMORY.md: an earlier mark (any form render.fact_line writes), the
# fact's text (a link into its topic file, or plain), its key.
_FACT_LINE = re.compile(r"^- (?P<mark>possibly outdated (?:by \[[^\]]+\]: (?:“.*?” — was: )?"
                        r"|\(see \[[^\]]+\]\): ))?(?P<rest>(?P<text>.*) \[(?P<key>[^\]]+)\])$")
# the summary of MEMORY.md's flagged facts (render.outdated_lines): rare, compiled on first use
_SEE_NEWER = (r"^(?P<head>- possibly outdated: \[(?P<old>[^\]]+)\] — see the newer "
              r"lesson by )\S+ \((?P<new>[^)\s]+)\): ")
_MARK_KEY = re.compile(r"^- possibly outdated (?:by \[|\(see \[)([^\]]+)\]")
_MARK_WORDS = re.compile(r"possibly outdated by \[[^\]]+\]: “(.*?)” — was: ")
_SECTION = re.compile(r"^## (\S+) · ")
MARK_TITLE_CHARS = 120
PENDING_MARKED = 64  # newest pending lessons compared with each other for marks


def _probably_corrected(raw_lines: list[str], keyless: list[PendingFile],
                        folder: str) -> dict[str, PendingFile]:
    """{held key: the pending lesson that probably corrects it} (`similar.held_corrections`;
    a close pair's fact body is read from the topic file its line links)."""
    if not keyless:
        return {}
    held: list[tuple[str, str, str]] = []
    marked: dict[str, str] = {}  # the title a line's distilled mark already shows
    files: dict[str, str] = {}
    texts: dict[str, str | None] = {}  # topic file: its text, read once
    topic = "general"
    for raw in raw_lines:
        section = _SECTION.match(raw)
        if section:
            topic = section.group(1)
            continue
        fact = _FACT_LINE.match(raw)
        if fact:
            text = fact["text"]
            if text.startswith("[") and "](" in text:
                link = text[text.rindex("](") + 2:-1].split("#", 1)[0]
                if link.startswith(f"{TOPICS}/") and ".." not in link:
                    files[fact["key"]] = os.path.join(folder, link)
                text = text[1:text.rindex("](")]
                if "…" in text:  # cut to fit its line: the fact's whole title is its heading
                    text = _topic_section(files.get(fact["key"]), fact["key"], texts)[0] or text
            held.append((fact["key"], text.replace("\\", ""), topic))
            words = _MARK_WORDS.match(fact["mark"] or "")
            if words:
                marked[fact["key"]] = words[1]
    if not held:
        return {}
    by_key: dict[str, PendingFile] = {}
    for lesson in keyless:  # newest first: a key's newest lesson speaks for it
        by_key.setdefault(lesson.key, lesson)
    found = held_corrections(((x.key, x) for x in keyless), held,
                             lambda key: _topic_section(files.get(key), key, texts)[1], marked,
                             frozenset(x.key for x in keyless if x.retracts and not x.supersedes))
    return {old: by_key[new] for old, new in found.items()}


def _pending_corrected(live: list[PendingFile],
                       keyless: list[PendingFile]) -> dict[str, PendingFile]:
    """{key of a listed pending lesson: the newer pending lesson that probably corrects it},
    whoever wrote either: a lesson corrected before any distill is never listed without
    the words that replace it (the next distill marks it the same way). Only the newest
    `PENDING_MARKED` pending lessons are compared: a hook answers in milliseconds even
    when distills have been off for weeks."""
    keyless = keyless[:PENDING_MARKED]
    if not live or len(keyless) < 2:
        return {}
    place = {x.key: i for i, x in reversed(list(enumerate(keyless)))}  # newest first
    bodies = {x.key: x.body for x in live}
    found = held_corrections(((x.key, x) for x in keyless),
                             ((x.key, x.title, x.topic) for x in live if x.key in place),
                             bodies.__getitem__, None,
                             frozenset(x.key for x in keyless if x.retracts and not x.supersedes),
                             before=place)
    by_key = {x.key: x for x in reversed(keyless)}
    return {old: by_key[new] for old, new in found.items()}


def _topic_section(path: str | None, key: str,
                   texts: dict[str, str | None]) -> tuple[str, str]:
    """The title and body a topic file shows for `key`: its heading, and the lines between
    it and its provenance line (("", "") when the file or the fact is not there). `texts`
    holds each file read so far."""
    if path is None:
        return "", ""
    if path not in texts:
        texts[path] = _read(path)
    text = texts[path]
    at = text.find(f"\n> key `{key}`") if text is not None else -1
    if text is None or at < 0:
        return "", ""
    start = text.rfind("\n## ", 0, at)
    if start < 0:
        return "", ""
    section = text[start + 4:at].split("\n", 1)
    return section[0].strip(), section[1] if len(section) > 1 else ""


def _marked(raw: str, lesson: PendingFile) -> str:
    """The fact line with the pending lesson's key and words in front (any older mark goes)."""
    fact = _FACT_LINE.match(raw)
    return raw if fact is None else _mark(lesson) + fact["rest"]


def _mark(lesson: PendingFile) -> str:
    """"- possibly outdated by [KEY]: “its title” — was: ", for a line `lesson` corrects."""
    return "- " + OUTDATED_MARK.format(key=lesson.key, title=_cut(lesson.title))


def _cut(title: str) -> str:
    """A lesson's title on one line, at most `MARK_TITLE_CHARS` long."""
    words = " ".join(title.split())
    if len(words) > MARK_TITLE_CHARS:
        words = words[: MARK_TITLE_CHARS - 1].rstrip() + "…"
    return words


def _pending_lines(layout: Layout, live: list[PendingFile],
                   marks: dict[str, PendingFile]) -> list[Line]:
    if not live:
        return []
    lines = [Line("## Lessons since the last distill, newest first (they override "
                  f"MEMORY.md lines with the same key; files under {layout.main_memory}/)",
                  PENDING_RANK, "heading")]
    for i, lesson in enumerate(live, 1):
        day = lesson.day or "?"
        where = f"{layout.state_dir}/{lesson.rel}" if lesson.outbox else lesson.rel
        line = f"{lesson.title} [{lesson.key}] ({day}; {where})"
        line = (_mark(marks[lesson.key]) if lesson.key in marks else "- ") + line
        lines.append(Line(line, PENDING_RANK + i, "pending", (lesson.key,)))
    return lines


def _correction_lines(corrections: dict[str, str],
                      newer: dict[str, PendingFile]) -> list[Line]:
    """"do not rely on: KEY (superseded by NEW…)", and the words of a newer pending lesson
    that probably corrects NEW in turn (`newer`: {KEY: that lesson})."""
    if not corrections:
        return []
    lines = [Line("## Corrected since the last distill", HEAD_RANK, "heading")]
    lines += [Line(f"do not rely on: {key} ({why})"
                   + (f" — {_mark(newer[key])[2:].split(' — was: ')[0]}" if key in newer else ""),
                   HEAD_RANK, "correction", (key,))
              for key, why in corrections.items()]
    return lines


def _query_lines(query: str, facts: list[Hit], min_confidence: float) -> list[Line]:
    if not facts:
        return [Line(f"## Facts for: {query} — none found at confidence >= {min_confidence}",
                     QUERY_RANK, "heading")]
    lines = [Line(f"## Facts for: {query}", QUERY_RANK, "heading")]
    lines += [Line(_fact_line(fact), QUERY_RANK + i, "query", (fact.key,))
              for i, fact in enumerate(facts, 1)]
    return lines


def _fact_line(fact: Hit) -> str:
    """A recalled fact as one pack line: title, key, a short body, where it comes from."""
    text = " ".join(fact.body.split())
    if len(text) > QUERY_BODY_CHARS:
        text = text[: QUERY_BODY_CHARS - 1].rsplit(" ", 1)[0] + "…"
    detail = f": {text}" if text else ""
    return f"- {fact.title} [{fact.key}]{detail} ({fact.path})"



def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def for_command(cwd: str, agent: str | None, *, max_chars: int = DEFAULT_MAX_CHARS,
                query: str | None = None,
                min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> Pack:
    """`jmem wake`: the full pack (MEMORY.md always included) for a named or default agent."""
    ctx = open_context(cwd)
    name = agent_name(agent, ctx.config.default_agent)
    known = sorted(set(ctx.layout.agents_on_disk()) | set(ctx.config.agents))
    if name not in known:
        raise ConfigError(f"no memory for agent {name!r} (known: {', '.join(known) or 'none'})",
                          hint="name one with --agent, or create it with `jmem init --agent "
                               "NAME`")
    facts = None
    if query:
        from journal_mem.recall.query import recall

        hits = recall(ctx, query, agent=name, limit=QUERY_LIMIT * 3)
        facts = [h for h in hits if h.confidence >= min_confidence][:QUERY_LIMIT]
    return build(ctx.layout, name, ctx.policy, max_chars=max_chars, query=query, facts=facts,
                 min_confidence=min_confidence)
