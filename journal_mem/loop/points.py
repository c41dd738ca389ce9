"""The agent-loop points: pre-work, pre-spawn, post-run, fail-diag, post-retro.

An orchestrator calls memory at five fixed points of its loop (see
docs/DESIGN.md, "Agent loop"). Each function here takes the opened repository and the
caller's JSON context and returns a `Result`; `journal_mem.api.run_hook` adds
the switches, the timing, the log and the guarantee that nothing raises.
Lessons are written through the same path as `jmem write`, so a lesson the
loop records is valid for the guard, distill and check alike.
"""

from __future__ import annotations

import os
import re
from typing import Any

from journal_mem.errors import InvalidEntry, JournalMemError
from journal_mem.fsutil import O_NOFOLLOW, replace_atomic
from journal_mem.journal.entry import parse
from journal_mem.lessons.write import resolve_agent
from journal_mem.loop import failures, pack
from journal_mem.loop.lessons import Result, record_lesson, text_field
from journal_mem.recall.query import Hit, recall
from journal_mem.repo import Context

MAX_QUESTIONS = 8
MAX_LESSONS = 3  # per post-run call
LESSON_FIELDS = ("type", "confidence", "importance", "key", "supersedes", "retracts",
                 "applies_to", "valid_until", "tags", "refs", "source")


def questions_for(context: dict[str, Any]) -> list[str]:
    """The caller's questions (1–8), else ones derived from the goal: its sentences."""
    given = context.get("questions")
    if given:
        if not isinstance(given, list) or not all(isinstance(q, str) for q in given):
            raise InvalidEntry(["questions: must be a list of strings"])
        return [q.strip() for q in given if q.strip()][:MAX_QUESTIONS]
    goal = text_field(context, "goal") or text_field(context, "queue")
    parts = [p.strip() for p in re.split(r"[\n;]+|(?<=[.?!])\s+", goal) if p.strip()]
    return parts[:MAX_QUESTIONS] or ([goal] if goal else [])


def _nothing_queued(context: dict[str, Any]) -> bool:
    queued = context.get("queued")
    return queued is False or queued == 0 or queued == []


def pre_work(ctx: Context, context: dict[str, Any]) -> Result:
    """Facts that bear on the work about to be picked; skipped when nothing is queued."""
    if _nothing_queued(context):
        return Result(skipped="nothing queued")
    asked = questions_for(context)
    if not asked:
        raise InvalidEntry(["pre-work needs a goal, a queue summary or questions"])
    best: dict[str, Hit] = {}
    for question in asked:
        for hit in recall(ctx, question, agent=context.get("agent"), limit=_limit(context)):
            if hit.key not in best or hit.score > best[hit.key].score:
                best[hit.key] = hit
    hits = sorted(best.values(), key=lambda h: (-h.score, h.key))[: _limit(context)]
    return Result(found=[h.as_json() for h in hits], details={"questions": asked})


def _limit(context: dict[str, Any]) -> int:
    value = context.get("limit", 8)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 100:
        raise InvalidEntry(["limit: must be a whole number from 1 to 100"])
    return value


def pre_spawn(ctx: Context, context: dict[str, Any]) -> Result:
    """Write the worker's memory pack into its CLAUDE.md (or AGENTS.md), between markers."""
    goal = text_field(context, "goal")
    if not goal:
        raise InvalidEntry(["pre-spawn needs a goal"])
    target = _pack_file(context)
    floor = _number(context, "min_confidence", ctx.config.loop.min_confidence, 0.0, 1.0)
    budget = int(_number(context, "max_tokens", ctx.config.loop.pack_tokens, 50, 200_000))
    hits = [h for h in recall(ctx, goal, agent=context.get("agent"), limit=60)
            if h.confidence >= floor]
    block, kept, tokens = pack.build(goal, hits, budget)
    before, mode = _read_own_file(target)
    after = pack.replace_block(before, block)
    if after != before:
        replace_atomic(target, after.encode("utf-8"), durable=True, mode=mode)
    return Result(found=[h.as_json() for h in kept],
                  details={"path": target, "tokens": tokens, "facts": len(kept),
                           "left_out": len(hits) - len(kept), "changed": after != before})


def _number(context: dict[str, Any], name: str, default: float, low: float,
            high: float) -> float:
    value = context.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise InvalidEntry([f"{name}: must be a number from {low:g} to {high:g}"])
    return float(value)


def _read_own_file(target: str) -> tuple[str, int | None]:
    """The pack file's text and permissions ("" and None when there is none yet).

    Opened with `O_NOFOLLOW`: a `CLAUDE.md` that is a symlink points at a file
    the caller did not name (a private note, the repository's own `CLAUDE.md`),
    and rewriting it would copy that file's text into a new, readable one.
    """
    try:
        if not O_NOFOLLOW and os.path.islink(target):  # Windows: no O_NOFOLLOW
            raise OSError("a symlink")
        fd = os.open(target, os.O_RDONLY | O_NOFOLLOW)
    except FileNotFoundError:
        return "", None
    except OSError as exc:
        if os.path.islink(target):
            raise InvalidEntry([f"file: {target} is a symlink; pre-spawn writes only the "
                                "file it is told to, never through a link (make it a plain "
                                "file, or give another worker_dir)"]) from None
        raise InvalidEntry([f"file: {target} cannot be read ({exc.strerror})"]) from None
    with os.fdopen(fd, encoding="utf-8") as fh:
        return fh.read(), os.fstat(fh.fileno()).st_mode & 0o7777


def _pack_file(context: dict[str, Any]) -> str:
    """The worker's file; `worker_dir` is required: the pack never lands in a file of
    the repository's own checkout by default."""
    folder = text_field(context, "worker_dir")
    if not folder:
        raise InvalidEntry(["pre-spawn needs worker_dir, the folder the worker starts in"])
    name = text_field(context, "file") or "CLAUDE.md"
    if name not in ("CLAUDE.md", "AGENTS.md"):
        raise InvalidEntry(["file: must be CLAUDE.md or AGENTS.md"])
    if not os.path.isdir(folder):
        raise InvalidEntry([f"worker_dir: {folder} is not a folder"])
    return os.path.join(os.path.abspath(folder), name)


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
    from journal_mem.importers.run import import_retro

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


POINTS = {
    "pre-work": pre_work, "pre-spawn": pre_spawn, "post-run": post_run,
    "fail-diag": fail_diag, "post-retro": post_retro,
}
