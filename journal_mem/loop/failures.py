"""Failure memory for the `fail-diag` loop point.

Each diagnosed failure is recorded as an `episodic` lesson (one per run,
never merged with another) tagged with its signature: the failing check and
the first line of the error with numbers, hex ids, quoted values and
directories taken out, so that "test_api failed at line 41 in /tmp/x1" and
"... line 57 in /tmp/x9" are one signature. Before recording, the point
returns the earlier failures with that signature (count, dates, keys) and the
live facts most like the error text (the fixes someone wrote down). When one
signature has failed `loop.repeat_failures` times, one `reflective` lesson
says so, once: its key is derived from the signature.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from journal_mem.errors import InvalidEntry
from journal_mem.hashes import sha256
from journal_mem.loop.lessons import record_lesson
from journal_mem.loop.result import Result
from journal_mem.recall.query import Filters, content_words, recall

if TYPE_CHECKING:
    from journal_mem.repo import Context

TOPIC = "failures"
_NOISE = [
    (re.compile(r"(?:[\w.-]*/)+([\w.-]+)"), r"\1"),  # a path → its last part
    (re.compile(r"0x[0-9a-f]+|\b[0-9a-f]{7,}\b"), "#"),  # addresses, hashes
    (re.compile(r"\d+(?:\.\d+)*"), "#"),  # numbers, versions, times
    (re.compile(r"(['\"]).*?\1"), "'…'"),  # quoted values
    (re.compile(r"\s+"), " "),
]


def first_line(text: str) -> str:
    """The first line of an error that says something."""
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def signature(check: str, error: str) -> str:
    """A short stable id of a failure: the check and the normalised first error line."""
    line = first_line(error).lower()
    for pattern, repl in _NOISE:
        line = pattern.sub(repl, line)
    return sha256(f"{check.strip().lower()}\0{line.strip()}".encode()).hexdigest()[:12]


def _signals(context: dict[str, Any]) -> tuple[str, str, list[str]]:
    error, check = context.get("error") or "", context.get("check") or ""
    files = context.get("files") or []
    if not isinstance(error, str) or not isinstance(check, str):
        raise InvalidEntry(["error and check: must be strings"])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise InvalidEntry(["files: must be a list of paths"])
    if not error.strip() and not check.strip():
        raise InvalidEntry(["fail-diag needs the failure's signals: error and/or check"])
    return check.strip(), error, files


def diagnose(ctx: Context, context: dict[str, Any]) -> Result:
    """Earlier failures with this signature, similar facts, and this failure recorded."""
    check, error, files = _signals(context)
    threshold = context.get("repeat_after", ctx.config.loop.repeat_failures)
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 2:
        raise InvalidEntry(["repeat_after: must be a whole number of at least 2"])
    sig = signature(check, error)
    tag = f"sig-{sig}"
    agent = context.get("agent")
    tagged = recall(ctx, "", filters=Filters(tag=tag), limit=10_000)
    earlier = [h for h in tagged if h.type == "episodic"]
    words = " ".join(content_words(f"{check} {first_line(error)} {' '.join(files)}")[:12])
    similar = [h for h in recall(ctx, words, agent=agent, limit=5) if h.key not in
               {e.key for e in tagged}] if words else []
    result = Result(found=[h.as_json() for h in [*earlier, *similar]])
    result.details = {"signature": sig, "earlier": len(earlier),
                      "dates": sorted(h.date for h in earlier),
                      "keys": [h.key for h in earlier]}
    if context.get("record", True) is not False:
        result.written.append(_record(ctx, context, check, error, files, tag))
    count = len(earlier) + (1 if result.written else 0)
    result.details["count"] = count
    already = any(h.type == "reflective" for h in tagged)
    if count >= threshold and not already:
        result.written.append(_repeated(ctx, context, check, error, sig, count, earlier))
        result.details["repeated_lesson"] = result.written[-1]
    return result


def _record(ctx: Context, context: dict[str, Any], check: str, error: str, files: list[str],
            tag: str) -> str:
    head = first_line(error) or "failed"
    title = f"Failed {check}: {head}" if check else f"Failure: {head}"
    body = error.strip()[:2000] + (f"\n\nFiles: {', '.join(files)}" if files else "")
    lesson = {"title": _cut(title), "body": body, "type": "episodic", "topic": TOPIC,
              "tags": ["fail-diag", tag]}
    return record_lesson(ctx, context, lesson, str(context.get("run_id") or ""), "fail-diag")


def _repeated(ctx: Context, context: dict[str, Any], check: str, error: str, sig: str,
              count: int, earlier: list[Any]) -> str:
    dates = sorted({h.date for h in earlier})
    title = _cut(f"Repeated failure ({count}×): {check or 'run'}: {first_line(error)}")
    body = (f"The same failure (signature {sig}) happened {count} times, first on "
            f"{dates[0] if dates else 'today'}. Diagnose its cause before retrying; the "
            f"episodic records tagged sig-{sig} hold each occurrence.")
    lesson = {"title": title, "body": body, "type": "reflective", "topic": TOPIC,
              "key": f"repeated-failure-{sig}", "importance": "high",
              "tags": ["fail-diag", f"sig-{sig}", "repeated-failure"]}
    return record_lesson(ctx, context, lesson, str(context.get("run_id") or ""), "fail-diag")


def _cut(title: str, limit: int = 140) -> str:
    title = " ".join(title.split())
    return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"
