"""Every reference in the code points inside the repository, and what it names exists.

Code cites the design as `docs/DESIGN.md, "<section name>"`; a citation of a
file the repository does not have (a design or style note kept elsewhere, an
issue number) is a dead end for the next reader, and so is a citation of a
section that was renamed.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from helpers import REPO_ROOT

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


def scanned_files() -> list[Path]:
    """Source, test, bench and fixture files, the README and the project's own config."""
    files = [REPO_ROOT / "README.md", REPO_ROOT / "pyproject.toml",
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
    assert {"The protocol", "Layers", "Files on disk", "Invariants", "Configuration",
            "Exit codes"} <= sections
    wrong = []
    for path in [*scanned_files(), REPO_ROOT / "docs" / "DESIGN.md"]:
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
