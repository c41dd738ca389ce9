"""One error root for everything journal-mem reports, and the exit codes.

Expected failures are a `JournalMemError` (or a subclass) carrying a message
and, where there is one, a hint saying what to do. `boundary.run` (called
once, by `main.main`) maps them to these exit codes; anything else is an
unexpected error (exit 3, with a log file).
"""

from __future__ import annotations

OK = 0
REFUSED = 1  # a check or policy said no, or the input is invalid
USAGE = 2
UNEXPECTED = 3
UNSUPPORTED_REPO = 4
LOCKED = 75  # EX_TEMPFAIL: another distill holds the lock
INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT


class JournalMemError(Exception):
    """Root of every expected failure."""

    exit_code = REFUSED

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def lines(self) -> list[str]:
        """The message (and hint) as the lines to print."""
        out = self.message.splitlines() or [self.message]
        if self.hint:
            out.append(f"hint: {self.hint}")
        return out


class InvalidEntry(JournalMemError):
    """A journal entry failed validation; `problems` holds one line per problem."""

    def __init__(self, problems: list[str], source: str = "") -> None:
        self.problems = problems
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + p for p in problems))


class UnsupportedRepo(JournalMemError):
    """Not a git repository, or one without a main checkout."""

    exit_code = UNSUPPORTED_REPO


class ConfigError(JournalMemError):
    """The configuration (file, environment or flags) is invalid."""


class GitError(JournalMemError):
    """A git command failed."""


class LockHeld(JournalMemError):
    """Another distill holds the lock."""

    exit_code = LOCKED


class PolicyViolation(JournalMemError):
    """The guard or a check refused a change."""
