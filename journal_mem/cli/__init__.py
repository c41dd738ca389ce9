"""The click commands. Each parses options, calls one core function, prints, and
returns an exit code; the core never imports click.

The group and its shared helpers live in `base`; a command's module is imported when
the command runs (`base.COMMANDS`), and registers its commands on the group."""

from __future__ import annotations

import click

from journal_mem import errors
from journal_mem.cli.base import cli

__all__ = ["cli", "run"]


def run(argv: list[str]) -> int:
    """Run the CLI on `argv`; return the exit code. click's own exceptions become exit
    codes here; every other one goes to the error boundary in `main.main`."""
    try:
        result = cli.main(args=argv, prog_name="jmem", standalone_mode=False, obj=list(argv))
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("jmem: aborted", err=True)
        return errors.REFUSED
    except click.ClickException as exc:
        exc.show()
        return errors.USAGE if isinstance(exc, click.UsageError) else exc.exit_code
    return int(result) if isinstance(result, int) else errors.OK
