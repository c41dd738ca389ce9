"""Test helpers: real git repositories in temp dirs, and the real `jmem` process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from journal_mem.gitops.gitcore import LOCAL_ENV_VARS

REPO_ROOT = Path(__file__).resolve().parent.parent

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def base_env(**extra: str) -> dict[str, str]:
    """The environment for a child process: no inherited GIT_* locals or JMEM_* settings."""
    env = {
        k: v for k, v in os.environ.items()
        if k not in LOCAL_ENV_VARS and not k.startswith("JMEM_")
    }
    env.update(IDENTITY)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


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


def journal_files(main: Path, agent: str) -> list[Path]:
    """Entry files in an agent's journal, sorted."""
    folder = main / ".claude" / "agent-memory" / agent / "journal"
    return sorted(p for p in folder.glob("*.md")) if folder.exists() else []
