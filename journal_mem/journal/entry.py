"""The journal entry (docs/DESIGN.md, "Journal entries"): parse and render, pure and total.

`parse` takes any bytes and returns an `Entry` or raises `InvalidEntry` with
one line per problem, naming the field and the reason. The frontmatter is read
strictly by `frontmatter.load_yaml`; each field is checked by `fields`, the
title and body by `entrytext`. The names they define that other modules use
are importable from here too.

An entry's title and body (docs/DESIGN.md, "Journal entries"): what a reader sees.

The title becomes the default key and the file name, so it is one visible line
without secrets; the body fits `budget.entry_bytes`. `build` and `parse` share
these checks.

An entry's field values (docs/DESIGN.md, "Journal entries"): each checked, each problem named.

The frontmatter arrives as a mapping of strings and lists (`frontmatter.load_yaml`,
or `build`'s Python values turned into text); `check_fields` turns it into typed
values and appends one line per problem, naming the field and the reason. The
title and body checks live here too: `build` and `parse` share every rule.
"""

from __future__ import annotations

import datetime as dt
import operator
import posixpath
import re

from journal_mem import jsonc, names
from journal_mem.errors import InvalidEntry
from journal_mem.journal import frontmatter
from journal_mem.journal.anchor import anchor_problem, line_range
from journal_mem.journal.anchor import split as split_ref
from journal_mem.names import ENTRY_NAME_RE, NAME_PATTERN, is_name, not_a_name, tag_re

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from typing import Any

