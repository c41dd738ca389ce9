"""`jmem check`: the CI backstop (`distill/check.py`), and the memory kept elsewhere it
names. A module of its own: a distill never imports what finds other clients' memory."""

from __future__ import annotations

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, emit_json
from journal_mem.distill.check import cited_report, run_check
from journal_mem.repo import open_context
from journal_mem.setup import discover


@cli.command(context_settings=CONTEXT)
@click.option("--base", metavar="REF",
              help="Also fail when a journal entry was modified or deleted since REF.")
@click.option("--allow-root-move", is_flag=True,
              help="Accept a memory_root changed since REF (a deliberate move).")
@click.option("--refs", "refs", is_flag=True,
              help="Also list every fact whose cited code changed or whose cited files "
                   "are gone, with the commit (a listing: it fails nothing).")
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def check(click_ctx: click.Context, base: str | None, allow_root_move: bool,
          refs: bool, as_json: bool) -> int:
    """CI: every entry valid, distilled files equal a rebuild, budgets held, journal
    append-only since REF, no conflict markers, symlinks or secrets in memory.

    Memory kept where jmem does not manage it (CLAUDE.md, .claude/memory, Cursor
    rules, …) is named on stderr with the command that imports it; it fails nothing."""
    ctx = open_context(cwd(click_ctx))
    problems = run_check(ctx, base, allow_root_move=allow_root_move)
    found = discover.found_in(ctx)
    cited = cited_report(ctx) if refs else []
    if as_json:
        data = {"ok": not problems, "problems": problems,
                "elsewhere": [{"what": w, "paths": p, "command": c} for w, p, c in found]}
        if refs:
            data["refs"] = cited
        emit_json(data)
        return errors.REFUSED if problems else errors.OK
    for item in cited:
        what = {"changed": "cited code changed", "deleted": "cited file deleted",
                "dropped": "dropped, refs gone"}[str(item["state"])]
        at = f" in {str(item['commit'])[:7]} ({item['subject']})" if item["commit"] else ""
        click.echo(f"{item['key']}: {what}: `{item['ref']}`{at}")
    if refs and not cited:
        click.echo("refs: no fact's cited code changed")
    for line in problems:
        click.echo(line)
    for line in discover.lines(found):
        click.echo(f"note: {line}", err=True)
    if problems:
        click.echo(f"jmem check: {len(problems)} problems", err=True)
    else:
        click.echo("jmem check: ok")
    return errors.REFUSED if problems else errors.OK
