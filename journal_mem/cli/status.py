"""`jmem status`: the first thing to run when memory doesn't work."""

from __future__ import annotations

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, emit
from journal_mem.loop.hooklog import render
from journal_mem.setup import status as setup_status


@cli.command(context_settings=CONTEXT)
@click.option("--sessions", "session_count", type=int, default=None, is_flag=False,
              flag_value=20, metavar="[N]", help="Show the last N (20) recorded wake-ups.")
@click.option("--hooks", "hook_log", is_flag=True,
              help="Summarise the agent-loop hook log (jmem hook / journal_mem.api).")
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def status(click_ctx: click.Context, session_count: int | None, hook_log: bool,
           as_json: bool) -> int:
    """Pending lessons, outbox, last distill, lock, budgets, and which hooks are
    installed: the first thing to run when memory doesn't work."""
    if hook_log:
        table = setup_status.hook_summary(cwd(click_ctx))
        emit(table, render(table), as_json)
    elif session_count is not None:
        records = setup_status.session_log(cwd(click_ctx), session_count)
        emit(records, setup_status.render_sessions(records), as_json)
    else:
        report = setup_status.collect(cwd(click_ctx))
        emit(report, setup_status.render(report), as_json)
    return errors.OK
