"""`jmem write` through click: what its fast path (`lessons.write.fast_main`) hands
over (--help, --from-file, an unknown option)."""

from __future__ import annotations

from typing import Any

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, declared
from journal_mem.lessons import write as lesson_write
from journal_mem.lessons.write import OPTIONS as write_options
from journal_mem.repo import open_context


def _refuse_with_from_file(given: dict[str, Any]) -> None:
    """--from-file files the entry as it is: any other field given is a usage error."""
    names = [f"--{n.replace('_', '-')}" for n, v in given.items() if v]
    if names:
        raise click.UsageError(f"--from-file files the entry as it is; drop {', '.join(names)}")


def _read_body(body: str | None, body_file: str | None) -> str:
    """The lesson's body: --body, else --body-file (`-` is stdin), else piped stdin."""
    if body is not None and body_file is not None:
        raise click.UsageError("give the body once: --body or --body-file")
    return lesson_write.read_body(body, body_file)


@cli.command(context_settings=CONTEXT)
@declared(write_options)
@click.pass_context
def write(click_ctx: click.Context, agent: str | None, topic: str | None, title: str | None,
          body: str | None, body_file: str | None, kind: str | None, confidence: str | None,
          importance: str | None, key: str | None, supersedes: tuple[str, ...],
          retracts: tuple[str, ...], applies_to: tuple[str, ...], valid_until: str | None,
          tags: tuple[str, ...], refs: tuple[str, ...], source: str | None,
          from_file: str | None, outbox: bool, as_json: bool) -> int:
    """Record one lesson in the main checkout's journal; print its path.

    Works from any worktree and subdirectory: the entry is always created in
    the main checkout (or, with --outbox or when the main checkout cannot be
    written, in <git-common-dir>/journal-mem/outbox/). Nothing is written
    unless every field is valid.

    \b
    Example:
      jmem write --agent api --topic testing --title "Run the API tests with -p no:randomly" \\
          --body "They share a database fixture; random order makes them flaky."
    """
    context = open_context(cwd(click_ctx))
    fields: dict[str, Any] = {
        "type": kind, "confidence": confidence, "importance": importance, "key": key,
        "supersedes": list(supersedes), "retracts": list(retracts),
        "applies_to": list(applies_to), "valid_until": valid_until, "tags": list(tags),
        "refs": list(refs), "source": source,
    }
    if from_file:
        _refuse_with_from_file({**fields, "topic": topic, "title": title, "body": body,
                                "body_file": body_file})
        entry = lesson_write.from_file(context, from_file, agent)
        found = lesson_write.related_facts(context, entry)
        written = lesson_write.file_entry(context, entry, outbox)
    else:
        written, found = lesson_write.write_lesson(context, agent=agent, topic=topic, title=title,
                                           body=_read_body(body, body_file), fields=fields,
                                           outbox=outbox)
    out, err = lesson_write.report(written, found, as_json)
    click.echo(out)
    for line in err:
        click.echo(line, err=True)
    return errors.OK
