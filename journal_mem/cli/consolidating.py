"""`jmem consolidate`: the plan of duplicates, conflicts, stale facts and topics over budget,
and the curator that proposes lessons to settle them."""

from __future__ import annotations

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, emit
from journal_mem.consolidate import plan as planning
from journal_mem.consolidate import propose
from journal_mem.repo import open_context


@cli.command(context_settings=CONTEXT)
@click.option("--agent", metavar="NAME", default=None,
              help="Only the items that concern a fact NAME holds.")
@click.option("--propose", "command", metavar="CMD", is_flag=False, flag_value="",
              default=None,
              help="Run CMD (sh -c, the plan on stdin) and file the lessons it proposes; "
                   "--propose alone runs [consolidate] command of the config.")
@click.option("--dry-run", is_flag=True, help="With --propose: show what would be written.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (or the outcome) as JSON.")
@click.pass_context
def consolidate(click_ctx: click.Context, agent: str | None, command: str | None,
                dry_run: bool, as_json: bool) -> int:
    """Plan what memory could merge and shrink; with --propose, let a curator do it.

    The plan lists duplicates (live facts that say the same thing in other
    words, across agents and topics), conflicts (a newer fact that probably
    corrects an older one), stale facts (refs gone, old episodic records) and
    topics over budget. It is deterministic and writes nothing.

    With --propose, the plan goes to a command (a model behind any CLI, or a
    script of your own) that answers with proposed lessons as JSON. Each is
    judged like `jmem write` and must cite the keys of one plan item that it
    supersedes or retracts; accepted ones become lessons of agent `curator`
    (source: the command and the item) that keep every holder of the facts
    they replace; a bad one is refused with why while the others go on. The
    next `jmem distill` folds them; `jmem log KEY` shows each merge.

    \b
    Examples:
      jmem consolidate --json
      jmem consolidate --propose "claude -p \\"$(cat curator-prompt.md)\\"" --dry-run
    """
    ctx = open_context(cwd(click_ctx))
    plan = planning.make_plan(ctx, agent)
    if command is None and dry_run:
        raise click.UsageError("--dry-run goes with --propose")
    if command is None:
        emit(plan.as_json(), plan.lines(), as_json)
        return errors.OK
    if not plan.items:  # nothing to settle: no proposer runs
        emit(propose.Judgement().as_json(), plan.lines(), as_json)
        return errors.OK
    command = command or ctx.config.consolidate.command
    if not command.strip():
        raise click.UsageError("--propose: no command given and [consolidate] command is "
                               "unset in .claude/journal-mem.toml")
    proposals = propose.run_proposer(command, plan, ctx.repo.main_root,
                                     ctx.config.consolidate.timeout)
    outcome = propose.judge(ctx, plan, proposals, propose.source_of(command))
    if not dry_run:
        propose.write_all(ctx, plan, outcome)
    emit(outcome.as_json(), outcome.lines(dry_run), as_json)
    for line in outcome.refused:
        click.echo(f"jmem: refused {line}", err=True)
    return errors.REFUSED if outcome.refused else errors.OK
