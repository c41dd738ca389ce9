"""An entry's title and body (docs/DESIGN.md, "Journal entries"): what a reader sees.

The title becomes the default key and the file name, so it is one visible line
without secrets; the body fits `budget.entry_bytes`. `build` and `parse` share
these checks.
"""

from __future__ import annotations

TITLE_MAX = 150
# Unicode categories a title must not hold: controls (VT, FF, NEL), format characters
# (bidi overrides, zero-width), line and paragraph separators. Each changes what a
# reader sees, or where a line ends, differently in different tools.
BAD_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def clean_body(body: str) -> str:
    lines = [line.rstrip() for line in body.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def check_title(title: str, problems: list[str]) -> None:
    if not title:
        problems.append("title: empty")
    elif len(title) > TITLE_MAX:
        problems.append(f"title: {len(title)} characters, at most {TITLE_MAX}")
    elif "\n" in title or "\r" in title:
        problems.append("title: must be one line")
    else:
        _check_title_text(title, problems)
        _check_title_secret(title, problems)


def _check_title_text(title: str, problems: list[str]) -> None:
    """No invisible or line-breaking characters, no HTML comment (hidden when rendered)."""
    import unicodedata

    bad = sorted({f"U+{ord(c):04X}" for c in title
                  if unicodedata.category(c) in BAD_CATEGORIES})
    if bad:
        problems.append(f"title: holds control or invisible characters ({', '.join(bad)})")
    if "<!--" in title or "-->" in title:
        problems.append("title: holds an HTML comment marker (<!-- or -->), which rendered "
                        "views hide")


def _check_title_secret(title: str, problems: list[str]) -> None:
    """A title becomes the default key and the entry's file name, both for good: one that
    holds a secret is refused whatever `guard.scan_secrets` says, before any name is built."""
    from journal_mem.model.secretscan import scan

    for finding in scan(title):
        problems.append(f"title: {finding.kind.replace('_', ' ')} in the title (a title "
                        "becomes the key and the file name: leave the secret out)")


def check_body(body: str, entry_bytes: int, problems: list[str]) -> None:
    size = len(body.encode("utf-8", "surrogatepass"))
    if size > entry_bytes:
        problems.append(f"body: {size} bytes, over the {entry_bytes}-byte limit (entry_bytes)")
    if "\x00" in body:
        problems.append("body: holds a NUL character")
