"""Pending lessons: journal and outbox entries the distiller has not folded yet.

Standard library only, and no YAML on the usual path: the wake-up hook lists
every journal file name (cheap even for 10k lessons) and reads only the
pending ones, with a small reader for the few frontmatter fields it shows.
Frontmatter that reader does not understand goes through `entry.parse`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re

from journal_mem.model.foldstate import read_state
from journal_mem.store.layout import JOURNAL, Layout

# Same pattern as entry.ENTRY_NAME_RE (a test keeps them equal): importing
# entry.py costs ~20 ms, more than the whole rest of the hook.
ENTRY_NAME_RE = re.compile(r"(\d{4}-\d{2}-\d{2})-[^/]*\.md")
_FIELD_RE = re.compile(r"([a-z_]+):[ \t]*(.*)")
# YAML the small reader leaves to the real parser: tags, anchors, aliases,
# block scalars, flow mappings, continuation lines.
_UNUSUAL = ("!", "&", "*", "|", ">", "{")
_SHOWN = ("agent", "created", "key", "supersedes", "retracts", "applies_to", "confidence")


class Lesson:
    """What the wake-up pack and the reminder need to know about one pending entry."""

    __slots__ = ("agent", "applies_to", "confidence", "created", "key", "outbox", "path",
                 "problem", "rel", "retracts", "supersedes", "title")

    def __init__(self, agent: str, path: str, rel: str, outbox: bool) -> None:
        self.agent = agent
        self.path = path
        self.rel = rel
        self.outbox = outbox
        self.title = os.path.basename(path)
        self.key = ""
        self.created: dt.datetime | None = None
        self.supersedes: tuple[str, ...] = ()
        self.retracts: tuple[str, ...] = ()
        self.applies_to: tuple[str, ...] = ()
        self.confidence: float | None = None
        self.problem = ""

    def is_for(self, agent: str) -> bool:
        """True when `agent` must hold this lesson (its writer, or named by applies_to)."""
        return agent == self.agent or agent in self.applies_to or "all" in self.applies_to

    @property
    def sort_time(self) -> dt.datetime:
        return self.created or dt.datetime.min.replace(tzinfo=dt.UTC)


def folded(layout: Layout) -> set[str]:
    """Memory-root-relative paths the last distill folded (empty when it never ran)."""
    state = read_state(layout.distill_state)
    return set(state.folded) if state else set()


Found = tuple[str, str, str, bool]  # (agent folder, path, display path, in outbox)


def pending_paths(layout: Layout, agents: list[str] | None = None) -> list[Found]:
    """(agent folder, path, display path, in outbox) of every pending entry file.

    Journal entries not listed in distill-state.json, then every outbox entry.
    File names only: nothing is opened but the state file.
    """
    done = folded(layout)
    out: list[Found] = []
    for agent in layout.agents_on_disk() if agents is None else agents:
        folder = os.path.join(layout.agent_dir(agent), JOURNAL)
        prefix = f"{agent}/{JOURNAL}/"
        # membership first: with 10k lessons, matching and sorting only the
        # few unfolded names is what keeps the wake-up hook fast
        fresh = [n for n in _listdir(folder) if prefix + n not in done]
        for name in sorted(n for n in fresh if ENTRY_NAME_RE.fullmatch(n)):
            out.append((agent, os.path.join(folder, name), prefix + name, False))
    outbox = os.path.join(layout.state_dir, "outbox")
    for agent in sorted(_listdir(outbox)):
        if agents is not None and agent not in agents:
            continue
        folder = os.path.join(outbox, agent)
        for name in _entry_names(folder):
            out.append((agent, os.path.join(folder, name), f"outbox/{agent}/{name}", True))
    return out


def pending(layout: Layout) -> list[Lesson]:
    """Every pending lesson, read, newest first."""
    lessons = [read(*found) for found in pending_paths(layout)]
    lessons.sort(key=lambda x: (x.sort_time, x.rel), reverse=True)
    return lessons


def read(agent: str, path: str, rel: str, outbox: bool) -> Lesson:
    """Read one entry's shown fields; a file that cannot be read gets `problem` set."""
    lesson = Lesson(agent, path, rel, outbox)
    try:
        with open(path, "rb") as fh:
            text = fh.read(65536).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        lesson.problem = f"unreadable: {exc}"
        return lesson
    fields = _small_frontmatter(text)
    if fields is None:
        _full_parse(lesson, text)
    else:
        _fill(lesson, fields, text)
    return lesson


