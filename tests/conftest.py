"""Fixtures: a clean environment, and real repositories set up with `jmem init`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import IDENTITY, add_worktree, git, jmem, make_repo

from journal_mem.gitops.gitcore import LOCAL_ENV_VARS


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In-process calls see the same clean environment as child processes."""
    for name in list(os.environ):
        if name.startswith("JMEM_") or name in LOCAL_ENV_VARS:
            monkeypatch.delenv(name)
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)
    yield


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository set up with `jmem init --agent api --agent web`, committed."""
    main = make_repo(tmp_path / "main")
    proc = jmem(main, "init", "--agent", "api", "--agent", "web", "--no-git-hooks", "--no-claude")
    assert proc.returncode == 0, proc.stderr
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "init journal-mem")
    return main


@pytest.fixture
def worktree(repo: Path, tmp_path: Path) -> Path:
    """A linked worktree of `repo`."""
    return add_worktree(repo, tmp_path / "wt")




# --- the `slow` marker: skipped unless --runslow ---------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow")
    parser.addoption("--long", action="store_true", default=False,
                     help="run the reliability suite at full size (as JMEM_RELIABILITY_SCALE=long)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)



# --- reliability suite: a flag for the long run ----------------------------------------


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the figures the reliability tests recorded (`record_property("reliability: …")`);
    they travel with each test report, so this works under xdist too."""
    lines = []
    for report in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get(
            "failed", []):
        if getattr(report, "when", "call") != "call":
            continue
        for name, value in getattr(report, "user_properties", []):
            if str(name).startswith("reliability: "):
                lines.append(f"{str(name)[len('reliability: '):]}: {value}")
    if lines:
        terminalreporter.write_sep("-", "reliability figures")
        for line in sorted(lines):
            terminalreporter.write_line(line)
