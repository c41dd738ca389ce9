"""The outbox: lessons from sessions that cannot write into the main checkout."""

from __future__ import annotations

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, emit_json
from journal_mem.distill.outbox import drain_now, waiting
from journal_mem.repo import open_context


@cli.group(context_settings=CONTEXT)
def outbox() -> None:
    """The outbox: lessons from sessions that cannot write into the main checkout,
    waiting in <git-common-dir>/journal-mem/outbox/ for the next distill."""


@outbox.command("list", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def outbox_list(click_ctx: click.Context, as_json: bool) -> int:
    """Every waiting entry, and whether the next drain will file it."""
    context = open_context(cwd(click_ctx))
    items = waiting(context.layout, context.policy)
    if as_json:
        emit_json([w.as_json() for w in items])
        return errors.OK
    for w in items:
        click.echo(f"{w.agent}: {w.title or '(invalid)'}\n  {w.path}")
        for problem in w.problems:
            click.echo(f"  invalid: {problem}")
    click.echo(f"outbox: {len(items)} waiting"
               + (f", {sum(1 for w in items if w.problems)} invalid" if items else ""))
    return errors.OK


@outbox.command("drain", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def outbox_drain(click_ctx: click.Context, as_json: bool) -> int:
    """Move every valid entry into the main journal now (every distill does this too).

    Nothing leaves the outbox before its copy is in the journal; an invalid
    entry stays there and is reported (exit 1).
    """
    context = open_context(cwd(click_ctx))
    done = drain_now(context.layout, context.policy)
    if as_json:
        emit_json({"moved": done.moved, "invalid": done.invalid})
    else:
        for path in done.moved:
            click.echo(f"moved into the journal: {path}")
        for problem in done.invalid:
            click.echo(f"jmem: left in the outbox: {problem}", err=True)
        click.echo(f"outbox: {len(done.moved)} moved, {len(done.invalid)} left (invalid)")
    return errors.REFUSED if done.invalid else errors.OK
