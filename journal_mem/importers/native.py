"""Claude Code's native memory files: what the client's agents write themselves, as lessons.

Claude Code tells an agent with `memory: project` to keep its memory with its
own file tools: one file per memory in `.claude/agent-memory/<agent>/`
(frontmatter `name`, `description` and a type, `metadata: {type: …}` or `type:`
at the top, then a body), indexed by a `MEMORY.md` of `- [Title](file.md)`
lines; some teams also keep such files, and an index, at the memory root. Each
file is one lesson, adopted whole:

* key: the `name` as a slug when it is ASCII (`name` is the memory's identity:
  the agent edits the file under that name), else the file's stem;
* type: Claude Code's `feedback` is our `procedural`, `project`, `reference` and
  `user` are `semantic`; the native type is kept as a tag, and as the topic
  unless the memory names a subject the team already has a topic for: the
  longest topic its title (or its file name after the type) starts with, word
  for word (`topics`: "Billing port set to 8080" goes to `billing`, with the
  rest of the team's billing facts, not to `project`);
* title: the `description`, else the first heading, else the first line;
  the body whole (HTML comments dropped: hidden when rendered, never a fact);
* the date of the commit that last wrote it, and a `source` naming file,
  commit and line. A memory at the root is every agent's (`applies_to: all`),
  written by the default agent.

A file over the entry limit is kept whole, as one lesson per part cut at its
own sections (`split`); only a file holding a secret is refused, whole, with
the line and kind of the finding (never the secret), and it stays where it
is. The key is the writer's own (`Draft.per_writer`): another agent's memory
of the same `name` is a different fact. Frontmatter is read line by line rather than as
YAML: agents write `name: **Never** …` and descriptions holding `: `, which a
YAML parser rejects, and the file is still memory. Pure but for reading files.
"""

from __future__ import annotations

import datetime as dt
import os
import re

from journal_mem.importers.found import NativeFile, native_files
from journal_mem.importers.markdown import (
    Origin,
    Resolver,
    drop_comments,
    memory_drafts,
    native_type,
)
from journal_mem.importers.memfiles import provenance
from journal_mem.journal.drafts import Draft, join_body, problems_of, title_and_body
from journal_mem.journal.entry import TITLE_MAX
from journal_mem.journal.secrets import scan
from journal_mem.journal.validate import Policy
from journal_mem.layout import Layout
from journal_mem.names import TOPICS, is_name, slugify
from journal_mem.tuples import NamedTuple

KIND = "adopt native"
ROOT_TOPIC = "team"
_FIELD_RE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z_][\w.-]*)\s*:\s?(?P<value>.*)$")
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def read_text(path: str) -> str | None:
    """A file as text (LF), or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace").replace("\r\n", "\n")
    except OSError:
        return None


def frontmatter(text: str) -> tuple[dict[str, str], str, int]:
    """(fields, body, 1-based line the body starts on). Nested keys under `metadata:`
    are `metadata.KEY`; values lose their quotes. No frontmatter: ({}, text, 1)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text, 1
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
    except StopIteration:
        return {}, text, 1
    fields: dict[str, str] = {}
    parent = ""
    for line in lines[1:end]:
        match = _FIELD_RE.match(line)
        if match is None:
            continue
        key, value = match.group("key"), match.group("value").strip()
        if match.group("indent") and parent:
            key = f"{parent}.{key}"
        elif not value:
            parent = key
            continue
        else:
            parent = ""
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        fields[key] = value
    return fields, "\n".join(lines[end + 1:]), end + 2


def _first_line(body: str) -> str:
    """The first heading outside code, else the first non-empty line."""
    fenced = False
    for line in body.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := _HEADING_RE.match(line)):
            return match.group(1)
    return next((line.strip() for line in body.split("\n") if line.strip()), "")


def _demoted(body: str, title: str) -> str:
    """The body under its title: a first `# heading` equal to the title is the title; any
    other `# ` heading outside code becomes `## ` (an entry's `# ` line is its title)."""
    lines = body.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and (m := _HEADING_RE.match(lines[first])) and m.group(1) == title \
            and lines[first].lstrip().startswith("# "):
        lines = lines[first + 1:]
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            lines[i] = "#" + line
    return "\n".join(lines).strip("\n")


CAPTURED = "jmem capture"  # the source of a native file the PostToolUse capture filed
_SOURCE_RE = re.compile(rf"(?:{re.escape(KIND)}|{CAPTURED}): (\S+?)"
                        r"(?:@[0-9a-f]+| \(uncommitted\)| on )")


def adopted_paths(layout: Layout, sources: list[str]) -> set[str]:
    """Absolute paths of the native files the journal's entries were adopted from (their
    `source`): an index line naming one names a memory already filed, not a lost one."""
    top = layout.repo.main_root
    return {os.path.normpath(os.path.join(top, m.group(1)))
            for s in sources if (m := _SOURCE_RE.match(s))}


