"""`jmem distill`: its options, declared once, and the run both of its ways in share.

A distill is a whole process, and the post-commit hook starts one in the
background whenever lessons are due: click and the CLI's own modules cost each
~25 ms before the journal is read. So `fast_main` (reached from
`distill.background`, the command's entry in `main.FAST`) reads the options
below, the same declaration click builds the command from (`cli/distilling.py`),
and runs the distill without click. What it does not read (`--push`, `--date`,
`--attempts`, `--help`, a value to judge, a stray argument) goes to click.
"""

from __future__ import annotations

import json
import os
import sys

from journal_mem import boundary, progress
from journal_mem.distill import distiller
from journal_mem.distill.outcome import distill_json, distill_lines
from journal_mem.options import Option, parse
from journal_mem.repo import open_context

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable

OPTIONS = (
    Option("--if-due", dest="if_due", flag=True,
           help="Only when pending lessons reach distill.threshold or the oldest is older "
                "than distill.max_age_hours; else exit 0 quietly (the post-commit hook)."),
    Option("--dry-run", dest="dry_run", flag=True,
           help="Report what would change; write nothing."),
    Option("--check", dest="check_only", flag=True,
           help="Exit 1 if a distill would change any file; write nothing."),
    Option("--rebuild", dest="rebuild", flag=True,
           help="Parse and fold every entry again: no parse cache, no kept replay."),
    Option("--no-commit", dest="no_commit", flag=True,
           help="Write the files but do not commit them."),
    Option("--background", dest="background", flag=True,
           help="Detach, log to <git-common-dir>/journal-mem/logs/distill.log, return at once."),
    Option("--json", dest="as_json", flag=True, help="Report as JSON."),
)


def options(*, if_due: bool, dry_run: bool, check_only: bool, rebuild: bool, no_commit: bool,
            date: dt.date | None = None) -> distiller.Options:
    """The distill the command's options ask for."""
    return distiller.Options(dry_run=dry_run, check=check_only, rebuild=rebuild,
                             commit=not no_commit, if_due=if_due, date=date,
                             one_shot=boundary.ONE_SHOT)


def run(directory: str, opts: distiller.Options, *, as_json: bool,
        echo: Callable[[str, bool], None]) -> int:
    """Distill the repository at `directory` and report it (`echo(line, to_stderr)`);
    the exit code."""
    # a bar on a terminal for long work; never in --json or for the post-commit hook
    progress.allow(not (as_json or opts.if_due))
    # --no-commit is the setting distill.commit = false for this run (flags > env > file)
    flags = {"distill.commit": False} if not opts.commit else None
    outcome = distiller.distill(open_context(directory, flags), opts)
    if as_json:
        echo(json.dumps(distill_json(outcome), indent=2, ensure_ascii=False), False)
    else:
        out, err = distill_lines(outcome)
        for line in out:
            echo(line, False)
        for line in err:
            echo(f"jmem: {line}", True)
    return outcome.exit_code


def _print(line: str, to_stderr: bool) -> None:
    print(line, file=sys.stderr if to_stderr else sys.stdout)


def fast_main(args: list[str]) -> int | None:
    """`jmem distill [OPTIONS]` without click; None hands the arguments over to it.
    Errors go to the error boundary like the click command's."""
    got = parse(args, OPTIONS, accept={o.dest for o in OPTIONS} - {"background"})
    if got is None:
        return None
    opts = options(if_due=got["if_due"], dry_run=got["dry_run"], check_only=got["check_only"],
                   rebuild=got["rebuild"], no_commit=got["no_commit"])
    return run(os.getcwd(), opts, as_json=got["as_json"], echo=_print)
