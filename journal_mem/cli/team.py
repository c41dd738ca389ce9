"""Commands that look across the team: a fact's history and blame, stats, the HTML
report, and the agent-loop hooks."""

from __future__ import annotations

import os
from typing import Any

import click

from journal_mem import errors
from journal_mem.api import cli_main
from journal_mem.cli.base import CONTEXT, cli, cwd, emit
from journal_mem.repo import open_context
from journal_mem.team import log as factlog
from journal_mem.team import stats as core
from journal_mem.team.report import write_report


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


@cli.command(context_settings=CONTEXT)
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), metavar="YYYY-MM-DD",
              help="Count only the entries written on or after this date.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@click.pass_context
def stats(click_ctx: click.Context, since: Any, as_json: bool) -> int:
    """The team's memory in numbers: entries written (per agent, per month),
    distilled topic files, lines of maintained memory, agents with memory, the
    cap and each agent's use of it, evictions, facts dropped by each rule,
    pending lessons, and entries per maintained line."""
    table = core.collect(open_context(cwd(click_ctx)), since.date() if since else None)
    emit(table, core.render_lines(table), as_json)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@click.option("--out", "out_dir", metavar="DIR", type=click.Path(file_okay=False),
              help="Folder for index.html [<git-common-dir>/journal-mem/report].")
@click.option("--open", "open_", is_flag=True, help="Open the page in a browser.")
@click.pass_context
def report(click_ctx: click.Context, out_dir: str | None, open_: bool) -> int:
    """One static HTML page of the team's memory (no server, no network).

    Timelines of every fact held by several agents or corrected (one lane per
    holder, coloured by the version it loaded), budgets, pending lessons and
    their age, evictions, stale-ref drops, open conflicts and the stats table.
    """
    context = open_context(cwd(click_ctx))
    path = write_report(context, out_dir or os.path.join(context.layout.state_dir, "report"))
    click.echo(path)
    if open_:
        import webbrowser

        webbrowser.open(f"file://{path}")
    return errors.OK


@cli.command(context_settings={**CONTEXT, "ignore_unknown_options": True})
@click.argument("name", type=click.Choice(["pre-work", "pre-spawn", "post-run", "fail-diag",
                                           "post-retro"]))
def hook(name: str) -> int:
    """Run one agent-loop point: JSON context on stdin, one JSON result on stdout.

    Always exits 0: problems are in the result's "errors", on stderr and in
    <git-common-dir>/journal-mem/logs/hooks.jsonl (`jmem status --hooks`).
    Each point is off until switched on ([hooks] NAME = true, or
    JMEM_HOOKS_NAME=1); JMEM_DISABLE=1 turns them all off.

    \b
    Points:
      pre-work    {"goal" | "queue", "questions"?, "queued"?, "agent"?}
      pre-spawn   {"goal", "worker_dir", "file"?, "agent"?, "max_tokens"?}
      post-run    {"lessons": [{"title", "body", "topic", "type"?, ...}], "run_id"?}
      fail-diag   {"error", "check"?, "files"?, "run_id"?}
      post-retro  {"path", "agent"?}
    """
    return cli_main([name])
