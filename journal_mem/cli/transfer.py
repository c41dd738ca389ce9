"""Commands that move memory in and out: the importers and the JSON export."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, emit
from journal_mem.importers import export as core
from journal_mem.importers import run as importing
from journal_mem.importers.snapshot import dumps
from journal_mem.lessons.write import resolve_agent
from journal_mem.repo import open_context


def _run_import(click_ctx: click.Context, as_json: bool,
                call: Callable[[Any, Any, Callable[[str | None], str]], Any]) -> int:
    """Open the repository, run `call(importers.run, ctx, agent_of)` and report."""
    ctx = open_context(cwd(click_ctx))
    report = call(importing, ctx, lambda agent: resolve_agent(ctx, agent))
    emit(report.as_dict(), report.lines(), as_json)
    return int(report.exit_code)


_NO_COMMIT = click.option("--no-commit", is_flag=True,
                          help="Write the entries but do not commit them.")
_AS_JSON = click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
_AGENT = click.option("--agent", metavar="NAME",
                      help="Writer of the lessons [env JMEM_AGENT, else default_agent].")
_APPLIES = click.option("--applies-to", "applies_to", multiple=True, metavar="AGENT",
                        help="Agents that must hold the lessons, or 'all' (repeatable).")


@cli.group("import", context_settings=CONTEXT)
def import_group() -> None:
    """Existing memory into the journal: ordinary lessons with provenance.

    Each source writes its new entries in one commit with `source:` naming the
    file and its commit (and the original date where known); a second run
    imports nothing. Records that cannot become lessons are listed (exit 1).
    """


@import_group.command("memory", context_settings=CONTEXT)
@click.argument("agents", nargs=-1, metavar="[AGENT]...")
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_memory(click_ctx: click.Context, agents: tuple[str, ...], no_commit: bool,
                  as_json: bool) -> int:
    """Hand-written MEMORY.md and topic files (all agents, or those named).

    One lesson per list item or paragraph (bullets, numbered items, headed
    sections); its topic is the topic file's name or its MEMORY.md section.
    Files the distiller wrote are left alone.
    """
    return _run_import(click_ctx, as_json, lambda importing, ctx, _: importing.import_memory(
        ctx, list(agents), not no_commit))


@import_group.command("claude-md", context_settings=CONTEXT)
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@_AGENT
@_APPLIES
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_claude_md(click_ctx: click.Context, path: str, agent: str | None,
                     applies_to: tuple[str, ...], no_commit: bool, as_json: bool) -> int:
    """A CLAUDE.md or AGENTS.md: rules become principles, other sections semantic
    lessons, held by the agents named with --applies-to (default: all)."""
    return _run_import(click_ctx, as_json, lambda importing, ctx, agent_of: importing
                       .import_claude_md(ctx, path, agent_of(agent), list(applies_to),
                                         not no_commit))


@import_group.command("retro", context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(dir_okay=False, exists=True))
@_AGENT
@_APPLIES
@click.option("--topic", default="retrospectives", show_default=True, metavar="NAME",
              help="Topic of the lessons.")
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_retro(click_ctx: click.Context, paths: tuple[str, ...], agent: str | None,
                 applies_to: tuple[str, ...], topic: str, no_commit: bool,
                 as_json: bool) -> int:
    """Retrospectives: one reflective lesson per finding or lesson (a sub-section of a
    lessons/findings section, else each of its items), dated from the file name."""
    return _run_import(click_ctx, as_json, lambda importing, ctx, agent_of: importing
                       .import_retro(ctx, list(paths), agent_of(agent), list(applies_to),
                                     topic, not no_commit))


@import_group.command("mem0", context_settings=CONTEXT)
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@_AGENT
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_mem0(click_ctx: click.Context, path: str, agent: str | None, no_commit: bool,
                as_json: bool) -> int:
    """A mem0 JSON export: each memory a lesson with its metadata's type, confidence,
    tags and expires_at (as valid_until); written by its agent_id when that is a
    valid agent name, else by --agent."""
    return _run_import(click_ctx, as_json, lambda importing, ctx, agent_of: importing
                       .import_mem0(ctx, path, agent_of(agent), not no_commit))


@import_group.command("snapshot", context_settings=CONTEXT)
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_snapshot(click_ctx: click.Context, path: str, no_commit: bool, as_json: bool) -> int:
    """A snapshot written by `jmem export`: every live fact, same key and fields."""
    return _run_import(click_ctx, as_json, lambda importing, ctx, _: importing.import_snapshot(
        ctx, path, not no_commit))


@cli.command(context_settings=CONTEXT)
@click.option("--json", "out", metavar="PATH", type=click.Path(dir_okay=False),
              help="Write the snapshot to PATH (else print it).")
@click.pass_context
def export(click_ctx: click.Context, out: str | None) -> int:
    """One JSON snapshot: every live fact (key, title, body, type, confidence,
    importance, holders, topic, dates, valid_until, refs, source, entry path),
    the journal's entry list and the distill state."""
    doc = core.snapshot(open_context(cwd(click_ctx)))
    if out is None:
        click.echo(dumps(doc), nl=False)
    else:
        core.write_snapshot(doc, out)
        click.echo(core.summary(doc, out))
    return errors.OK
