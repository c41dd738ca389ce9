"""Templates shipped with the package: git hook shims, the CI workflow, the agent file.

They are files, not Python strings, so they read (and diff) as what they are;
`pyproject.toml` ships them as package data. Placeholders are `@NAME@`, which
appears in neither shell nor YAML nor markdown syntax, so no escaping is
needed. Reading one costs a file read; the git hooks never do it at hook
time: `jmem init` writes the finished shim (docs/DESIGN.md, "Git hooks").
"""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"@[A-Z_]+@")


def text(name: str) -> str:
    """The template `name` (a file in this folder), as text."""

    from importlib.resources import files  # pulls in pathlib, tempfile, zipfile

    return files(__name__).joinpath(name).read_text(encoding="utf-8")


def fill(name: str, /, **values: str) -> str:
    """The template `name` with every `@KEY@` replaced by `values[key]`, in one pass
    (a value that happens to contain `@KEY@` is not substituted again).

    A placeholder without a value is a bug in the caller, not output: KeyError.
    """
    template = text(name)
    wanted = {m[1:-1].lower() for m in _PLACEHOLDER.findall(template)}
    missing = sorted(wanted - set(values))
    if missing:
        raise KeyError(f"template {name}: no value for {', '.join(missing)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group()[1:-1].lower()], template)
