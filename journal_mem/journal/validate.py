"""One verdict on a journal entry, for every command that accepts, folds or shows one.

`write`, the guard, `rescue`, imports, the outbox drain, the entry reader (so distill,
`check`, `recall` and the wake-up pack) all ask `parse_valid` or `validate`
with the same `Policy`, so an entry one of them accepts is never one another
rejects. The secret policy is the `guard.scan_secrets` setting and it applies
to every one of them: on (the default), a lesson that looks like it holds a
secret is refused by `write`, `rescue` and the guard, and never folded by
distill; off, every command accepts it (a secret in a title is refused by the
parser whatever the setting: the title becomes the key and the file name).
See docs/DESIGN.md, "Validation".

Standard library only at import (the Claude Code hooks build a `Policy`); the
parser and the secret patterns are imported when an entry is judged.
"""

from __future__ import annotations

from journal_mem.errors import InvalidEntry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from journal_mem.journal.entry import Entry


class Policy:
    """The settings a verdict depends on (and the entry cache is keyed by)."""

    __slots__ = ("default_topic", "entry_bytes", "scan_secrets")

    def __init__(self, entry_bytes: int = 8192, scan_secrets: bool = True,
                 default_topic: str = "general") -> None:
        self.entry_bytes = entry_bytes
        self.scan_secrets = scan_secrets
        self.default_topic = default_topic

    @property
    def key(self) -> tuple[object, ...]:
        """What a cached verdict must have been made under to be reused."""
        return (self.entry_bytes, self.scan_secrets, self.default_topic)


def secret_problems(text: str) -> list[str]:
    """One `secret: …` problem per suspected secret in `text` (never the secret itself)."""
    from journal_mem.journal.secrets import scan

    return [f"secret: {f.describe()}" for f in scan(text)]


def validate(entry: Entry, policy: Policy, text: str | None = None) -> list[str]:
    """The problems of a parsed (or built) entry under `policy`; empty when it is valid.

    `text` is the entry's file text when there is one: a secret in a YAML
    comment is dropped by the parser but would still be committed.
    """
    problems: list[str] = []
    if policy.scan_secrets:
        if text is None:
            from journal_mem.journal.entry import render

            text = render(entry)
        problems += secret_problems(text)
    return problems


def parse_valid(data: bytes, policy: Policy, *, filename: str | None = None,
                folder_agent: str | None = None) -> Entry:
    """Parse an entry file and judge it: an `Entry`, or `InvalidEntry` with every problem."""
    from journal_mem.journal.entry import parse

    text = data.decode("utf-8", "replace")
    try:
        entry = parse(data, filename=filename, folder_agent=folder_agent,
                      entry_bytes=policy.entry_bytes, default_topic=policy.default_topic)
    except InvalidEntry as exc:
        more = secret_problems(text) if policy.scan_secrets else []
        raise InvalidEntry([*exc.problems, *more]) from None
    problems = validate(entry, policy, text)
    if problems:
        raise InvalidEntry(problems)
    return entry


def check_built(entry: Entry, policy: Policy) -> Entry:
    """`entry` (built from values, by `write` or `rescue`) when valid; else `InvalidEntry`."""
    problems = validate(entry, policy)
    if problems:
        raise InvalidEntry(problems)
    return entry
