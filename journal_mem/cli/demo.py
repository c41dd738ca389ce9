"""`jmem demo`: the whole story in a temporary repository (`journal_mem.demo`)."""

from __future__ import annotations

import click

from journal_mem.cli.base import CONTEXT, cli
from journal_mem.demo.scenes import run_demo


@cli.command(context_settings=CONTEXT)
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
def demo(keep: bool) -> int:
    """Tell the whole story in a temporary repository, narrating each step."""
    return run_demo(keep=keep, echo=click.echo)
