"""Commands that fold the journal: distill (and push) and watch (`jmem check` is in
checking.py)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import click

from journal_mem import progress
from journal_mem.cli.base import CONTEXT, cli, cwd, declared, emit_json
from journal_mem.distill import command
from journal_mem.distill.background import detach
from journal_mem.distill.outcome import distill_json, distill_lines
from journal_mem.distill.push import ATTEMPTS, push_distill
from journal_mem.repo import open_context


@cli.command(context_settings=CONTEXT)
@declared(command.OPTIONS)
@click.option("--date", "on_date", metavar="YYYY-MM-DD",
              help="Distill as of this date instead of today (UTC): replays and tests.")
@click.option("--push", "push_remote", is_flag=False, flag_value="", default=None,
              metavar="[REMOTE]", help="Distill on top of REMOTE's distill.branch and push; "
              "retry on the new tip when another writer wins (never forced).")
@click.option("--attempts", type=click.IntRange(1, 50), default=ATTEMPTS, show_default=True,
              help="With --push: how many times to try before giving up.")
@click.pass_context
def distill(click_ctx: click.Context, if_due: bool, dry_run: bool, check_only: bool, rebuild: bool,
            no_commit: bool, background: bool, as_json: bool, on_date: str | None,
            push_remote: str | None, attempts: int) -> int:
    """Fold the journal into every agent's topic files and MEMORY.md, and commit them.

    One writer for all worktrees (a second distill exits 75). Corrections reach
    every agent that held the fact; retracted, superseded, expired and stale
    facts are removed; MEMORY.md never exceeds its budget. The commit holds only
    memory paths and lists what changed and why. Invalid entries are reported
    and skipped (exit 1).
    """
    if background:  # normally answered by main.py before click loads

        return detach(list(click_ctx.find_root().obj), cwd(click_ctx))  # the argv given
    date = None
    if on_date:
        try:
            date = dt.date.fromisoformat(on_date)
        except ValueError:
            raise click.UsageError(f"--date: {on_date!r} is not YYYY-MM-DD") from None
    opts = command.options(if_due=if_due, dry_run=dry_run, check_only=check_only,
                           rebuild=rebuild, no_commit=no_commit, date=date)
    if push_remote is not None:  # docs/DESIGN.md, "Many machines"
        progress.allow(not as_json)
        return _distill_push(click_ctx, opts, push_remote or None, attempts, as_json)
    return command.run(cwd(click_ctx), opts, as_json=as_json,
                       echo=lambda line, err: click.echo(line, err=err))


# --- distill --push, watch -----------------------------------------------------------


def _distill_push(click_ctx: click.Context, opts: Any, remote: str | None, attempts: int,
                  as_json: bool) -> int:
    """`distill --push [REMOTE]`: see journal_mem/push.py."""
    if opts.dry_run or opts.check or not opts.commit or opts.if_due:
        raise click.UsageError("--push distills and commits: drop --dry-run, --check, "
                               "--no-commit and --if-due")
    done = push_distill(open_context(cwd(click_ctx)), opts, remote, attempts)
    where = f"{done.remote}/{done.branch}"
    if as_json:
        data = distill_json(done.outcome) if done.outcome else {}
        data["push"] = {"remote": done.remote, "branch": done.branch, "pushed": done.pushed,
                        "attempts": done.attempts, "rejected": done.rejected,
                        "steps": done.steps}
        emit_json(data)
        return done.exit_code
    if done.outcome:
        out, err = distill_lines(done.outcome)
        for line in out:
            click.echo(line)
        for line in err:
            click.echo(f"jmem: {line}", err=True)
    lost = f" after {done.rejected} rejected push{'es' if done.rejected != 1 else ''}" \
        if done.rejected else ""
    if done.pushed:
        click.echo(f"pushed {done.pushed[:12]} to {where}{lost}")
    else:
        click.echo(f"{where} already holds everything: nothing to push{lost}")
    return done.exit_code


@cli.command(context_settings=CONTEXT)
@click.option("--once", is_flag=True, help="Exit after the first distill (scripts, tests).")
@click.option("--debounce", type=click.FloatRange(0.0, 600.0), default=1.0, show_default=True,
              metavar="SECONDS", help="Wait until writes pause this long, then evaluate once.")
@click.option("--interval", type=click.FloatRange(1.0), default=60.0, show_default=True,
              metavar="SECONDS", help="Re-evaluate this often without events (max age).")
@click.pass_context
def watch(click_ctx: click.Context, once: bool, debounce: float, interval: float) -> int:
    """Watch the main checkout's journals and the outbox; distill when due.

    Due means what `distill --if-due` means: pending lessons reach
    distill.threshold, or the oldest is older than distill.max_age_hours. A
    burst of writes makes one evaluation; writes during a distill make exactly
    one more. A failing distill is logged and watching goes on. Ctrl-C or
    SIGTERM stop it cleanly (a distill in progress finishes first).
    """
    from journal_mem.distill import watch as watching  # watchdog: only for `jmem watch`

    opts = watching.WatchOptions(once=once, debounce=debounce,
                                 max_wait=max(10.0, debounce * 10), interval=interval)
    return watching.watch(cwd(click_ctx), opts, lambda line: click.echo(line))
