"""Every reference in the code and the docs points inside the repository, and what it
names exists; the docs say what the code does.

Code cites the design as `docs/DESIGN.md, "<section name>"`; a citation of a
file the repository does not have (a design or style note kept elsewhere, an
issue number) is a dead end for the next reader, and so is a citation of a
section that was renamed. The README is short and links to a page per purpose
under docs/; the command reference is generated from the CLI and the
configuration page's TOML is the defaults, so neither can drift from the code.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import click
from helpers import REPO_ROOT

from journal_mem.cli import cli
from journal_mem.cli.reference import escape, render

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
README_LIMIT = 12 * 1024
REGENERATE = "python -m journal_mem.cli.reference > docs/commands.md"

SCANNED = ("journal_mem", "tests", "bench", "fixtures", ".ci")
SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".sh", ".json", ""}
# Spelled in pieces so that this file does not match itself.
DANGLING = re.compile("|".join([
    "DESIGN " + "\u00a7",
    "\u00a7" + r"\s*\d",
    "GIT" + "-FACTS",
    "STYLE" + r"\.md",
    r"\bissues? +#?\d",
]), re.IGNORECASE)
CITATION = re.compile(r'docs/DESIGN\.md,[\s#]*"([^"<][^"]*)"')  # "<section>" is the form itself


def doc_pages() -> list[Path]:
    """Every page under docs/."""
    return sorted(DOCS.glob("*.md"))


def scanned_files() -> list[Path]:
    """Source, test, bench and fixture files, the README and the project's own config."""
    files = [README, REPO_ROOT / "pyproject.toml", *doc_pages(),
             REPO_ROOT / ".claude" / "journal-mem.toml", REPO_ROOT / ".pre-commit-hooks.yaml"]
    for top in SCANNED:
        for path in sorted((REPO_ROOT / top).rglob("*")):
            skip = {"__pycache__", "results", ".git"}  # bench/results holds generated repos
            if path.is_file() and path.suffix in SUFFIXES and not skip & set(path.parts):
                files.append(path)
    return [f for f in files if f.is_file()]