def memory_key(name: str | None, stem: str) -> str:
    """The key of a memory: its `name` as a slug when that is ASCII, else its file stem."""
    for value in (name if name and name.isascii() else "", stem):
        key = slugify(value, 64)
        if is_name(key):
            return key
    return ""


def known_topics(layout: Layout) -> frozenset[str]:
    """The topics the team's distilled files have (every agent's `topics/` folder in the
    main checkout): the subjects a native memory can be filed under."""
    out: set[str] = set()
    try:
        agents = os.listdir(layout.main_memory)
    except OSError:
        return frozenset()
    for agent in agents:
        try:
            names = os.listdir(os.path.join(layout.main_memory, agent, TOPICS))
        except OSError:
            continue
        out.update(n[:-3] for n in names if n.endswith(".md") and is_name(n[:-3]))
    return frozenset(out)


def subject_topic(topics: frozenset[str], *texts: str) -> str | None:
    """The longest of `topics` that one of `texts`, as a slug, starts with, word for word."""
    found = [t for text in texts if (slug := slugify(text, 64))
             for t in topics if slug == t or slug.startswith(t + "-")]
    return max(found, key=lambda t: (len(t), t)) if found else None


def file_drafts(nf: NativeFile, text: str, origin: Origin, entry_bytes: int,
                topics: frozenset[str] = frozenset()) -> list[Draft] | str:
    """The lessons a native memory file is (one, or one per part of a file over the
    entry limit), or why it cannot be any: only a secret refuses it. `topics` are the
    team's (`known_topics`): a memory whose title names one is filed under it."""
    findings = scan(text)
    if findings:
        return "secret: " + "; ".join(f.describe() for f in findings)
    fields, body, start = frontmatter(drop_comments(text))
    body = body.strip("\n")
    stem = nf.rel.rsplit("/", 1)[-1].removesuffix(".md")
    prefix = stem.split("_", 1)[0] if "_" in stem else ""
    native = fields.get("type") or fields.get("metadata.type") or prefix
    kind = native_type(native)
    title, extra = title_and_body(fields.get("description") or _first_line(body))
    if not title:
        return "empty: no description, heading or text"
    body = _demoted(body, title)
    topic = native.strip().lower() if kind else (ROOT_TOPIC if nf.agent is None else "general")
    topic = (subject_topic(topics, title, stem.removeprefix(prefix + "_") if prefix else "")
             or slugify(topic, 64) or "general")
    draft = Draft(agent=origin.agent, topic=topic, title=title, body=join_body(extra, body),
                  type=kind or "semantic", created=origin.created,
                  source=f"{origin.source}, line {start}", key=memory_key(fields.get("name"),
                                                                         stem),
                  tags=(native.strip().lower(),) if kind else (),
                  applies_to=origin.applies_to, where=f"{nf.rel}:{start}", replaces=True,
                  per_writer=True)
    return split(draft, entry_bytes)


_PART_NOTE = "(part {n} of {count} of one memory file: {where})"


def split(draft: Draft, entry_bytes: int) -> list[Draft]:
    """`draft` whole when its body fits `entry_bytes`; else one draft per part, cut at its
    own `##` sections (then paragraphs, then lines), every byte kept. The first part
    keeps the key and the title, part N is `KEY-N` titled with its first heading."""
    if len(draft.body.encode()) <= entry_bytes:
        return [draft]
    where = (draft.where or draft.source)[:200]
    room = len(_PART_NOTE.format(n=99999, count=99999, where=where).encode()) + 2
    limit = max(entry_bytes - room, 128)
    parts = _pack(_sections(draft.body), limit)
    key = draft.identity
    out = []
    for n, part in enumerate(parts, 1):
        heading = next((m.group(1) for line in part.split("\n")
                        if (m := _HEADING_RE.match(line))), "")
        title = draft.title if n == 1 else _clip(f"{draft.title}: {heading or f'part {n}'}")
        note = _PART_NOTE.format(n=n, count=len(parts), where=where)
        out.append(draft._replace(title=title, body=join_body(part, note),
                           key=key if n == 1 else f"{key[:60].rstrip('-')}-{n}"))
    return out


def _clip(title: str) -> str:
    flat = " ".join(title.split())
    return flat if len(flat) <= TITLE_MAX else flat[: TITLE_MAX - 1].rstrip() + "…"


def _sections(body: str) -> list[str]:
    """The body cut before each `#` heading outside code fences."""
    out: list[list[str]] = [[]]
    fenced = False
    for line in body.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and _HEADING_RE.match(line) and out[-1]:
            out.append([])
        out[-1].append(line)
    return ["\n".join(lines) for lines in out]


