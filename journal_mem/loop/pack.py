"""A worker's memory pack: plain markdown between two marker comments.

The pack holds the live facts that bear on the worker's goal, best first, cut
by score to a token budget (`model.tokens.estimate`). It carries no
instruction to call jmem: workers never touch memory, the orchestrator does.
`replace_block` puts it into a CLAUDE.md / AGENTS.md in place of the previous
pack and leaves every other byte of the file alone, so running pre-spawn twice
for one goal changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from journal_mem.loop.tokens import estimate
from journal_mem.recall.query import Hit

BEGIN = "<!-- journal-mem:pack begin (generated; replaced at each worker start) -->"
END = "<!-- journal-mem:pack end -->"
BODY_CHARS = 300  # of a fact's body in the pack; the rest stays in the journal




def _one_line(text: str) -> str:
    return " ".join(text.replace("<!--", "<! --").replace("-->", "-- >").split())


def fact_text(fact: Hit) -> str:
    """One fact as pack markdown: a bullet with its title, date and key, then its body."""
    line = f"- **{_one_line(fact.title)}** ({fact.date}, `{fact.key}`)"
    body = _one_line(fact.body)
    if len(body) > BODY_CHARS:
        body = body[:BODY_CHARS].rsplit(" ", 1)[0] + " …"
    return f"{line}\n  {body}" if body else line


def build(goal: str, facts: Sequence[Hit], budget: int) -> tuple[str, list[Hit], int]:
    """(block, facts kept, estimated tokens): best-first facts while the budget holds."""
    head = [BEGIN, "## What the team has learned that bears on this task", "",
            f"Task: {_one_line(goal)}", ""]
    kept: list[Hit] = []
    parts: list[str] = []
    used = estimate("\n".join([*head, END]))
    for fact in facts:
        text = fact_text(fact)
        cost = estimate(text + "\n")
        if used + cost > budget:
            continue  # a shorter, lower-ranked fact may still fit
        kept.append(fact)
        parts.append(text)
        used += cost
    if not parts:
        parts = ["(no recorded fact bears on this task)"]
    block = "\n".join([*head, *parts, END])
    return block, kept, estimate(block)


def replace_block(text: str, block: str, begin: str = BEGIN, end: str = END) -> str:
    """`text` with its block between `begin` and `end` (the pack's markers unless told)
    replaced by `block`, which starts and ends with them (appended when it has none)."""
    start = text.find(begin)
    stop = text.find(end, start) if start >= 0 else -1
    if start >= 0 and stop >= 0:
        return text[:start] + block + text[stop + len(end):]
    if not text:
        return block + "\n"
    sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return text + sep + block + "\n"
