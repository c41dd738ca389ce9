"""ruff and mypy (strict) are part of the suite, so CI runs them."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO_ROOT


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, check=False)


def test_ruff_clean() -> None:
    dirs = [d for d in ("journal_mem", "tests", "bench", "fixtures") if (REPO_ROOT / d).is_dir()]
    proc = run_tool("ruff", "check", *dirs)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_clean() -> None:
    proc = run_tool("mypy")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_merge_conflict_markers_are_left_in_the_tree() -> None:
    """A merge resolved by hand once left `<<<<<<<` in the README; never again."""
    found = []
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")  # not bench/results
    folders = ("journal_mem", "tests", "bench", "fixtures", "docs", ".ci", ".claude")
    for rel in tracked:
        path = REPO_ROOT / rel
        if (rel.split("/", 1)[0] in folders and path.is_file()
                and path.suffix in {".py", ".md", ".toml", ".json", ".yml", ""}):
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{path}:{n}" for n, line in enumerate(text.splitlines(), 1)
                      if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "======="]
    for name in ("README.md", "pyproject.toml"):
        text = (REPO_ROOT / name).read_text()
        found += [name for line in text.splitlines() if line.startswith("<<<<<<< ")]
    assert not found, found
