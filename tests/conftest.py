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


def git(cwd: Path | str, *args: str, env: dict[str, str] | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run real git; raise with its output when it fails and `check` is set."""
    proc = subprocess.run(["git", *args], cwd=cwd, env=env or base_env(), text=True,
                          capture_output=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return proc


def jmem(cwd: Path | str, *args: str, env: dict[str, str] | None = None,
         stdin: str | bytes | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real program (`python -m journal_mem`) as a child process."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run(
        [sys.executable, "-m", "journal_mem", *args], cwd=cwd, env=env or base_env(),
        input=data if data is not None else b"", capture_output=True, check=False,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def make_repo(path: Path, *, commit: bool = True) -> Path:
    """A fresh non-bare repository on branch main, with one commit unless told otherwise."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    if commit:
        (path / "README").write_text("hello\n")
        git(path, "add", "README")
        git(path, "commit", "-q", "-m", "first")
    return path


def add_worktree(main: Path, path: Path, branch: str = "feature") -> Path:
    """A linked worktree of `main` on a new branch."""
    git(main, "worktree", "add", "-q", "-b", branch, str(path))
    return path


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


