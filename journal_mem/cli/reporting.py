"""The team's memory in numbers and on one HTML page: `jmem stats`, `jmem report`."""

from __future__ import annotations

import os
from typing import Any

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, emit
from journal_mem.repo import open_context
from journal_mem.team import stats as core
from journal_mem.team.report import write_report


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
