"""`jmem write`: validate one lesson and file it in the main checkout (or the outbox)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from journal_mem.config.settings import env_flag, env_value
from journal_mem.errors import InvalidEntry
from journal_mem.model.entry import Entry, build, parse
from journal_mem.store.context import Context
from journal_mem.store.journal import Written, record

if TYPE_CHECKING:
    from journal_mem.commands.related import Related


def resolve_agent(ctx: Context, agent: str | None) -> str:
    """--agent, else JMEM_AGENT, else the configured default agent."""
    return agent or env_value("JMEM_AGENT") or ctx.config.default_agent


def decode_text(data: bytes, what: str) -> str:
    """Strict UTF-8, with a precise error naming `what`."""
    if b"\x00" in data:
        raise InvalidEntry([f"{what}: holds a NUL byte at offset {data.index(0)}"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEntry([f"{what}: not valid UTF-8 (byte offset {exc.start})"]) from exc


def from_file(ctx: Context, path: str, agent: str | None) -> Entry:
    """A complete entry read from a file, validated as it stands."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InvalidEntry([f"--from-file: cannot read {path}: {exc.strerror}"]) from exc
    try:
        entry = parse(
            data,
            filename=os.path.basename(path),
            entry_bytes=ctx.config.budget.entry_bytes,
        )
    except InvalidEntry as exc:
        raise InvalidEntry(exc.problems, source=path) from exc
    if agent and agent != entry.agent:
        raise InvalidEntry([f"agent: the file says {entry.agent!r} but --agent is {agent!r}"],
                           source=path)
    return entry


def compose(
    ctx: Context, *, agent: str | None, topic: str | None, title: str | None, body: str,
    fields: dict[str, Any],
) -> Entry:
    """An entry from command-line values, validated like a file would be."""
    problems = []
    if not topic:
        problems.append("topic: required (--topic)")
    if title is None:
        problems.append("title: required (--title)")
    if problems:
        raise InvalidEntry(problems)
    assert topic is not None and title is not None
    return build(
        agent=resolve_agent(ctx, agent),
        topic=topic,
        title=title,
        body=body,
        entry_bytes=ctx.config.budget.entry_bytes,
        **fields,
    )


def file_entry(ctx: Context, entry: Entry, outbox: bool) -> Written:
    """Record the entry; `--outbox` or JMEM_OUTBOX=1 sends it to the outbox."""
    outbox = outbox or env_flag("JMEM_OUTBOX")
    refuse_hostile(ctx, entry, outbox)
    return record(ctx.layout, entry, outbox=outbox)


def refuse_hostile(ctx: Context, entry: Entry, outbox: bool) -> None:
    """Refuse a lesson that holds a secret (as the guard would, `guard.scan_secrets`), and
    a journal folder reached through a symlink (the file would land outside the repository).
    """
    if ctx.config.guard.scan_secrets:
        from journal_mem.model.entry import render
        from journal_mem.model.secretscan import scan

        found = scan(render(entry))
        if found:
            raise InvalidEntry([f"secret: {f.describe()} (lessons are committed and shared: "
                                "leave the secret out, name where it is kept instead)"
                                for f in found])
    link = None if outbox else ctx.layout.symlink_on_way(ctx.layout.journal_dir(entry.agent))
    if link:
        from journal_mem.errors import PolicyViolation

        raise PolicyViolation(
            f"{link} is a symlink: memory folders must be real folders inside the repository; "
            "nothing written",
            hint="replace the link with a real folder, or file the lesson with --outbox",
        )


def refuse_key_clash(ctx: Context, entry: Entry) -> None:
    """Refuse a default key that a live fact of another agent holds under another title."""
    from journal_mem.commands.related import key_clash

    reason = key_clash(ctx, entry)
    if reason:
        raise InvalidEntry([f"{reason}; nothing written. To correct that fact, say so with "
                            f"--key {entry.key}; else give this lesson its own --key"])


def related_facts(ctx: Context, entry: Entry) -> list[Related]:
    """Live facts the lesson probably corrects (none when it already supersedes or retracts)."""
    if entry.supersedes or entry.retracts:
        return []
    from journal_mem.commands.related import related

    return related(ctx, entry)


def describe_related(found: list[Related]) -> list[str]:
    """What `write` prints on stderr about them."""
    from journal_mem.commands.related import describe

    return describe(found)
