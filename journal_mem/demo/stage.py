"""The demo's stage: a temporary repository, and commands run in it and shown."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable

from journal_mem.gitops.gitcore import clean_env

Echo = Callable[[str], None]


class Stage:
    """A temporary repository and a way to run commands in it, printing them."""

    def __init__(self, root: str, echo: Echo) -> None:
        self.root = root
        self.echo = echo
        self.scenes = 0
        self.env = clean_env({
            "GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
            "GIT_COMMITTER_NAME": "demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid",
        })
        for name in [k for k in self.env if k.startswith("JMEM_")]:
            del self.env[name]
        # the Claude Code hooks call `jmem` from PATH: this very installation
        self.env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + self.env.get("PATH", "")

    def say(self, text: str) -> None:
        self.echo("")
        for line in text.strip().splitlines():
            self.echo(f"  {line.strip()}")

    def scene(self, title: str) -> None:
        self.scenes += 1
        self.echo("")
        self.echo(f"== {self.scenes}. {title} ==")

    def run(self, args: list[str], cwd: str, *, stdin: str | None = None, show: bool = True,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a command (`jmem …` runs this very program) and show its output."""
        shown = " ".join(shlex.quote(a) for a in args)
        argv = [sys.executable, "-m", "journal_mem", *args[1:]] if args[0] == "jmem" else args
        rel = os.path.relpath(cwd, self.root)
        if show:
            self.echo(f"  [{rel}]$ {shown}")
        proc = subprocess.run(argv, cwd=cwd, env=self.env, input=stdin, text=True,
                              capture_output=True, check=False)
        if show:
            for line in (proc.stdout + proc.stderr).rstrip().splitlines():
                self.echo(f"    {line.replace(self.root + os.sep, '')}")
        if check and proc.returncode != 0:
            raise RuntimeError(f"demo step failed: {shown} (exit {proc.returncode})\n"
                               f"{proc.stdout}{proc.stderr}")
        return proc

    def git(self, *args: str, cwd: str | None = None) -> None:
        self.run(["git", *args], cwd or self.main, show=False)

    @property
    def main(self) -> str:
        return os.path.join(self.root, "app")

    @property
    def worktree(self) -> str:
        return os.path.join(self.root, "app-feature")
