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
