"""Each command's options, declared once, for click and for the command's fast path.

A hot command (`write`, `recall`, `wake`/`remind --hook`, `guard`) answers
before click is imported (`main.py`); it used to read its arguments with a
hand-written copy of its click options, kept in step by tests. Now the
command's options are one tuple of `Option`s in its feature module: `cli/`
builds the click command from it (`cli/base.py`, `declared`), and the fast path
reads the arguments with `parse`, which reads them as click does and hands
anything it cannot judge to click (None). Standard library only, no dataclass:
this module is on every hot path.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs ~2.5 ms: not on the hot paths
if TYPE_CHECKING:
    from typing import Any


class Option:
    """One command-line option: its names, where its value goes, and how click shows it.

    `kind`: "text", "int", "float", "choice", "date" (YYYY-MM-DD), "path" (a file, `-`
    for stdin) or "file"; `low`/`high` bound an int or float; `many`: repeatable (a list);
    `flag`: a switch."""

    __slots__ = ("choices", "default", "dest", "flag", "help", "hidden", "high", "kind",
                 "low", "many", "metavar", "names", "required", "show_default")

    def __init__(self, *names: str, dest: str, help: str, metavar: str | None = None,
                 kind: str = "text", many: bool = False, flag: bool = False,
                 choices: tuple[str, ...] = (), low: float | None = None,
                 high: float | None = None, default: object = None,
                 show_default: bool = False, hidden: bool = False,
                 required: bool = False) -> None:
        self.names, self.dest, self.help, self.metavar = names, dest, help, metavar
        self.kind, self.many, self.flag, self.choices = kind, many, flag, choices
        self.low, self.high, self.default = low, high, default
        self.show_default, self.hidden, self.required = show_default, hidden, required

    def value(self, text: str) -> object:
        """The value click would give `text`, or None when click must judge it."""
        if self.kind in ("text", "path", "file"):
            return text
        if self.kind == "choice":
            return text if text in self.choices else None
        if self.kind == "int":
            if not text.isdigit():
                return None
            number = int(text)
            if (self.low is not None and number < self.low) or \
                    (self.high is not None and number > self.high):
                return None
            return number
        return None  # floats and dates: click reads them


def parse(args: list[str], options: tuple[Option, ...], *, accept: set[str] | None = None,
          words: bool = False) -> dict[str, Any] | None:
    """The arguments as click reads `options` (`--opt VALUE`, `--opt=VALUE`, the last of a
    single option wins, a repeatable one collects), or None for anything the full
    command must judge: help, an option outside `accept` (every declared one by
    default), a value click would refuse or that looks like an option, a missing
    value, a required option not given. `words`: plain arguments are collected in
    "words" (else they hand over too)."""
    by_name = {name: o for o in options for name in o.names}
    got: dict[str, Any] = {o.dest: [] if o.many else (False if o.flag else o.default)
                           for o in options}
    given: set[str] = set()
    plain: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        name, eq, text = arg.partition("=")
        option = by_name.get(name) if arg.startswith("--") else None
        if option is None:
            if words and not arg.startswith("-"):
                plain.append(arg)
                at += 1
                continue
            return None
        if accept is not None and option.dest not in accept:
            return None
        if option.flag:
            if eq:
                return None
            got[option.dest] = True
        else:
            if not eq:
                at += 1
                if at == len(args):
                    return None
                text = args[at]
            if text.startswith("-") and text != "-":
                return None
            value = option.value(text)
            if value is None:
                return None
            if option.many:
                got[option.dest].append(value)
            else:
                got[option.dest] = value
        given.add(option.dest)
        at += 1
    if any(o.required and o.dest not in given for o in options):
        return None
    if words:
        got["words"] = plain
    return got
