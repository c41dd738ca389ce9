"""Where a markdown file's YAML frontmatter ends: one answer for every reader.

A file with frontmatter starts with a `---` line and the frontmatter ends at
the next `---` line; everything after it is the body, `---` lines included
(a horizontal rule in a lesson's body never moves its title). Standard
library only: the wake-up hook reads agent definitions with it.
"""

from __future__ import annotations

FRONTMATTER_MAX = 8192


def split(text: str) -> tuple[str | None, str, str]:
    """(frontmatter, body, problem) of `text` (LF line endings).

    frontmatter is None when the file has none (problem "") or when it is
    broken (problem says how); the body is then the whole text, or "".
    """
    if not text.startswith("---\n"):
        return None, text, ""
    end = text.find("\n---\n", 3)
    if end < 0:
        if not text.endswith("\n---"):
            return None, "", "frontmatter: no closing '---' line"
        end = len(text) - 4
    front = text[4 : end + 1]
    if len(front.encode()) > FRONTMATTER_MAX:
        return None, "", f"frontmatter: over {FRONTMATTER_MAX} bytes"
    return front, text[end + 5 :], ""


def scalar(front: str, name: str) -> str | None:
    """The plain value of a top-level `name: value` line of `front`, or None.

    For simple settings in files journal-mem does not own (Claude Code's agent
    definitions); a journal entry's fields go through the YAML parser.
    """
    for line in front.split("\n"):
        key, colon, value = line.partition(":")
        if colon and key == name:
            value = value.split(" #", 1)[0].strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            return value
    return None
