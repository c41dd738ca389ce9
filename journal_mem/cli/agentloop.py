"""`jmem hook NAME` through click (its --help); `api.fast_main` answers every run."""

from __future__ import annotations

import click

from journal_mem.api import cli_main
from journal_mem.cli.base import CONTEXT, cli


@cli.command(context_settings={**CONTEXT, "ignore_unknown_options": True})
@click.argument("name", type=click.Choice(["pre-work", "pre-spawn", "post-run", "fail-diag",
                                           "post-retro"]))
def hook(name: str) -> int:
    """Run one agent-loop point: JSON context on stdin, one JSON result on stdout.

    Always exits 0: problems are in the result's "errors", on stderr and in
    <git-common-dir>/journal-mem/logs/hooks.jsonl (`jmem status --hooks`).
    Each point is off until switched on ([hooks] NAME = true, or
    JMEM_HOOKS_NAME=1); JMEM_DISABLE=1 turns them all off.

    \b
    Points:
      pre-work    {"goal" | "queue", "questions"?, "queued"?, "agent"?}
      pre-spawn   {"goal", "worker_dir", "file"?, "agent"?, "max_tokens"?}
      post-run    {"lessons": [{"title", "body", "topic", "type"?, ...}], "run_id"?}
      fail-diag   {"error", "check"?, "files"?, "run_id"?}
      post-retro  {"path", "agent"?}
    """
    return cli_main([name])
