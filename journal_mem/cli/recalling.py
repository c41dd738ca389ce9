"""`jmem recall` through click: what its fast path (`recall.query.fast_main`) hands
over (filters, a cold or stale index, --help)."""

from __future__ import annotations

from typing import Any

import click

from journal_mem import errors, progress
from journal_mem.cli.base import CONTEXT, cli, cwd, declared, emit
from journal_mem.recall import query as core
from journal_mem.recall.query import OPTIONS as recall_options
from journal_mem.repo import open_context


@cli.command(context_settings=CONTEXT)
@click.argument("question", nargs=-1)
@declared(recall_options)
@click.pass_context
def recall(click_ctx: click.Context, question: tuple[str, ...], agent: str | None,
           type_: str | None, tag: str | None, since: Any, limit: int,
           rebuild: bool, as_json: bool) -> int:
    """Ranked live facts for a natural-language QUESTION.

    Each fact comes with its key, the agents holding it, its topic, date and
    journal entry. Retracted, superseded and expired facts are never returned.
    The index lives in the common git dir and follows the journal by itself.
    With --type/--tag/--since and no QUESTION, lists the matching facts,
    newest first.

    \b
    Examples:
      jmem recall how do I run the API tests --agent api
      jmem recall --type episodic --tag fail-diag --since 2026-11-01
    """
    progress.allow(not as_json)  # a bar on a terminal for a long rebuild; never in --json
    day = since.date().isoformat() if since else None
    filters = core.Filters(agent, type_, tag, day)
    if not question and not (type_ or tag or day):
        raise click.UsageError("give a QUESTION, or --type, --tag or --since")
    hits = core.recall(open_context(cwd(click_ctx)), " ".join(question), agent=agent,
                       limit=limit, rebuild=rebuild, filters=filters)
    emit([hit.as_json() for hit in hits], core.render(hits), as_json)
    return errors.OK
