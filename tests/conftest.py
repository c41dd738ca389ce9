"""Fixtures: a clean environment, and real repositories set up with `jmem init`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import IDENTITY, add_worktree, git, jmem, make_repo

from journal_mem.gitfacts import LOCAL_ENV_VARS


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




# --- the `slow` marker: skipped unless --runslow (issue 6) ---------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
