"""What a ref cites, and how to find it in a file's text: pure, no disk, no git.

A ref is a repository path, optionally with an anchor after `#`:

* src/pay.py — the file (it must exist; renames are followed);
* `src/pay.py#L15` or src/pay.py#L15-L17 (GitHub's line-anchor form; `L15-17`
  too) — those lines;
* `src/pay.py#charge` or `src/pay.py#Billing.charge` — a function, class or method
  by name: its whole body, wherever it moves in the file.

What an anchor cites is its text with trailing blanks dropped from each line;
its digest is what a citation records and what a later commit is compared by.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from journal_mem.hashes import sha1

MAX_LINES = 400  # a line range longer than this is not a citation, it is a file
_LINES = re.compile(r"L(\d{1,7})(?:-L?(\d{1,7}))?")
_SYMBOL = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*){0,3}")
_DEFINERS = (r"(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:static\s+)?"
             r"(?:def|class|function\*?|func|fn|struct|interface|enum|trait|type|impl|module"
             r"|sub|object|record|protocol|const|let|var|val)\s+")


def split(ref: str) -> tuple[str, str]:
    """(path, anchor) of a ref; the anchor is "" for a file-level ref."""
    path, _, anchor = ref.partition("#")
    return path, anchor


def anchor_problem(anchor: str) -> str | None:
    """Why `anchor` is not a valid anchor, or None."""
    if not anchor:
        return None
    lines = _LINES.fullmatch(anchor)
    if lines:
        start, end = line_range(anchor) or (0, 0)
        if start < 1 or end < start:
            return f"#{anchor}: a line range runs from line 1 up (L10-L12)"
        if end - start + 1 > MAX_LINES:
            return f"#{anchor}: at most {MAX_LINES} lines; cite the file or a symbol instead"
        return None
    if _SYMBOL.fullmatch(anchor):
        return None
    return (f"#{anchor}: an anchor is a line range (#L10, #L10-L12) or a name (#charge, "
            "#Billing.charge)")


def line_range(anchor: str) -> tuple[int, int] | None:
    """(first, last) line, 1-based, of a line anchor; None for a symbol anchor."""
    match = _LINES.fullmatch(anchor)
    if not match:
        return None
    start = int(match[1])
    return start, int(match[2] or start)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _block_end(lines: list[str], start: int) -> int:
    """The last line (0-based) of the definition starting at `start`: its indented body
    (a line ending in `:`), its braces, or the line alone."""
    depth = 0
    for i in range(start, min(start + 6, len(lines))):  # a signature may span lines
        text = lines[i].split("#", 1)[0].split("//", 1)[0].rstrip()
        depth += text.count("{") - text.count("}")
        if depth > 0:
            while depth > 0 and i + 1 < len(lines):
                i += 1
                depth += lines[i].count("{") - lines[i].count("}")
            return i
        if text.endswith(":"):
            return _indented_end(lines, start, i)
        if i > start and _indent(lines[i]) <= _indent(lines[start]) and text:
            break  # the next statement: a one-line definition
    return start


def _indented_end(lines: list[str], start: int, colon: int) -> int:
    base, last = _indent(lines[start]), colon
    for i in range(colon + 1, len(lines)):
        text = lines[i]
        if not text.strip():
            continue
        if _indent(text) <= base:
            break
        last = i
    return last


def symbol_range(lines: list[str], name: str, lo: int = 0, hi: int | None = None,
                 ) -> tuple[int, int] | None:
    """(first, last) 0-based lines of the definition of `name` (`A.b`: `b` inside `A`)."""
    hi = len(lines) if hi is None else hi
    head, _, rest = name.partition(".")
    pattern = re.compile(r"^\s*" + _DEFINERS + re.escape(head) + r"(?![\w$])"
                         r"|^\s*(?:export\s+)?(?:const|let|var)?\s*" + re.escape(head)
                         + r"\s*[:=]\s*(?:async\s*)?(?:function|\(|[\w$]+\s*=>)")
    for i in range(lo, hi):
        if pattern.match(lines[i]):
            end = min(_block_end(lines, i), hi - 1)
            if not rest:
                return i, end
            return symbol_range(lines, rest, i + 1, end + 1)
    return None


def cited_lines(text: str, anchor: str) -> tuple[int, int] | None:
    """(first, last) 1-based lines that `anchor` cites in `text`; None when the text has
    no such lines or no such name."""
    lines = text.split("\n")
    span = line_range(anchor)
    if span is not None:
        return span if span[1] <= len(lines) - text.endswith("\n") else None
    found = symbol_range(lines, anchor)
    return None if found is None else (found[0] + 1, found[1] + 1)


def digest(lines: list[str]) -> str:
    """What a citation records of its lines: 16 hex digits of their text."""
    text = "\n".join(line.rstrip() for line in lines)
    return sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def digest_at(text: str, anchor: str) -> tuple[str, tuple[int, int]] | None:
    """(digest, lines) of what `anchor` cites in `text`, or None when it cites nothing."""
    span = cited_lines(text, anchor)
    if span is None:
        return None
    return digest(text.split("\n")[span[0] - 1:span[1]]), span


def _outward(near: int, count: int) -> Iterator[int]:
    """0-based starts from `near` outward: near, near-1, near+1, near-2, …"""
    near = min(max(near, 0), max(count - 1, 0))
    yield near
    for step in range(1, count):
        low, high = near - step, near + step
        if low < 0 and high >= count:
            return
        if low >= 0:
            yield low
        if high < count:
            yield high


def still_there(text: str | list[str], anchor: str, want: str, near: int = 1,
                ) -> tuple[int, int] | None:
    """Where the cited text with digest `want` is in `text` now, or None when it changed.

    A symbol is found by its name and compared whole. Lines are looked for
    first where they were cited, then outward from there (code inserted above,
    or moved within the file): the nearest window with the same text wins.
    `text` may be given as its lines, trailing blanks already dropped.
    """
    lines = text.split("\n") if isinstance(text, str) else text
    span = line_range(anchor)
    if span is None:
        found = symbol_range(lines, anchor)
        if found is None or digest(lines[found[0]:found[1] + 1]) != want:
            return None
        return found[0] + 1, found[1] + 1
    size = span[1] - span[0] + 1
    stripped = [line.rstrip() for line in lines] if isinstance(text, str) else lines
    raw = _raw(want)
    if raw is None:  # not a digest `digest` makes: no window has it
        return None
    for i in _outward(near - 1, len(stripped) - size + 1):
        # `digest` of lines stripped already, compared as bytes: a cited file changed by
        # a commit is scanned window by window (1,000 facts cited across 100 commits:
        # ~6k windows of a distill)
        window = "\n".join(stripped[i:i + size]).encode("utf-8", "surrogateescape")
        if sha1(window).digest()[:8] == raw:
            return i + 1, i + size
    return None


def _raw(want: str) -> bytes | None:
    """The 8 bytes whose hex is `want`, as `digest` writes it (16 lowercase hex digits);
    None for any other text."""
    try:
        raw = bytes.fromhex(want)
    except ValueError:
        return None
    return raw if len(raw) == 8 and raw.hex() == want else None


def stripped_lines(text: str) -> list[str]:
    """A text's lines with trailing blanks dropped: what `still_there` compares."""
    return [line.rstrip() for line in text.split("\n")]


class CodeChange:
    """A citation whose code changed (or whose file went) in `commit`."""

    __slots__ = ("commit", "gone", "ref", "subject")

    def __init__(self, ref: str, commit: str, subject: str, gone: bool = False) -> None:
        self.ref, self.commit, self.subject, self.gone = ref, commit, subject, gone

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CodeChange) and self.as_list() == other.as_list()

    def __hash__(self) -> int:
        return hash(tuple(self.as_list()))

    def __repr__(self) -> str:
        return f"CodeChange({self.text()!r})"

    def as_list(self) -> list[str]:
        return [self.ref, self.commit, self.subject, "gone" if self.gone else "changed"]

    def text(self, subject: bool = True) -> str:
        """`cited code changed: src/pay.py#L15-L17 in abc1234 (subject)`."""
        what = "cited file deleted" if self.gone else "cited code changed"
        said = f" ({self.subject})" if subject and self.subject else ""
        return f"{what}: `{self.ref}` in {self.commit[:7]}{said}"
