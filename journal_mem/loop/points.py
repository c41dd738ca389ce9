"""The agent-loop points that record lessons: post-run, fail-diag, post-retro
(pre-work and pre-spawn, which only ask, are `loop/asking.py`).

An orchestrator calls memory at five fixed points of its loop (see
docs/DESIGN.md, "Agent loop"). Each function here takes the opened repository and the
caller's JSON context and returns a `Result`; `journal_mem.api.run_hook` adds
the switches, the timing, the log and the guarantee that nothing raises.
Lessons are written through the same path as `jmem write`, so a lesson the
loop records is valid for the guard, distill and check alike.
"""

from __future__ import annotations

import os
from typing import Any

from journal_mem.errors import InvalidEntry, JournalMemError
from journal_mem.importers.run import import_retro
from journal_mem.journal.entry import parse
from journal_mem.lessons.write import resolve_agent
from journal_mem.loop import failures
from journal_mem.loop.lessons import record_lesson
from journal_mem.loop.result import Result, text_field
from journal_mem.repo import Context

MAX_LESSONS = 3  # per post-run call


def post_run(ctx: Context, context: dict[str, Any]) -> Result:
    """Record the 0–3 lessons of a passed run; every invalid one is an error, none is lost."""
    lessons = context.get("lessons") or []
    if not isinstance(lessons, list) or not all(isinstance(x, dict) for x in lessons):
        raise InvalidEntry(["lessons: must be a list of objects"])
    if len(lessons) > MAX_LESSONS:
        raise InvalidEntry([f"lessons: at most {MAX_LESSONS} per run, {len(lessons)} given"])
    result = Result()
    run_id = text_field(context, "run_id")
    for n, lesson in enumerate(lessons, 1):
        try:
            result.written.append(record_lesson(ctx, context, lesson, run_id, "post-run"))
        except JournalMemError as exc:
            result.errors.append(f"lesson {n}: {exc}")
    return result


def fail_diag(ctx: Context, context: dict[str, Any]) -> Result:
    """Earlier failures like this one and their fixes; a lesson once it keeps repeating."""
    return failures.diagnose(ctx, context)


def post_retro(ctx: Context, context: dict[str, Any]) -> Result:
    """A retrospective markdown file → one `reflective` lesson per finding.

    The parser is `jmem import retro`'s; the lessons are written, not committed
    (like post-run's), and a second run of one retro writes nothing new.
    """
    path = text_field(context, "path")
    if not path:
        raise InvalidEntry(["post-retro needs the path of the retrospective"])
    if not os.path.isfile(path):
        raise InvalidEntry([f"path: {path} is not a file"])
    agent = resolve_agent(ctx, context.get("agent"))
    topic = text_field(context, "topic") or "retro"
    applies = context.get("applies_to") or [agent]
    report = import_retro(ctx, [path], agent, list(applies), topic, commit=False)
    keys = []
    for rel in report.written:
        with open(os.path.join(ctx.repo.main_root, rel), "rb") as fh:
            keys.append(parse(fh.read(), filename=os.path.basename(rel)).key)
    return Result(written=keys, errors=list(report.invalid),
                  details={"found": report.found, "already": report.skipped,
                           "paths": report.written})
