"""`jmem write`: validate one lesson and file it in the main checkout (or the outbox)."""

from __future__ import annotations

import datetime as dt
import errno
import os
import sqlite3
import sys

from journal_mem import jsonc
from journal_mem.errors import InvalidEntry
from journal_mem.intake import pipeline
from journal_mem.journal.entry import Entry, build
from journal_mem.journal.files import Written
from journal_mem.journal.validate import check_built, parse_valid
from journal_mem.layout import TOPICS
from journal_mem.names import ENTRY_NAME_RE
from journal_mem.options import Option, parse
from journal_mem.repo import Context, open_context
from journal_mem.settings import agent_name, env_flag

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from typing import Any

    from journal_mem.lessons.related import Related

# The disk is full, the quota is used up, or the file size limit (RLIMIT_FSIZE) is hit.
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def resolve_agent(ctx: Context, agent: str | None) -> str:
    """--agent, else JMEM_AGENT, else the configured default agent."""
    return agent_name(agent, ctx.config.default_agent)


def decode_text(data: bytes, what: str) -> str:
    """Strict UTF-8, with a precise error naming `what`."""
    if b"\x00" in data:
        raise InvalidEntry([f"{what}: holds a NUL byte at offset {data.index(0)}"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEntry([f"{what}: not valid UTF-8 (byte offset {exc.start})"]) from exc


def from_file(ctx: Context, path: str, agent: str | None) -> Entry:
    """A complete entry read from a file, validated as it stands.

    A plain file (no frontmatter, a `# ` title first) is for --agent (or the
    default agent), dated by its file name (else today), and its topic is the
    agent's topic its file name starts with, else `distill.default_topic`.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InvalidEntry([f"--from-file: cannot read {path}: {exc.strerror}"]) from exc
    name, folder_agent = os.path.basename(path), None
    if not data.removeprefix(b"\xef\xbb\xbf").startswith(b"---"):
        folder_agent = resolve_agent(ctx, agent)
        if not ENTRY_NAME_RE.fullmatch(name):
            name = f"{dt.datetime.now(dt.UTC).date().isoformat()}-{name}"
    try:
        entry = parse_valid(data, ctx.policy, filename=name, folder_agent=folder_agent)
        if folder_agent is not None:
            entry = _plain_topic(ctx, entry, name)
    except InvalidEntry as exc:
        raise InvalidEntry(exc.problems, source=path) from exc
    if agent and agent != entry.agent:
        raise InvalidEntry([f"agent: the file says {entry.agent!r} but --agent is {agent!r}"],
                           source=path)
    return entry


def _plain_topic(ctx: Context, entry: Entry, name: str) -> Entry:
    """The topic of a plain file: an existing topic of its agent its name starts with."""
    slug = name[11:].removesuffix(".md").lower()
    folder = os.path.join(ctx.layout.agent_dir(entry.agent), TOPICS)
    try:
        topics = [n.removesuffix(".md") for n in os.listdir(folder) if n.endswith(".md")]
    except (FileNotFoundError, NotADirectoryError):
        topics = []
    found = [t for t in topics if slug == t or slug.startswith(t + "-")]
    return entry.replace(topic=max(found, key=len)) if found else entry


def compose(
    ctx: Context, *, agent: str | None, topic: str | None, title: str | None, body: str,
    fields: dict[str, Any],
) -> Entry:
    """An entry from command-line values, judged like a file would be (`model.validate`)."""
    problems = []
    if not topic:
        problems.append("topic: required (--topic)")
    if title is None:
        problems.append("title: required (--title)")
    if problems:
        raise InvalidEntry(problems)
    assert topic is not None and title is not None
    entry = build(
        agent=resolve_agent(ctx, agent),
        topic=topic,
        title=title,
        body=body,
        entry_bytes=ctx.config.budget.entry_bytes,
        **fields,
    )
    return check_built(entry, ctx.policy)


def write_lesson(ctx: Context, *, agent: str | None, topic: str | None, title: str | None,
                 body: str, fields: dict[str, Any],
                 outbox: bool = False) -> tuple[Written, list[Related]]:
    """`jmem write` from values (the command line, the MCP tool): judged, refused on a key
    that another fact holds unless the key was given, filed; with the live facts it
    probably corrects."""
    entry = compose(ctx, agent=agent, topic=topic, title=title, body=body, fields=fields)
    if fields.get("key") is None:
        refuse_key_clash(ctx, entry)
    found = related_facts(ctx, entry)
    return file_entry(ctx, entry, outbox), found


def file_entry(ctx: Context, entry: Entry, outbox: bool, *,
               last: dict[str, str] | None = None) -> Written:
    """Record the entry through the intake (`intake/pipeline.py`); `--outbox` or
    JMEM_OUTBOX=1 sends it to the outbox; `last`: the journal it knew (a curator's)."""
    return pipeline.file_entry(ctx, entry, outbox or env_flag("JMEM_OUTBOX"), last=last)


def describe_unknown(written: Written) -> list[str]:
    """What `write` prints on stderr about keys it supersedes or retracts that no lesson
    holds: the lesson is filed, but it corrects nothing."""
    out = []
    for key, near in sorted(written.unknown.items()):
        guess = f"; did you mean {near!r}? (`jmem log {near}`)" if near else ""
        out.append(f"jmem: warning: no lesson has key {key!r}: this lesson supersedes or "
                   f"retracts nothing under it{guess}")
    return out


def refuse_key_clash(ctx: Context, entry: Entry) -> None:
    """Refuse a default key that a live fact of another agent holds under another title."""
    from journal_mem.lessons.related import key_clash

    try:
        reason = key_clash(ctx, entry)
    except (sqlite3.Error, OSError):  # the index is advice: a full disk must not turn
        return  # into a crash before the write itself can say what is wrong
    if reason:
        raise InvalidEntry([f"{reason}; nothing written. To correct that fact, say so with "
                            f"--key {entry.key}; else give this lesson its own --key"])


def related_facts(ctx: Context, entry: Entry) -> list[Related]:
    """Live facts the lesson probably corrects (none when it already supersedes or retracts)."""
    if entry.supersedes or entry.retracts:
        return []

    from journal_mem.lessons.related import related

    try:
        return related(ctx, entry)
    except (sqlite3.Error, OSError):  # advice only: never what stops a lesson being filed
        return []


def describe_related(found: list[Related]) -> list[str]:
    """What `write` prints on stderr about them."""
    from journal_mem.lessons.related import describe

    return describe(found)


def read_body(body: str | None, body_file: str | None) -> str:
    """The lesson's body: --body, else --body-file (`-` is stdin), else piped stdin (the
    caller refuses both at once)."""
    stdin = sys.stdin  # None: started without one, so nothing to read
    if body is None:
        if body_file == "-" or (body_file is None and stdin is not None and not stdin.isatty()):
            body = decode_text(stdin.buffer.read() if stdin is not None else b"", "stdin")
        elif body_file is not None:
            with open(body_file, "rb") as fh:
                body = decode_text(fh.read(), "--body-file")
    return body or ""


def report(written: Written, found: list[Related], as_json: bool) -> tuple[str, list[str]]:
    """What `jmem write` prints: its stdout text and its stderr lines."""
    if as_json:
        out = jsonc.dumps({"path": written.path, "key": written.key, "outbox": written.outbox,
                          "related": [r.as_json() for r in found],
                          "unknown_keys": sorted(written.unknown)}, indent=2,
                         ensure_ascii=False)
    else:
        out = written.path
    err = [*describe_unknown(written), *describe_related(found)]
    return out, err + ([f"jmem: {written.note}"] if written.note else [])


# `jmem write`'s options as the fast path reads them: name -> (field, repeatable).
OPTIONS = (
    Option("--agent", dest="agent", metavar="NAME",
           help="Writer [env JMEM_AGENT, else default_agent]."),
    Option("--topic", dest="topic", metavar="NAME", help="Topic file the lesson folds into."),
    Option("--title", dest="title", metavar="TEXT", help="One line, at most 150 characters."),
    Option("--body", dest="body", metavar="TEXT",
           help="The detail (else --body-file, else stdin)."),
    Option("--body-file", dest="body_file", kind="path", metavar="FILE",
           help="Read the body from FILE ('-' for stdin)."),
    Option("--type", dest="kind", metavar="TYPE",
           help="principle | semantic (default) | procedural | episodic | reflective."),
    Option("--confidence", dest="confidence", metavar="X", help="Within the type's range."),
    Option("--importance", dest="importance", metavar="LEVEL",
           help="critical | high | medium (default) | low."),
    Option("--key", dest="key", metavar="KEY",
           help="The fact's team-wide identity [short key from the title]."),
    Option("--supersedes", dest="supersedes", many=True, metavar="KEY",
           help="Key this replaces (repeatable)."),
    Option("--retracts", dest="retracts", many=True, metavar="KEY",
           help="Key to delete (repeatable); without --supersedes the lesson states no "
                "fact of its own."),
    Option("--applies-to", dest="applies_to", many=True, metavar="AGENT",
           help="Other agent that must hold it, or 'all' (repeatable)."),
    Option("--valid-until", dest="valid_until", metavar="DATE",
           help="YYYY-MM-DD or datetime; dropped after."),
    Option("--tag", dest="tags", many=True, metavar="TAG", help="Tag (repeatable, at most 8)."),
    Option("--ref", dest="refs", many=True, metavar="PATH[#L10-L12|#NAME]",
           help="Repository path the fact is about, or its lines or a function or class "
                "in it; the distill marks the fact when that code changes (repeatable)."),
    Option("--source", dest="source", metavar="TEXT",
           help="Where it came from (PR, issue, run id)."),
    Option("--from-file", dest="from_file", kind="file", metavar="FILE",
           help="File a complete entry (frontmatter and all) after validating it."),
    Option("--outbox", dest="outbox", flag=True,
           help="Write to the outbox in the common git dir [env JMEM_OUTBOX=1]."),
    Option("--json", dest="as_json", flag=True, help='Print {"path", "key", "outbox", "related"}.'),
)
_FAST = {o.dest for o in OPTIONS} - {"from_file"}  # --from-file: the full command


def parse_args(args: list[str]) -> dict[str, Any] | None:
    """`jmem write`'s arguments as click reads `OPTIONS`, or None for anything the full
    command must judge: help, --from-file, an unknown option, a value that looks like
    an option, --body with --body-file, a --body-file that is a folder."""
    got = parse(args, OPTIONS, accept=_FAST)
    if got is None:
        return None
    body_file = got.get("body_file")
    if body_file is not None and (got.get("body") is not None or (
            body_file != "-" and os.path.isdir(body_file))):
        return None
    return got


def fast_main(args: list[str]) -> int | None:
    """`jmem write` without click; None hands the arguments over to the full command.
    Errors go to the error boundary like the full command's."""
    got = parse_args(args)
    if got is None:
        return None

    ctx = open_context(os.getcwd())
    fields = {name: got.get(name) for name in ("confidence", "importance", "key",
                                                "supersedes", "retracts", "applies_to",
                                                "valid_until", "tags", "refs", "source")}
    fields["type"] = got.get("kind")
    written, found = write_lesson(ctx, agent=got.get("agent"), topic=got.get("topic"),
                                  title=got.get("title"),
                                  body=read_body(got.get("body"), got.get("body_file")),
                                  fields=fields, outbox=got["outbox"])
    out, err = report(written, found, got["as_json"])
    print(out)
    for line in err:
        print(line, file=sys.stderr)
    return 0
