"""The commands git runs: the pre-commit guard (answered by `guard.fast` before click
loads; click serves its --help) and the merge driver of distilled files. Kept apart
from the other command modules so that git's calls load only what they use."""

from __future__ import annotations

import os

import click

from journal_mem.cli.base import CONTEXT, cli, cwd, declared
from journal_mem.gitops.mergedriver import merge
from journal_mem.guard.fast import OPTIONS as guard_options
from journal_mem.guard.fast import decide


@cli.command("merge-driver", context_settings=CONTEXT, hidden=True)
@click.argument("ancestor")
@click.argument("current")
@click.argument("other")
@click.argument("path")
def merge_driver(ancestor: str, current: str, other: str, path: str) -> int:
    """Git's merge driver for distilled files (`jmem init` registers it): keep the
    checked-out side and distill again after the merge."""
    return merge(current, path, os.getcwd())


@cli.command(context_settings=CONTEXT)
@declared(guard_options)
def guard(hook: str | None) -> int:
    """Check what is staged under the memory root (the git hooks run this).

    From a linked worktree every memory change is refused (use `jmem rescue`).
    In the main checkout: committed journal entries are append-only, distilled
    files change only in the distiller's commit, and every new lesson must be
    valid, with no secret, conflict marker or symlink. Each refusal names the
    path, the rule and the command that does it right; exit 1 blocks the
    commit. JMEM_DISABLE=1 or hooks.guard = false turn it off.
    """
    click_ctx = click.get_current_context()
    verdict = decide(cwd(click_ctx), hook)
    for line in verdict.lines:
        click.echo(line, err=True)
    return verdict.code
