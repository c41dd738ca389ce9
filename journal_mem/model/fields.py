"""An entry's field values (docs/DESIGN.md, "Journal entries"): each checked, each problem named.

The frontmatter arrives as a mapping of strings and lists (`frontmatter.load_yaml`,
or `build`'s Python values turned into text); `check_fields` turns it into typed
values and appends one line per problem, naming the field and the reason. The
title and body checks live here too: `build` and `parse` share every rule.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from journal_mem.names import TAG_RE, is_name

SCHEMA = 1
MAX_TAGS = 8
TYPES: dict[str, tuple[float, float, float]] = {  # type: (low, high, default)
    "principle": (1.0, 1.0, 1.0),
    "semantic": (0.7, 0.95, 0.8),
    "procedural": (0.6, 0.9, 0.75),
    "episodic": (1.0, 1.0, 1.0),
    "reflective": (0.7, 0.95, 0.8),
}
IMPORTANCE = ("critical", "high", "medium", "low")
FIELDS = (
    "schema", "agent", "created", "topic", "type", "confidence", "importance", "key",
    "supersedes", "retracts", "applies_to", "valid_until", "tags", "refs", "source",
)  # fmt: skip
EARLIEST_YEAR = 1970
FUTURE_SLACK = dt.timedelta(days=1)
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
            problems.append(f"{name}: {item!r} is not a valid name (^[a-z0-9][a-z0-9-]{{0,63}}$)")
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
    """A `created` over a day ahead would win every later correction of its key."""
    if created - now() > FUTURE_SLACK:
        problems.append(f"created: {iso(created)} is more than a day in the future "
                        "(a lesson dated ahead would override every later correction)")


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
        problems.append(f"key: {key!r} is not a valid key (^[a-z0-9][a-z0-9-]{{0,63}}$)")
    out["key"] = key
    out["supersedes"] = _names(raw, "supersedes", problems)
    out["retracts"] = _names(raw, "retracts", problems)
    out["applies_to"] = _names(raw, "applies_to", problems, allow_all=True)
    until = _scalar(raw, "valid_until", problems)
    out["valid_until"] = _parse_date(until, "valid_until", problems) if until else None
    out["tags"] = _tags(raw, problems)
    out["refs"] = _refs(raw, problems)
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
            problems.append(f"{name}: {value!r} is not a valid name (^[a-z0-9][a-z0-9-]{{0,63}}$)")
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


def _tags(raw: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    value = raw.get("tags")
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        problems.append("tags: must be a list of words")
        return ()
    tags = sorted({i.strip() for i in items if i.strip()})
    if len(tags) > MAX_TAGS:
        problems.append(f"tags: {len(tags)} tags, at most {MAX_TAGS}")
    for tag in tags:
        if not TAG_RE.fullmatch(tag) or len(tag) > 64:
            problems.append(f"tags: {tag!r} is not a valid tag (^[A-Za-z0-9][A-Za-z0-9_-]*$)")
    return tuple(tags)


def _refs(raw: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    value = raw.get("refs")
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        problems.append("refs: must be a list of repository paths")
        return ()
    out = set()
    for ref in (i.strip() for i in items):
        parts = ref.strip("/").split("/")
        if not ref:
            continue
        if ref.startswith("/") or ".." in parts or "\n" in ref or len(ref) > 1024:
            problems.append(f"refs: {ref!r} must be a path relative to the repository top")
        else:
            out.add(normalise_ref(ref))
    return tuple(sorted(out - {""}))


def normalise_ref(ref: str) -> str:
    """One spelling per path: `./README`, `README/` and `a//b/./c` become `README`, `a/b/c`."""
    import posixpath

    path = posixpath.normpath(ref.strip().strip("/"))
    return "" if path == "." else path
