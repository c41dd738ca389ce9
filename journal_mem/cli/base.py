"""The click group every command module registers on, and the helpers they share."""

from __future__ import annotations

import json
import os

import click

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
TYPES = ["principle", "semantic", "procedural", "episodic", "reflective"]


def cwd(click_ctx: click.Context) -> str:
    """The directory to run in: -C PATH, else the process's own."""
    return str(click_ctx.find_root().params.get("directory") or os.getcwd())


def emit_json(data: object) -> None:
    """Print `data` as indented JSON."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def emit(data: object, lines: list[str], as_json: bool) -> None:
    """The report as JSON, or as its lines of text."""
    if as_json:
        emit_json(data)
    else:
        for line in lines:
            click.echo(line)


@click.group(context_settings=CONTEXT)
@click.option(
    "-C", "directory", type=click.Path(file_okay=False), default=None, metavar="PATH",
    help="Run as if started in PATH (like git -C).",
)
@click.version_option(package_name="journal-mem", prog_name="journal-mem")
def cli(directory: str | None) -> None:
    """Git-native memory for teams of coding agents.

    Agents append dated lessons to a journal in the main checkout; a single
    distiller folds the journal into each agent's MEMORY.md; git hooks keep
    worktrees from editing memory directly.

    Exit codes: 0 ok, 1 refused or invalid input, 2 usage, 3 unexpected error
    (see the log named), 4 unsupported repository, 75 another distill holds the lock.
    """
