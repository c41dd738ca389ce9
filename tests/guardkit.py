"""Shared helpers for the guard, hooks and rescue tests: hooks installed for real."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import base_env, git, jmem

MEM = ".claude/agent-memory"


def install_hooks(main: Path) -> None:
    """`jmem init` again, this time installing the git hooks."""
    proc = jmem(main, "init", "--no-claude")
    assert proc.returncode == 0, proc.stderr


def lesson(agent: str = "api", title: str = "Run the API tests with -p no:randomly",
           body: str = "They share one database fixture.", topic: str = "testing",
           extra: str = "") -> str:
    """The text of a valid hand-written journal entry."""
    return (f"---\nagent: {agent}\ncreated: 2026-01-02T03:04:05+00:00\ntopic: {topic}\n{extra}"
            f"---\n\n# {title}\n\n{body}\n")


def put(root: Path, rel: str, text: str) -> Path:
    """Write `text` at `root/rel`, creating folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def commit(cwd: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    """A real `git commit` (hooks run); never raises."""
    return git(cwd, "commit", "-m", "change", *args, env=env, check=False)


def head(cwd: Path) -> str:
    return git(cwd, "rev-parse", "HEAD").stdout.strip()


def commit_in_main(main: Path, rel: str, text: str) -> None:
    """Commit a memory file in the main checkout, bypassing the guard (test setup)."""
    put(main, rel, text)
    git(main, "add", "--", rel)
    git(main, "commit", "-q", "--no-verify", "-m", f"setup {rel}")


def env(**extra: str) -> dict[str, str]:
    return base_env(**extra)


ENTRY_TEXT = lesson()
