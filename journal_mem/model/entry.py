"""The journal entry (docs/DESIGN.md, "Journal entries"): parse and render, pure and total.

`parse` takes any bytes and returns an `Entry` or raises `InvalidEntry` with
one line per problem, naming the field and the reason. The frontmatter is read
strictly by `frontmatter.load_yaml`; each field is checked by `fields`, the
title and body by `entrytext`. The names they define that other modules use
are importable from here too.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Any

from journal_mem import names
from journal_mem.errors import InvalidEntry
from journal_mem.model import entrytext, fields, frontmatter
from journal_mem.model.entrytext import check_body, check_title, clean_body
from journal_mem.model.fields import CONFLICT_RE, Date, check_fields, iso, now

# The entry's vocabulary, importable from here where its users look for it.
SCHEMA = fields.SCHEMA
TITLE_MAX = entrytext.TITLE_MAX
MAX_TAGS = fields.MAX_TAGS
TYPES = fields.TYPES
IMPORTANCE = fields.IMPORTANCE
FIELDS = fields.FIELDS
FRONTMATTER_MAX = frontmatter.FRONTMATTER_MAX
normalise_ref = fields.normalise_ref
ENTRY_NAME_RE = re.compile(r"(\d{4}-\d{2}-\d{2})-[^/]*\.md")
# a plain entry's title may end with its date: "# Lesson (2026-08-13)"
_PLAIN_DATE_RE = re.compile(r"[ \t]*\(\d{4}-\d{2}-\d{2}\)[ \t]*$")


@dataclass(frozen=True, slots=True)
class Entry:
    """One lesson. Lists are sorted tuples so that equal entries compare equal."""

    agent: str
    topic: str
    title: str
    created: dt.datetime
    body: str = ""
    type: str = "semantic"
    confidence: float = 0.8
    importance: str = "medium"
    key: str = ""
    supersedes: tuple[str, ...] = ()
    retracts: tuple[str, ...] = ()
    applies_to: tuple[str, ...] = ()
    valid_until: Date | None = None
    tags: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    source: str | None = None
    schema: int = field(default=SCHEMA)

    @property
    def holders_hint(self) -> tuple[str, ...]:
        """Agents this entry names: its writer and its `applies_to` (may hold "all")."""
        return tuple(sorted({self.agent, *self.applies_to}))


def default_key(title: str, *, episodic_at: dt.datetime | None = None) -> str:
    """The key of a lesson that names none (`names.default_key`).

    An episodic record is one run's story: its key also hashes its `created`
    (`episodic_at`), so that three runs with the same title stay three records.
    """
    if episodic_at is not None:
        return names.default_key(f"{title} @ {episodic_at.isoformat()}")
    return names.default_key(title)


def build(
    *,
    agent: str,
    topic: str,
    title: str,
    body: str = "",
    created: dt.datetime | None = None,
    entry_bytes: int = 8192,
    **fields: Any,
) -> Entry:
    """Validate field values given as Python values (by `write`), exactly as `parse` does."""
    raw: dict[str, Any] = {}
    for name, value in fields.items():
        if isinstance(value, (list, tuple)):
            raw[name] = [str(v) for v in value]
        elif value is not None:
            raw[name] = str(value)
    raw["agent"] = agent
    raw["topic"] = topic
    if created is not None:
        raw["created"] = created.isoformat()
    problems: list[str] = []
    values = check_fields(raw, problems, created_fallback=now() if created is None else None)
    title = title.strip()
    check_title(title, problems)
    body = clean_body(body)
    check_body(body, entry_bytes, problems)
    for name, text in (("title", title), ("body", body), ("source", fields.get("source") or "")):
        if CONFLICT_RE.search(text):
            problems.append(f"{name}: holds unresolved conflict markers (<<<<<<< / >>>>>>>)")
        try:
            str(text).encode("utf-8")
        except UnicodeEncodeError:
            problems.append(f"{name}: not valid UTF-8 text")
    if problems:
        raise InvalidEntry(problems)
    return _make(values, title, body)


def parse(
    data: bytes,
    *,
    filename: str | None = None,
    folder_agent: str | None = None,
    entry_bytes: int = 8192,
    default_topic: str = "general",
) -> Entry:
    """Parse one entry file. Any bytes in; an `Entry` out or `InvalidEntry` raised.

    `filename` supplies the date of a hand-written entry without `created`;
    `folder_agent` is the journal folder it lives in (its `agent` must match).
    A plain file (no frontmatter, a `# ` title first) is a lesson of type
    semantic on `default_topic`, its agent from the folder, its date from the
    file name (see `plain_fields`).
    """
    problems: list[str] = []
    text = _decode(data, entry_bytes, problems)
    if text is None:
        raise InvalidEntry(problems)
    raw, body_text = _raw_fields(text, filename, folder_agent, default_topic, problems)
    if raw is None:
        raise InvalidEntry(problems)
    values = check_fields(raw, problems, created_fallback=_name_date(raw, filename, problems))
    if folder_agent is not None and values.get("agent") not in (None, folder_agent):
        problems.append(f"agent: {values['agent']!r} does not match its folder {folder_agent!r}")
    if CONFLICT_RE.search(body_text):
        problems.append("body: holds unresolved conflict markers (<<<<<<< / >>>>>>>)")
    title, body = _title_and_body(body_text, problems)
    check_body(body, entry_bytes, problems)
    if problems:
        raise InvalidEntry(problems)
    return _make(values, title, body)


def _raw_fields(text: str, filename: str | None, folder_agent: str | None,
                default_topic: str, problems: list[str]) -> tuple[dict[str, Any] | None, str]:
    """(frontmatter fields or None after a problem, body text) of a decoded file."""
    front, body_text, problem = frontmatter.split(text)
    if front is None and not problem and is_plain(body_text):
        raw = plain_fields(folder_agent, default_topic, filename, problems)
        title, _, rest = body_text.lstrip("\n").partition("\n")
        return raw, _PLAIN_DATE_RE.sub("", title) + "\n" + rest
    if front is None:
        problems.append(problem or "frontmatter: missing (an entry starts with a '---' line), "
                        "and not a plain entry either (its first line is a '# ' title)")
        return None, body_text
    return frontmatter.load_yaml(front, problems), body_text


def _name_date(raw: dict[str, Any], filename: str | None,
               problems: list[str]) -> dt.datetime | None:
    """The date of the file name, for an entry without `created`."""
    if "created" in raw or filename is None:
        return None
    match = ENTRY_NAME_RE.fullmatch(filename.rsplit("/", 1)[-1])
    if not match:
        return None
    try:
        day = dt.date.fromisoformat(match.group(1))
    except ValueError:
        problems.append(f"created: missing, and the file name date {match.group(1)!r} "
                        "is not a real date")
        return None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def is_plain(text: str) -> bool:
    """True when `text` (no frontmatter) starts with a `# ` title: a plain entry."""
    first = text.lstrip("\n").split("\n", 1)[0]
    return first.startswith("# ")


def plain_fields(agent: str | None, topic: str, filename: str | None,
                 problems: list[str]) -> dict[str, Any] | None:
    """The frontmatter a plain entry stands for: its folder's agent and `topic`
    (its date comes from the file name, as for any entry without `created`)."""
    if agent is None:
        problems.append("agent: a plain entry (no frontmatter) takes its agent from its "
                        "journal folder; give --agent")
    if filename is None or not ENTRY_NAME_RE.fullmatch(filename.rsplit("/", 1)[-1]):
        problems.append("created: a plain entry (no frontmatter) takes its date from its file "
                        "name: YYYY-MM-DD-….md")
    return None if problems else {"agent": agent, "topic": topic}


def render(entry: Entry) -> str:
    """The file text of an entry: deterministic, LF, one trailing newline."""
    lines = ["---", f"schema: {entry.schema}", f"agent: {entry.agent}"]
    lines.append(f"created: {iso(entry.created)}")
    lines += [f"topic: {entry.topic}", f"type: {entry.type}"]
    lines += [f"confidence: {entry.confidence!r}", f"importance: {entry.importance}"]
    lines.append(f"key: {entry.key}")
    for name in ("supersedes", "retracts"):
        if getattr(entry, name):
            lines.append(f"{name}: {_flow(getattr(entry, name))}")
    if entry.applies_to and entry.applies_to != (entry.agent,):
        lines.append(f"applies_to: {_flow(entry.applies_to)}")
    if entry.valid_until is not None:
        lines.append(f"valid_until: {iso(entry.valid_until)}")
    if entry.tags:
        lines.append(f"tags: {_flow(entry.tags)}")
    if entry.refs:
        lines.append(f"refs: {_flow(entry.refs)}")
    if entry.source is not None:
        lines.append(f"source: {json.dumps(entry.source, ensure_ascii=False)}")
    lines += ["---", "", f"# {entry.title}"]
    if entry.body:
        lines += ["", entry.body]
    return "\n".join(lines) + "\n"




# --- helpers ---------------------------------------------------------------


def _flow(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(i, ensure_ascii=False) for i in items) + "]"


def _decode(data: bytes, entry_bytes: int, problems: list[str]) -> str | None:
    limit = entry_bytes + FRONTMATTER_MAX + TITLE_MAX * 4 + 64
    if len(data) > limit:
        problems.append(f"file: {len(data)} bytes, over the {limit}-byte limit for an entry")
        return None
    if b"\x00" in data:
        problems.append(f"file: holds a NUL byte at offset {data.index(0)}")
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"file: not valid UTF-8 (byte offset {exc.start})")
        return None
    # A checkout with core.autocrlf (or `eol=crlf`) turns every LF into CRLF: the
    # entry is the same lesson, and losing it would drop its fact at the next distill.
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        problems.append("file: holds a bare CR character; journal entries use LF line endings")
        return None
    return text


def _title_and_body(text: str, problems: list[str]) -> tuple[str, str]:
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if line.startswith("# "):
            title = line[2:].strip()
            check_title(title, problems)
            return title, clean_body("\n".join(lines[index + 1 :]))
        break
    problems.append("title: missing; the body must start with a '# ' heading line")
    return "", ""


def _make(values: dict[str, Any], title: str, body: str) -> Entry:
    agent = values["agent"]
    return Entry(
        agent=agent,
        topic=values["topic"],
        title=title,
        created=values["created"],
        body=body,
        type=values["type"],
        confidence=values["confidence"],
        importance=values["importance"],
        key=values["key"] or default_key(
            title, episodic_at=values["created"] if values["type"] == "episodic" else None),
        supersedes=values["supersedes"],
        retracts=values["retracts"],
        applies_to=values["applies_to"] or (agent,),
        valid_until=values["valid_until"],
        tags=values["tags"],
        refs=values["refs"],
        source=values["source"],
    )