def design_sections() -> set[str]:
    text = (REPO_ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    return {m.group(1).strip() for m in re.finditer(r"^#{2,4} +(.+)$", text, re.MULTILINE)}


def test_no_reference_to_a_file_outside_the_repository() -> None:
    found = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if DANGLING.search(line):
                found.append(f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}")
    assert not found, "cite docs/DESIGN.md, \"<section>\" or state the fact:\n" + "\n".join(found)


def test_the_scan_catches_each_kind_of_dangling_reference() -> None:
    for line in ["(DESIGN " + "\u00a73.2)", "see GIT" + "-FACTS", "per STYLE" + ".md",
                 "(issue" + " 7: kill -9)", "Issue" + " 11 item 12"]:
        assert DANGLING.search(line), line
    assert not DANGLING.search('docs/DESIGN.md, "Budgets"')


def test_every_design_citation_names_a_section() -> None:
    sections = design_sections()
    assert {"The protocol", "Layout", "Files on disk", "Invariants", "Configuration",
            "Exit codes"} <= sections
    wrong = []
    for path in scanned_files():
        for match in CITATION.finditer(path.read_text(encoding="utf-8")):
            if match.group(1).strip() not in sections:
                wrong.append(f"{path.relative_to(REPO_ROOT)}: {match.group(0)!r}")
    assert not wrong, "no such section in docs/DESIGN.md:\n" + "\n".join(wrong)


def test_every_resource_file_is_shipped_as_package_data() -> None:
    """A template missing from package data works in an editable install and breaks
    `pip install .` (checked for real with a throwaway venv when this was written)."""
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["journal_mem.resources"]
    folder = REPO_ROOT / "journal_mem" / "resources"
    templates = [p for p in folder.iterdir() if p.is_file() and p.suffix != ".py"]
    assert templates
    for path in templates:
        assert any(path.match(g) for g in globs), f"{path.name} is not in package-data"


# --- the README and the pages under docs/ ------------------------------------------

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def prose_lines(text: str) -> list[str]:
    """The lines of a markdown text outside fenced code blocks."""
    out, fence = [], ""
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
        elif match:
            fence = match.group(1)
        else:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text in lower case, punctuation
    other than `-` and `_` dropped, each space a `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, a repeated one numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The targets of the inline links and images of a markdown file, outside code."""
    found = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        found += LINK.findall(CODE_SPAN.sub("", line))
    return found


def broken(path: Path, target: str) -> str | None:
    """Why a link from `path` does not resolve, or None."""
    if EXTERNAL.match(target):
        return None
    file_part, _, anchor = target.partition("#")
    where = (path.parent / file_part).resolve() if file_part else path
    if not where.exists():
        return f"no file {file_part}"
    if anchor and where.suffix == ".md" and anchor not in anchors(where):
        return f"no heading #{anchor} in {where.name}"
    return None


def test_the_readme_is_short() -> None:
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes, over {README_LIMIT}: move " \
                                 "detail into a page under docs/ and link it"


def test_the_readme_links_every_page_under_docs() -> None:
    pages = doc_pages()
    assert {"DESIGN.md", "commands.md", "configuration.md", "claude-code.md", "guard.md",
            "many-machines.md", "agent-loop.md", "benchmarks.md",
            "reliability.md"} <= {p.name for p in pages}
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in links(README)
              if not EXTERNAL.match(t) and t.partition("#")[0]}
    missing = [p.name for p in pages if p.resolve() not in linked]
    assert not missing, "link these pages from README.md: " + ", ".join(missing)


def test_every_link_in_the_docs_resolves() -> None:
    wrong = []
    for path in [README, *doc_pages()]:
        for target in links(path):
            why = broken(path, target)
            if why:
                wrong.append(f"{path.relative_to(REPO_ROOT)}: ({target}): {why}")
    assert not wrong, "\n".join(wrong)


def test_the_link_check_catches_a_broken_file_or_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A `jmem write` page\n\n## Same\n\n## Same\n\n"
                    "[a](b.md) `[c](d.md)` ![e](f.png) [`g`](#same)\n\n"
                    "```md\n# not a heading\n[h](i.md)\n```\n", encoding="utf-8")
    assert anchors(page) == {"a-jmem-write-page", "same", "same-1"}
    assert links(page) == ["b.md", "f.png", "#same"]
    assert broken(page, "#same-1") is None and broken(page, "page.md#a-jmem-write-page") is None
    assert broken(page, "#not-a-heading") and broken(page, "gone.md") and broken(page, "#none")
    assert broken(page, "https://example.com/x.md#y") is None


def test_the_command_reference_is_generated_from_the_cli() -> None:
    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    assert page == render(), f"docs/commands.md differs from the CLI; regenerate it: {REGENERATE}"


def test_the_reference_script_prints_the_reference() -> None:
    out = subprocess.run([sys.executable, "-m", "journal_mem.cli.reference"], cwd=REPO_ROOT,
                         capture_output=True, check=True, env={**os.environ, "COLUMNS": "20"})
    assert out.stdout.decode("utf-8") == render()


def test_the_reference_names_every_command_and_option() -> None:
    page = render()
    for command, ctx in walk_commands(cli, click.Context(cli, info_name="jmem")):
        assert f"\n## {ctx.command_path}\n" in page, ctx.command_path
        for param in command.params:
            if isinstance(param, click.Option):
                assert any(f"`{name}" in page for name in param.opts), (ctx.command_path, param)


def test_the_reference_keeps_help_text_literal() -> None:
    assert escape("in <git-common-dir>/x, `<kept>` and 1<=x") == \
        "in \\<git-common-dir>/x, `<kept>` and 1<=x"
    assert escape("_a_ b_c *d* a\\b") == "\\_a\\_ b_c \\*d\\* a\\\\b"
    assert escape("# one") == "\\# one" and escape("- one") == "\\- one"


def walk_commands(command: click.Command, ctx: click.Context) -> list[tuple[Any, Any]]:
    """Every click command with its context, found independently of the renderer."""
    found = [(command, ctx)]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += walk_commands(sub, click.Context(sub, info_name=name, parent=ctx))
    return found


def settings_module() -> ModuleType:
    """The module that holds the defaults."""
    return importlib.import_module("journal_mem.settings")


def toml_blocks(text: str) -> list[str]:
    return re.findall(r"^```toml\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def test_the_configuration_page_shows_every_setting_with_its_real_default() -> None:
    settings = settings_module()
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    blocks = toml_blocks(page)
    assert blocks, "docs/configuration.md has no ```toml block"
    shown: dict[str, Any] = {}
    for block in blocks:
        for key, value in tomllib.loads(block).items():
            if isinstance(value, dict):
                shown.setdefault(key, {}).update(value)
            else:
                shown[key] = value
    assert shown == settings.DEFAULTS
    for key, default in settings.DEFAULTS.items():
        pairs = default.items() if isinstance(default, dict) else [("", default)]
        for sub, _ in pairs:
            dotted = f"{key}.{sub}" if sub else key
            env = settings.env_name(key, sub) if sub else settings.env_name("", key)
            assert f"| `{dotted}` | `{env}` |" in page, f"{dotted} ({env}) missing from the table"


MODULE_NAME = re.compile(r"`([\w/.-]+\.py)`")


def test_docstrings_and_comments_name_only_modules_that_exist() -> None:
    """A `pkg/module.py` (or a bare `module.py`) named in the package is a file of it."""
    package = REPO_ROOT / "journal_mem"
    files = {str(p.relative_to(package)) for p in package.rglob("*.py")}
    names = {p.name for p in package.rglob("*.py")}
    wrong = []
    for path in sorted(package.rglob("*.py")):
        for match in MODULE_NAME.finditer(path.read_text(encoding="utf-8")):
            ref = match.group(1)
            if ref in files or ("/" not in ref and ref in names) or (REPO_ROOT / ref).exists():
                continue
            wrong.append(f"{path.relative_to(REPO_ROOT)}: `{ref}`")
    assert not wrong, "no such module:\n" + "\n".join(wrong)


def test_the_docs_start_page_groups_every_page() -> None:
    start = REPO_ROOT / "docs" / "README.md"
    text = start.read_text(encoding="utf-8")
    for group in ("## Tutorial", "## How-to guides", "## Reference", "## Explanation"):
        assert group in text, group
    linked = {(start.parent / t.partition("#")[0]).resolve() for t in links(start)
              if not EXTERNAL.match(t) and t.partition("#")[0]}
    missing = [p.name for p in doc_pages() if p != start and p.resolve() not in linked]
    assert not missing, "link these pages from docs/README.md: " + ", ".join(missing)
