"""Where a markdown file's YAML frontmatter ends, and what it holds: one answer for every reader.

A file with frontmatter starts with a `---` line and the frontmatter ends at
the next `---` line; everything after it is the body, `---` lines included
(a horizontal rule in a lesson's body never moves its title). Standard
library only at import: the wake-up hook reads agent definitions with it, and
`load_yaml` (an entry's fields, read strictly) imports PyYAML when called.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from typing import Any

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


# The YAML tags a composed node may carry: plain strings, lists and mappings only.
_ALLOWED_TAGS = frozenset(
    {"tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"}
)


# What `entry.render` writes: `field: plain` (letters, digits and `._:+-`, starting and
# ending with a letter or digit), `field: "json string"` or `field: ["json", "strings"]`,
# without a backslash (so that JSON and YAML read the quotes alike).
_SIMPLE_LINE = re.compile(
    r'([a-z_]+): (?:([A-Za-z0-9](?:[A-Za-z0-9._:+-]*[A-Za-z0-9])?)|"([^"\\]*)"'
    r'|\[((?:"[^"\\]*"(?:, "[^"\\]*")*)?)\])')
_ITEM = re.compile(r'"([^"]*)"')
# Control characters (a tab, a carriage return: YAML reads some as line breaks), and
# anything outside ASCII, are left to PyYAML (a class of every non-ASCII range PyYAML
# refuses costs 9 ms to compile, more than the PyYAML import it saves).
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f]")


def simple(front: str) -> dict[str, Any] | None:
    """The fields of frontmatter written in `entry.render`'s shape, read without PyYAML
    (exactly what `load_yaml` reads from it); None for anything else."""
    if not front.isascii() or _CONTROL.search(front):
        return None
    out: dict[str, Any] = {}
    for line in front.split("\n")[:-1] if front.endswith("\n") else front.split("\n"):
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None:
            return None
        key, plain, text, items = match.groups()
        if key in out:
            return None  # PyYAML says why
        if items is not None:
            out[key] = _ITEM.findall(items)
        else:
            out[key] = plain if plain is not None else text
    return out


def load_yaml(front: str, problems: list[str]) -> dict[str, Any] | None:
    """The fields of frontmatter text, every value a string or list; None after a problem.

    Composed with PyYAML's base loader (no implicit dates or booleans) and walked
    by hand: explicit tags, aliases and duplicate keys are refused before any
    value is used. PyYAML is imported here, never at module level (hot path), and
    not at all for frontmatter in the shape `jmem` writes (`simple`).
    """
    fields = simple(front)
    if fields is not None:
        return fields
    import yaml

    loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
    try:
        node = yaml.compose(front, Loader=loader)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 2}" if where is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.append(f"frontmatter: not valid YAML{at}: {reason}")
        return None
    if node is None:
        return {}
    if not isinstance(node, yaml.MappingNode):
        problems.append("frontmatter: must be a mapping of fields (key: value lines)")
        return None
    try:
        value = _construct(node, set())
    except _YamlRefused as exc:
        problems.append(f"frontmatter: {exc}")
        return None
    assert isinstance(value, dict)
    return value


class _YamlRefused(Exception):
    pass


def _construct(node: Any, seen: set[int]) -> Any:
    if id(node) in seen:
        raise _YamlRefused("YAML aliases (*name) are not allowed")
    seen.add(id(node))
    if node.tag not in _ALLOWED_TAGS:
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        raise _YamlRefused(f"YAML tag {tag} is not allowed")
    if node.id == "scalar":  # yaml.ScalarNode (a node's kind is its class's `id`)
        return node.value
    if node.id == "sequence":
        return [_construct(item, seen) for item in node.value]
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = _construct(key_node, seen)
        if not isinstance(key, str):
            raise _YamlRefused("field names must be plain words")
        if key in out:
            raise _YamlRefused(f"field {key!r} appears twice")
        out[key] = _construct(value_node, seen)
    return out
