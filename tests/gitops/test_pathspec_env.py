"""Pathspec variables in the environment must not blind the guard or leak into hooks.

Magit runs every git command with `--literal-pathspecs`, which git exports as
GIT_LITERAL_PATHSPECS=1 to the hooks it runs; the other three change what a
pathspec means just as much. Each test runs a real `git commit` (hooks
installed by `jmem init`) with one of them set.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from guardkit import MEM, commit, commit_in_main, env, install_hooks, lesson, put
from helpers import add_worktree, git, jmem

ENTRY = f"{MEM}/api/journal/2026-01-02-run-the-api-tests.md"
MEMORY_MD = f"{MEM}/api/MEMORY.md"
VARIABLES = pytest.mark.parametrize("name", ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS",
                                              "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"])


def refused(proc: object, path: str) -> None:
    out = getattr(proc, "stderr", "")
    assert getattr(proc, "returncode", 0) != 0, out
    assert "jmem guard:" in out and f"  {path}\n" in out, out


@VARIABLES
def test_worktree_memory_edit_is_refused(repo: Path, tmp_path: Path, name: str) -> None:
    install_hooks(repo)
    commit_in_main(repo, MEMORY_MD, "# api memory\n")
    wt = add_worktree(repo, tmp_path / "wt")
    put(wt, MEMORY_MD, "# api memory\n- a fact added by hand\n")
    git(wt, "add", "-A")
    refused(commit(wt, env=env(**{name: "1"})), MEMORY_MD)


@VARIABLES
def test_hand_edit_of_memory_md_in_main_is_refused(repo: Path, name: str) -> None:
    install_hooks(repo)
    commit_in_main(repo, MEMORY_MD, "# api memory\n")
    put(repo, MEMORY_MD, "# api memory\n- edited by hand\n")
    git(repo, "add", "-A")
    refused(commit(repo, env=env(**{name: "1"})), MEMORY_MD)


@VARIABLES
def test_edit_of_a_committed_entry_is_refused(repo: Path, name: str) -> None:
    install_hooks(repo)
    commit_in_main(repo, ENTRY, lesson())
    put(repo, ENTRY, lesson(body="Rewritten after the fact."))
    git(repo, "add", "-A")
    refused(commit(repo, env=env(**{name: "1"})), ENTRY)


def test_magit_style_global_option_is_refused_too(repo: Path) -> None:
    install_hooks(repo)
    commit_in_main(repo, ENTRY, lesson())
    put(repo, ENTRY, lesson(body="Rewritten after the fact."))
    git(repo, "add", "-A")
    proc = git(repo, "--literal-pathspecs", "commit", "-m", "x", check=False)
    refused(proc, ENTRY)


@VARIABLES
def test_the_distill_commit_passes_no_pathspec_variable_to_hooks(repo: Path, name: str) -> None:
    """The distill commit is built with commit-tree (docs/DESIGN.md, "Distill commits"):
    no hook runs on it at all, so none can see a pathspec variable or rewrite a file."""
    hooks = Path(git(repo, "rev-parse", "--git-path", "hooks").stdout.strip())
    if not hooks.is_absolute():
        hooks = repo / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    seen = repo.parent / "hook-env.txt"
    foreign = hooks / "pre-commit"
    foreign.write_text(f"#!/bin/sh\nenv | grep '^GIT_.*PATHSPECS=' >> '{seen}'\n"
                       f"echo ran >> '{seen}'\nexit 0\n")
    foreign.chmod(foreign.stat().st_mode | stat.S_IEXEC)
    install_hooks(repo)  # keeps the hook above as pre-commit.legacy, run first
    run_env = env(**{name: "1"})
    proc = jmem(repo, "write", "--agent", "api", "--topic", "testing", "--title",
                "Run the API tests serially", "--body", "They share a database.", env=run_env)
    assert proc.returncode == 0, proc.stderr
    git(repo, "add", "-A")
    assert commit(repo, env=env()).returncode == 0
    assert seen.read_text() == "ran\n"  # the user's commit ran the hook, without the variable
    os.unlink(seen)
    before = git(repo, "rev-parse", "HEAD").stdout
    proc = jmem(repo, "distill", env=run_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(repo, "rev-parse", "HEAD").stdout != before  # the distill committed
    assert not seen.exists()  # and no hook ran on its commit
    assert git(repo, "status", "--porcelain").stdout == ""