def _pack(pieces: list[str], limit: int) -> list[str]:
    """Consecutive pieces joined into parts of at most `limit` bytes; a piece over the
    limit is cut at blank lines, then lines, then characters."""
    parts: list[str] = []
    for piece in pieces:
        for chunk in _cut(piece, limit):
            if parts and len((parts[-1] + "\n" + chunk).encode()) <= limit:
                parts[-1] += "\n" + chunk
            else:
                parts.append(chunk)
    return [p.strip("\n") for p in parts if p.strip()]


def _cut(text: str, limit: int) -> list[str]:
    if len(text.encode()) <= limit:
        return [text]
    for sep in ("\n\n", "\n"):
        bits = text.split(sep)
        if len(bits) > 1:
            out: list[str] = []
            for bit in bits:
                for chunk in _cut(bit, limit):
                    if out and len((out[-1] + sep + chunk).encode()) <= limit:
                        out[-1] += sep + chunk
                    else:
                        out.append(chunk)
            return out
    out, line = [], ""
    for char in text:
        if len((line + char).encode()) > limit:
            out.append(line)
            line = ""
        line += char
    return [*out, line] if line else out


class Judged(NamedTuple):
    """Every native memory file, judged: the drafts of each adopted one, and the refused."""

    adopted: list[tuple[NativeFile, list[Draft]]]
    refused: list[tuple[NativeFile, str]]

    @property
    def drafts(self) -> list[Draft]:
        return [d for _, found in self.adopted for d in found]


def judge(layout: Layout, default_agent: str, policy: Policy,
          files: list[NativeFile] | None = None,
          adopted: set[str] | frozenset[str] = frozenset()) -> Judged:
    """Read every native memory file (or `files`) into drafts, with provenance; a file
    whose facts cannot all become valid lessons is refused, naming the problems."""
    found = native_files(layout) if files is None else files
    now = dt.datetime.now(dt.UTC)
    where = provenance(layout, found, KIND)
    topics = known_topics(layout)
    out = Judged([], [])
    for nf in found:
        text = read_text(nf.path)
        if text is None:
            out.refused.append((nf, "unreadable"))
            continue
        source, created = where[nf.rel]
        origin = Origin(nf.agent or default_agent, source, created,
                        ("all",) if nf.agent is None else ())
        if nf.is_index:
            drafts = memory_drafts(text, origin, None, index=root_resolver(layout, adopted))
            leaks = scan(text)
            if leaks:
                out.refused.append((nf, "secret: " + "; ".join(f.describe() for f in leaks)))
                continue
        else:
            made = file_drafts(nf, text, origin, policy.entry_bytes, topics)
            if isinstance(made, str):
                out.refused.append((nf, made))
                continue
            drafts = made
        problems = _problems(drafts, now, policy)
        if problems:
            out.refused.append((nf, "cannot become a lesson: " + "; ".join(problems)))
        else:
            out.adopted.append((nf, drafts))
    return out


def _problems(drafts: list[Draft], now: dt.datetime, policy: Policy) -> list[str]:
    return [p for _, p in problems_of(drafts, now, policy)]


def root_resolver(layout: Layout, adopted: set[str] | frozenset[str] = frozenset(),
                  ) -> Resolver:
    """Whether a root index link names a memory file: the path itself, or a bare file name
    that exactly one agent folder holds; on disk, or already adopted (`adopted`)."""
    top = layout.main_memory

    def there(path: str) -> bool:
        path = os.path.normpath(path)
        return path in adopted or os.path.isfile(path)

    def exists(link: str) -> bool:
        if there(os.path.join(top, link)):
            return True
        if "/" in link:
            return False
        return sum(there(os.path.join(top, a, link)) for a in layout.agents_on_disk()) == 1
    return exists


def clear(layout: Layout, judged: Judged) -> tuple[list[str], list[str]]:
    """Take the adopted files out of the memory folder once their facts are in the journal,
    so that each fact lives in one place. A refused file (it holds a secret) stays where
    it is, whole: deleting it would delete it from every clone at the next push, and the
    team's copy is theirs to fix. Returns (repo-relative paths removed, one line per file
    saying what became of it and why)."""
    removed: list[str] = []
    lines: list[str] = []
    for nf, found in judged.adopted:
        if _unlink(nf.path):
            removed.append(layout.rel(nf.path))
        lines.append(f"{layout.rel(nf.path)}: native memory adopted: {len(found)} fact(s) "
                     "filed in the journal, the file removed from the memory folder")
    for nf, why in judged.refused:
        lines.append(f"{layout.rel(nf.path)}: native memory refused ({why}); left where it "
                     "is: remove the secret (rotate it if it was real) and the next distill "
                     "adopts it")
    return removed, lines


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True