TITLE_MAX = 150
# Unicode categories a title must not hold: controls (VT, FF, NEL), format characters
# (bidi overrides, zero-width), line and paragraph separators. Each changes what a
# reader sees, or where a line ends, differently in different tools.
BAD_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def clean_body(body: str) -> str:
    lines = [line.rstrip() for line in body.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def check_title(title: str, problems: list[str]) -> None:
    if not title:
        problems.append("title: empty")
    elif len(title) > TITLE_MAX:
        problems.append(f"title: {len(title)} characters, at most {TITLE_MAX}")
    elif "\n" in title or "\r" in title:
        problems.append("title: must be one line")
    else:
        _check_title_text(title, problems)
        _check_title_secret(title, problems)


CODE_SPAN_RE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")  # a code span shows `<!--` as text


def _check_title_text(title: str, problems: list[str]) -> None:
    """No invisible or line-breaking characters, no HTML comment (hidden when rendered)."""
    import unicodedata

    # every bad category is one `isprintable` refuses: a printable title has none
    bad = [] if title.isprintable() else sorted(
        {f"U+{ord(c):04X}" for c in title if unicodedata.category(c) in BAD_CATEGORIES})
    if bad:
        problems.append(f"title: holds control or invisible characters ({', '.join(bad)})")
    # a lone `-->` (an arrow: "API --> queue") opens nothing; in a code span `<!--` is
    # shown as written ("`<!-- prettier-ignore -->` keeps a table")
    if "<!--" in CODE_SPAN_RE.sub("", title):
        problems.append("title: holds an HTML comment marker (<!--), which rendered "
                        "views hide")


def _check_title_secret(title: str, problems: list[str]) -> None:
    """A title becomes the default key and the entry's file name, both for good: one that
    holds a secret is refused whatever `guard.scan_secrets` says, before any name is built."""
    from journal_mem.journal.secrets import scan

    for finding in scan(title):
        problems.append(f"title: {finding.kind.replace('_', ' ')} in the title (a title "
                        "becomes the key and the file name: leave the secret out)")


def check_body(body: str, entry_bytes: int, problems: list[str]) -> None:
    size = len(body.encode("utf-8", "surrogatepass"))
    if size > entry_bytes:
        problems.append(f"body: {size} bytes, over the {entry_bytes}-byte limit (entry_bytes)")
    if "\x00" in body:
        problems.append("body: holds a NUL character")


SCHEMA = 1
MAX_TAGS = 8
TYPES: dict[str, tuple[float, float, float]] = {  # type: (low, high, default), LESSON_TYPES
    "principle": (1.0, 1.0, 1.0),
    "semantic": (0.7, 0.95, 0.8),
    "procedural": (0.6, 0.9, 0.75),
    "episodic": (1.0, 1.0, 1.0),
    "reflective": (0.7, 0.95, 0.8),
}
IMPORTANCE = ("critical", "high", "medium", "low")
FIELDS = (
    "schema", "agent", "created", "topic", "type", "confidence", "importance", "key",
    "supersedes", "retracts", "drops", "knew", "applies_to", "valid_until", "tags", "refs",
    "cited", "source",
)  # fmt: skip
EARLIEST_YEAR = 1970
FUTURE_SLACK = dt.timedelta(days=31)
CONFLICT_RE = re.compile(r"^(<{7}|>{7})(?: |$)", re.MULTILINE)

Date = dt.date | dt.datetime




def now() -> dt.datetime:
    now = dt.datetime.now(dt.UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def iso(value: Date) -> str:
    if isinstance(value, dt.datetime):
        micro = value.microsecond
        spec = "seconds" if not micro else "milliseconds" if micro % 1000 == 0 else "microseconds"
        return value.isoformat(timespec=spec)
    return value.isoformat()



def _scalar(raw: dict[str, Any], name: str, problems: list[str]) -> str | None:
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        problems.append(f"{name}: must be a single value, not a list or mapping")
        return None
    value = value.strip()
    return value or None


def _names(
    raw: dict[str, Any], name: str, problems: list[str], allow_all: bool = False
) -> tuple[str, ...]:
    value = raw.get(name)
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        problems.append(f"{name}: must be a name or a list of names")
        return ()
    out = set()
    for item in (i.strip() for i in items):
        if not item:
            continue
        if (allow_all and item == "all") or is_name(item):
            out.add(item)
        else:
            problems.append(f"{name}: {not_a_name(item)}")
    return tuple(sorted(out))


MAX_KNEW = 64
_KNEW_RE = re.compile(names.NAME + r"/journal/\d{4}-\d{2}-\d{2}-[^/\\\n]*\.md")


def _knew(raw: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    """`knew`: the journal entries (memory-root-relative paths) this one was written
    after, as `write` read them; the fold replays it after each of them."""
    value = raw.get("knew")
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        problems.append("knew: must be a list of journal paths (AGENT/journal/FILE.md)")
        return ()
    out = {i.strip() for i in items if i.strip()}
    for item in sorted(out):
        if not _KNEW_RE.fullmatch(item):
            problems.append(f"knew: {item!r} is not a journal path (AGENT/journal/FILE.md)")
    if len(out) > MAX_KNEW:
        problems.append(f"knew: {len(out)} paths, at most {MAX_KNEW}")
    return tuple(sorted(out))


def _parse_datetime(text: str, name: str, problems: list[str]) -> dt.datetime | None:
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        problems.append(f"{name}: {text!r} is not an ISO-8601 datetime")
        return None
    if value.tzinfo is None:
        problems.append(f"{name}: {text!r} has no UTC offset (add +00:00 or Z)")
        return None
    try:  # 0001-01-01T00:00+14:00 and 9999-12-31T23:00-05:00 have no UTC time
        utc = value.astimezone(dt.UTC)
        utc + dt.timedelta(days=2)
        utc - dt.timedelta(days=2)
    except OverflowError:
        problems.append(f"{name}: {text!r} is out of range (no UTC time near it)")
        return None
    if utc.year < EARLIEST_YEAR:
        problems.append(f"{name}: {text!r} is before {EARLIEST_YEAR}")
        return None
    return value


def _check_not_future(created: dt.datetime, problems: list[str]) -> None:
    """A `created` a month ahead is a typo (2099, a swapped month), not a clock.

    Clocks of a team's machines disagree by minutes or days: a lesson from a
    machine whose clock is ahead must stay valid on the others, or a machine
    behind would not even see the fact it corrects. The order of corrections
    does not depend on `created` (`journal/order.py`)."""
    if created - now() > FUTURE_SLACK:
        problems.append(f"created: {iso(created)} is more than {FUTURE_SLACK.days} days in "
                        "the future (a typo, not a clock)")


def _parse_date(text: str, name: str, problems: list[str]) -> Date | None:
    if len(text) == 10:
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            problems.append(f"{name}: {text!r} is not a real date (YYYY-MM-DD)")
            return None
    return _parse_datetime(text, name, problems)


def check_fields(
    raw: dict[str, Any], problems: list[str], created_fallback: dt.datetime | None
) -> dict[str, Any]:
    """Validate every frontmatter field; unknown ones are problems.

    Problems come in field order (unknown fields and schema first), so that a
    writer reads them top to bottom as in the file.
    """
    _check_known(raw, problems)
    out = _identity(raw, problems, created_fallback)
    out.update(_kind(raw, problems))
    importance = _scalar(raw, "importance", problems) or "medium"
    if importance not in IMPORTANCE:
        problems.append(f"importance: {importance!r} is not one of {', '.join(IMPORTANCE)}")
    out["importance"] = importance
    key = _scalar(raw, "key", problems)
    if key is not None and not is_name(key):
        problems.append(f"key: {key!r} is not a valid key ({NAME_PATTERN})")
    out["key"] = key
    out["supersedes"] = _names(raw, "supersedes", problems)
    out["retracts"] = _names(raw, "retracts", problems)
    out["drops"] = _names(raw, "drops", problems)
    out["knew"] = _knew(raw, problems)
    out["applies_to"] = _names(raw, "applies_to", problems, allow_all=True)
    until = _scalar(raw, "valid_until", problems)
    out["valid_until"] = _parse_date(until, "valid_until", problems) if until else None
    out["tags"] = _tags(raw, problems)
    out["refs"] = _refs(raw, problems)
    out["cited"] = _cited(raw, problems)
    source = _scalar(raw, "source", problems)
    if source is not None and ("\n" in source or len(source) > 500):
        problems.append("source: must be one line of at most 500 characters")
    out["source"] = source
    return out


def _check_known(raw: dict[str, Any], problems: list[str]) -> None:
    """Unknown fields (with the likely meant one) and an unsupported schema."""
    for unknown in sorted(set(raw) - set(FIELDS)):
        import difflib

        close = difflib.get_close_matches(unknown, FIELDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problems.append(f"{unknown}: unknown field{hint}")
    schema = _scalar(raw, "schema", problems)
    if schema is not None and schema != str(SCHEMA):
        problems.append(f"schema: {schema!r} is not supported (this version reads schema 1)")


def _identity(
    raw: dict[str, Any], problems: list[str], created_fallback: dt.datetime | None
) -> dict[str, Any]:
    """`agent`, `topic` and `created` (or the fallback date of the file name)."""
    out: dict[str, Any] = {}
    for name in ("agent", "topic"):
        value = _scalar(raw, name, problems)
        if value is None:
            if name not in raw or isinstance(raw.get(name), str):
                problems.append(f"{name}: required")
        elif not is_name(value):
            problems.append(f"{name}: {not_a_name(value)}")
        else:
            out[name] = value
    created = _scalar(raw, "created", problems)
    if created is not None:
        out["created"] = _parse_datetime(created, "created", problems)
        if out["created"] is not None:
            _check_not_future(out["created"], problems)
    elif created_fallback is not None:
        out["created"] = created_fallback
    else:
        problems.append("created: required (an ISO-8601 datetime with offset)")
    return out


def _kind(raw: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """`type` and a `confidence` within that type's range (its default when absent)."""
    kind = _scalar(raw, "type", problems) or "semantic"
    if kind not in TYPES:
        problems.append(f"type: {kind!r} is not one of {', '.join(TYPES)}")
        kind = "semantic"
    low, high, default = TYPES[kind]
    conf_text = _scalar(raw, "confidence", problems)
    confidence = default
    if conf_text is not None:
        try:
            confidence = float(conf_text)
        except ValueError:
            problems.append(f"confidence: {conf_text!r} is not a number")
        else:
            if not low <= confidence <= high:
                span = f"{low}" if low == high else f"{low}–{high}"
                problems.append(f"confidence: {confidence} is outside {span} for type {kind}")
    return {"type": kind, "confidence": confidence}


def _strings(raw: dict[str, Any], name: str, what: str, problems: list[str]) -> list[str]:
    """A field that holds one string or a list of them, as a list ([] when absent)."""
    value = raw.get(name)
    if value is None or value == "":
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        problems.append(f"{name}: must be a list of {what}")
        return []
    return items


def _tags(raw: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    items = _strings(raw, "tags", "words", problems)
    tags = sorted({i.strip() for i in items if i.strip()})
    if len(tags) > MAX_TAGS:
        problems.append(f"tags: {len(tags)} tags, at most {MAX_TAGS}")
    for tag in tags:
        if not tag_re().fullmatch(tag) or len(tag) > 64:
            problems.append(f"tags: {tag!r} is not a valid tag (^[A-Za-z0-9][A-Za-z0-9_-]*$)")
    return tuple(tags)


def _refs(raw: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    items = _strings(raw, "refs", "repository paths", problems)
    out = set()
    for ref in (i.strip() for i in items):
        path, anchor = split_ref(ref)
        parts = path.strip("/").split("/")
        if not ref:
            continue
        if path.startswith("/") or ".." in parts or "\n" in ref or len(ref) > 1024:
            problems.append(f"refs: {ref!r} must be a path relative to the repository top")
        elif (why := anchor_problem(anchor)) is not None:
            problems.append(f"refs: {path}{why}")
        else:
            out.add(normalise_ref(ref))
    return tuple(sorted(out - {""}))


def normalise_ref(ref: str) -> str:
    """One spelling per path: `./README`, `README/` and `a//b/./c` become `README`, `a/b/c`;
    an anchor (`#L10-L12`, `#name`) is kept as written, `#L10-12` as `#L10-L12`."""
    raw, anchor = split_ref(ref.strip())
    path = posixpath.normpath(raw.strip().strip("/"))
    if path == ".":
        return ""
    span = line_range(anchor) if anchor else None
    if span is not None:
        anchor = f"L{span[0]}" if span[0] == span[1] else f"L{span[0]}-L{span[1]}"
    return f"{path}#{anchor}" if anchor else path


CITED_RE = re.compile(r"([0-9a-f]{40}) ([0-9a-f]{16}|-) (clean|dirty) (\S.*)")


def _cited(raw: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    """`cited`: what each anchored ref cited when it was filed (`journal/citations.py`)."""
    items = _strings(raw, "cited", "citations", problems)
    for item in items:
        if not CITED_RE.fullmatch(item):
            problems.append(f"cited: {item!r} is not `COMMIT DIGEST clean|dirty REF` "
                            "(jmem writes it; leave it out of a hand-written entry)")
    return tuple(sorted(set(items)))


# The entry's vocabulary, importable from here where its users look for it.
FRONTMATTER_MAX = frontmatter.FRONTMATTER_MAX
# a plain entry's title may end with its date: "# Lesson (2026-08-13)"
_PLAIN_DATE_RE = re.compile(r"[ \t]*\(\d{4}-\d{2}-\d{2}\)[ \t]*$")


class FrozenEntryError(AttributeError):
    """An entry's field was set or deleted: entries are values (as a frozen dataclass's
    `FrozenInstanceError`, which is an `AttributeError` too)."""


# The entry's fields, in order: its constructor's parameters, its pickled state, its rows
# in the entry cache (`cache.builder`).
SLOTS = ("agent", "topic", "title", "created", "body", "type", "confidence", "importance",
         "key", "supersedes", "retracts", "drops", "knew", "applies_to", "valid_until",
         "tags", "refs", "cited", "source", "schema")


class Entry:
    """One lesson. Lists are sorted tuples so that equal entries compare equal.

    A value, written out as a frozen, slotted dataclass would make it: `dataclasses` and
    the `inspect` it imports cost every `jmem write` and every capture of a native
    memory write ~11 ms (a bare start is 10-18 ms here). It equals (same class, same
    fields), hashes and pickles as that dataclass did (`tests/journal/test_values.py`)."""

    __slots__ = SLOTS

    agent: str
    topic: str
    title: str
    created: dt.datetime
    body: str
    type: str
    confidence: float
    importance: str
    key: str
    supersedes: tuple[str, ...]
    retracts: tuple[str, ...]
    drops: tuple[str, ...]
    knew: tuple[str, ...]
    applies_to: tuple[str, ...]
    valid_until: Date | None
    tags: tuple[str, ...]
    refs: tuple[str, ...]
    cited: tuple[str, ...]  # "COMMIT DIGEST clean|dirty REF" (journal/citations.py)
    source: str | None
    schema: int

    def __init__(self, agent: str, topic: str, title: str, created: dt.datetime,
                 body: str = "", type: str = "semantic",
                 confidence: float = 0.8, importance: str = "medium", key: str = "",
                 supersedes: tuple[str, ...] = (), retracts: tuple[str, ...] = (),
                 drops: tuple[str, ...] = (), knew: tuple[str, ...] = (),
                 applies_to: tuple[str, ...] = (), valid_until: Date | None = None,
                 tags: tuple[str, ...] = (), refs: tuple[str, ...] = (),
                 cited: tuple[str, ...] = (), source: str | None = None,
                 schema: int = SCHEMA) -> None:
        _set(self, "agent", agent)
        _set(self, "topic", topic)
        _set(self, "title", title)
        _set(self, "created", created)
        _set(self, "body", body)
        _set(self, "type", type)
        _set(self, "confidence", confidence)
        _set(self, "importance", importance)
        _set(self, "key", key)
        _set(self, "supersedes", supersedes)
        _set(self, "retracts", retracts)
        _set(self, "drops", drops)
        _set(self, "knew", knew)
        _set(self, "applies_to", applies_to)
        _set(self, "valid_until", valid_until)
        _set(self, "tags", tags)
        _set(self, "refs", refs)
        _set(self, "cited", cited)
        _set(self, "source", source)
        _set(self, "schema", schema)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenEntryError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenEntryError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return _values(self) == _values(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(_values(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(SLOTS, _values(self),
                                                                     strict=True))
        return f"{self.__class__.__qualname__}({shown})"

    def __getstate__(self) -> list[object]:
        return list(_values(self))

    def __setstate__(self, state: list[object]) -> None:
        for name, value in zip(SLOTS, state, strict=True):
            _set(self, name, value)

    def replace(self, **changes: Any) -> Entry:
        """This entry with the fields `changes` names set to its values (as
        `dataclasses.replace`: a new entry of the same class)."""
        unknown = changes.keys() - _NAMES
        if unknown:
            raise TypeError(f"Entry has no field {sorted(unknown)[0]!r}")
        return self.__class__(**{**dict(zip(SLOTS, _values(self), strict=True)), **changes})

    @property
    def holders_hint(self) -> tuple[str, ...]:
        """Agents this entry names: its writer and its `applies_to` (may hold "all")."""
        return tuple(sorted({self.agent, *self.applies_to}))


_set = object.__setattr__
_values = operator.attrgetter(*SLOTS)  # the field values, in order, read in C
_NAMES = frozenset(SLOTS)


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
    for name in ("supersedes", "retracts", "drops", "knew"):
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
    if entry.cited:
        lines.append(f"cited: {_flow(entry.cited)}")
    if entry.source is not None:
        lines.append(f"source: {jsonc.quoted(entry.source)}")
    lines += ["---", "", f"# {entry.title}"]
    if entry.body:
        lines += ["", entry.body]
    return "\n".join(lines) + "\n"




# --- helpers ---------------------------------------------------------------


def _flow(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(jsonc.quoted(i) for i in items) + "]"


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
        drops=values["drops"],
        knew=values["knew"],
        applies_to=values["applies_to"] or (agent,),
        valid_until=values["valid_until"],
        tags=values["tags"],
        refs=values["refs"],
        cited=values["cited"],
        source=values["source"],
    )
