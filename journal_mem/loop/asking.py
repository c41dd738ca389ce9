"""The agent-loop points that ask memory: pre-work and pre-spawn.

They query the recall index and write nothing to the journal, so they import
neither the intake nor the entry model: `jmem hook pre-work` runs before every
task an orchestrator picks (docs/DESIGN.md, "Agent loop").
"""

from __future__ import annotations

import os
import re

from journal_mem.errors import InvalidEntry
from journal_mem.fsutil import O_NOFOLLOW, replace_atomic
from journal_mem.loop import pack
from journal_mem.loop.result import Result, text_field
from journal_mem.recall.query import Hit, recall, recall_each
from journal_mem.repo import Context

TYPE_CHECKING = False  # `typing` is not on the loop's hot path
if TYPE_CHECKING:
    from typing import Any

MAX_QUESTIONS = 8


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
    for hits in recall_each(ctx, asked, agent=context.get("agent"), limit=_limit(context)):
        for hit in hits:
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