def _small_frontmatter(text: str) -> dict[str, str | list[str]] | None:
    """The frontmatter as {field: text or list}, or None when it needs the real YAML parser."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    fields: dict[str, str | list[str]] = {}
    current = ""
    for line in lines[1:]:
        if line.rstrip() == "---":
            return fields
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line.startswith((" ", "-", "\t")):
            value = stripped[1:].strip() if stripped.startswith("-") else ""
            target = fields.get(current)
            if not value or not isinstance(target, list) or value.startswith(_UNUSUAL):
                return None
            target.append(_unquote(value))
            continue
        match = _FIELD_RE.fullmatch(line.rstrip())
        if match is None:
            return None
        current, value = match.group(1), match.group(2).strip()
        if value.startswith(_UNUSUAL):
            return None
        fields[current] = _flow_list(value) if value.startswith("[") or not value else value
        if isinstance(fields[current], str):
            fields[current] = _unquote(value)
    return None


def _flow_list(value: str) -> list[str]:
    if not value:
        return []
    try:
        items = json.loads(value)
    except ValueError:
        items = [_unquote(v.strip()) for v in value.strip("[]").split(",") if v.strip()]
    return [str(i) for i in items] if isinstance(items, list) else [str(items)]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _words(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else (value,)


def _fill(lesson: Lesson, fields: dict[str, str | list[str]], text: str) -> None:
    lesson.title = _title(text) or lesson.title
    key = fields.get("key")
    lesson.key = key if isinstance(key, str) and key else _slug(lesson.title)
    lesson.created = _created(fields.get("created"), os.path.basename(lesson.path))
    lesson.supersedes = _words(fields.get("supersedes"))
    lesson.retracts = _words(fields.get("retracts"))
    lesson.applies_to = _words(fields.get("applies_to"))
    conf = fields.get("confidence")
    try:
        lesson.confidence = float(conf) if isinstance(conf, str) else None
    except ValueError:
        lesson.confidence = None


def _full_parse(lesson: Lesson, text: str) -> None:
    """The real parser, for frontmatter the small reader does not handle."""
    from journal_mem.errors import InvalidEntry
    from journal_mem.model.entry import parse

    try:
        entry = parse(text.encode("utf-8"), filename=os.path.basename(lesson.path))
    except InvalidEntry as exc:
        lesson.problem = exc.problems[0] if exc.problems else "invalid entry"
        return
    lesson.title, lesson.key, lesson.created = entry.title, entry.key, entry.created
    lesson.supersedes, lesson.retracts = entry.supersedes, entry.retracts
    lesson.applies_to, lesson.confidence = entry.applies_to, entry.confidence


def _title(text: str) -> str:
    body = text.split("\n---", 2)[-1] if text.startswith("---") else text
    for line in body.split("\n"):
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:64]


def _created(value: str | list[str] | None, name: str) -> dt.datetime | None:
    """`created`, else the file name's date; always timezone-aware.

    docs/DESIGN.md, "Journal entries".
    """
    if isinstance(value, str) and value:
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            when = None
        if when is not None:
            return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    match = ENTRY_NAME_RE.fullmatch(name)
    if match:
        try:
            day = dt.date.fromisoformat(match.group(1))
        except ValueError:
            return None
        return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    return None


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _entry_names(folder: str) -> list[str]:
    return sorted(n for n in _listdir(folder) if ENTRY_NAME_RE.fullmatch(n))
