"""A fact's life across the team: `jmem log KEY` and `jmem blame FILE`."""

from __future__ import annotations

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, emit
from journal_mem.repo import open_context
from journal_mem.team import log as factlog


@cli.command("log", context_settings=CONTEXT)
@click.argument("key", required=False)
@click.option("--path", "path", metavar="FILE", help="A distilled file: the fact at --line.")
@click.option("--line", type=click.IntRange(min=1), help="The line of --path (1-based).")
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
@click.pass_context
def log_(click_ctx: click.Context, key: str | None, path: str | None, line: int | None,
         as_json: bool) -> int:
    """The life of one fact across the team, oldest first.

    Every journal entry that wrote, corrected, superseded or retracted KEY
    (date, agent, title, source and refs, the commit that brought it in),
    every distill commit that changed it in some agent's MEMORY.md, and what
    each holder loaded from when to when. With --path FILE --line N, the fact
    on that line of a distilled file.

    \b
    Examples:
      jmem log filter-by-value-and-missing-fields
      jmem log --path .claude/agent-memory/web/MEMORY.md --line 12
    """
    if (key is None) == (path is None) or (path is None) != (line is None):
        raise click.UsageError("give a KEY, or --path FILE with --line N")
    context = open_context(cwd(click_ctx))
    if path is not None and line is not None:
        key = factlog.key_at(context, path, line)
    assert key is not None
    history = factlog.fact_log(context, key)
    emit(history, factlog.render(history), as_json)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the lines as JSON.")
@click.pass_context
def blame(click_ctx: click.Context, file: str, as_json: bool) -> int:
    """Each fact line of a distilled FILE with the entry that last stated it:
    date, agent, the commit that brought the entry in, and its source."""
    rows = factlog.blame(open_context(cwd(click_ctx)), file)
    emit(rows, factlog.render_blame(rows), as_json)
    return errors.OK
