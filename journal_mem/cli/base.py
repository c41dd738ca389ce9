"""The click group every command module registers on, and the helpers they share.

The group loads a command's module only when that command runs (`COMMANDS` says
which module holds it), so `jmem status` imports what status uses and not what
`jmem import` or `jmem watch` do; each command module imports its features at the
top, and commands share a module only where they share what it imports (measured:
`bench/ab.py`). `--help` of the group loads them all."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from journal_mem.options import Option

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _click_type(o: Option) -> Any:
    if o.kind == "choice":
        return click.Choice(list(o.choices))
    if o.kind == "int":
        low, high = (None if b is None else int(b) for b in (o.low, o.high))
        return click.IntRange(min=low, max=high) if low is not None or high is not None \
            else int
    if o.kind == "float":
        return click.FloatRange(o.low, o.high)
    if o.kind == "date":
        return click.DateTime(["%Y-%m-%d"])
    if o.kind in ("path", "file"):
        return click.Path(dir_okay=False, allow_dash=o.kind == "path")
    return None


def declared(options: tuple[Option, ...]) -> Callable[[F], F]:
    """The click options of a command, from its one declaration (`options.py`); the
    command's fast path parses the same declaration."""
    def decorate(f: F) -> F:
        for o in reversed(options):
            extra: dict[str, Any] = {"help": o.help, "hidden": o.hidden}
            if o.flag:
                extra["is_flag"] = True
            else:
                extra.update(metavar=o.metavar, multiple=o.many, required=o.required,
                             default=o.default, show_default=o.show_default)
                kind = _click_type(o)
                if kind is not None:
                    extra["type"] = kind
            f = click.option(*o.names, o.dest, **extra)(f)
        return f
    return decorate


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


# command → the module of journal_mem.cli that defines it (and registers it on `cli`)
COMMANDS: dict[str, str] = {
    "init": "memory", "rescue": "memory", "write": "writing", "status": "status",
    "guard": "gitrun", "merge-driver": "gitrun",
    "distill": "distilling", "check": "checking", "watch": "distilling",
    "outbox": "outbox",
    "wake": "wakeup", "remind": "wakeup", "claude-plugin": "wakeup", "codex-trust": "wakeup",
    "mcp": "wakeup", "recall": "recalling",
    "log": "team", "blame": "team", "stats": "reporting", "report": "reporting",
    "hook": "agentloop", "demo": "demo",
    "import": "transfer", "export": "transfer",
    "consolidate": "consolidating",
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use (click's documented pattern)."""

    def list_commands(self, click_ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, click_ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"journal_mem.cli.{COMMANDS[cmd_name]}")
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings=CONTEXT)
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
