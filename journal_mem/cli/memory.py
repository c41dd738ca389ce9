"""Set memory up in a repository (`jmem init`), and move a worktree's memory edits into
the main checkout's journal (`jmem rescue`): both adopt memory written by hand."""

from __future__ import annotations

import textwrap

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, emit_json
from journal_mem.guard.rescue import rescue as do_rescue
from journal_mem.setup import init as initialize


@cli.command(context_settings=CONTEXT)
@click.option("--agent", "agents", multiple=True, metavar="NAME",
              help="Create this agent's journal folder (repeatable).")
@click.option("--no-git-hooks", is_flag=True, help="Do not install git hooks.")
@click.option("--no-claude", is_flag=True, help="Do not touch .claude/settings.json.")
@click.option("--claude-agent", "claude_agents", multiple=True, metavar="NAME",
              help="Write .claude/agents/NAME.md (memory: project) and its journal folder.")
@click.option("--uninstall", is_flag=True,
              help="Remove journal-mem's git hooks (restoring any .legacy hook); keep the data.")
@click.option("--hooks-path-ok", is_flag=True,
              help="Install the hooks even though core.hooksPath points at another folder.")
@click.option("--ci", type=click.Choice(["github"]), default=None,
              help="Also write the CI workflow that checks, distills and pushes "
                   "(.github/workflows/journal-mem.yml).")
@click.option("--ci-install", metavar="COMMAND", default=None,
              help="How the CI job installs jmem [default: pinned to the commit this jmem "
                   "runs from, when a remote has it; else init refuses and asks for this].")
@click.option("--ci-curator", is_flag=True,
              help="With --ci: add the scheduled curate job, which runs `jmem consolidate "
                   "--propose` and opens a pull request (never pushes to the memory branch).")
@click.option("--no-import", is_flag=True,
              help="Do not import existing hand-written memory; only say how to.")
@click.option("--codex", is_flag=True,
              help="Also write Codex CLI's hooks (.codex/hooks.json); see `jmem codex-trust`.")
@click.option("--gemini", is_flag=True,
              help="Also merge Gemini CLI's hooks into .gemini/settings.json.")
@click.option("--qwen", is_flag=True,
              help="Also merge Qwen Code's hooks into .qwen/settings.json.")
@click.option("--no-agents-md", is_flag=True,
              help="Do not write journal-mem's block into AGENTS.md.")
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def init(click_ctx: click.Context, agents: tuple[str, ...], no_git_hooks: bool, no_claude: bool,
         claude_agents: tuple[str, ...], uninstall: bool, hooks_path_ok: bool,
         ci: str | None, ci_install: str | None, ci_curator: bool, no_import: bool,
         codex: bool, gemini: bool, qwen: bool, no_agents_md: bool,
         as_json: bool) -> int:
    """Set up journal-mem in this repository (idempotent).

    Creates .claude/journal-mem.toml (every setting shown with its default),
    the memory root .claude/agent-memory/ and a journal folder per --agent,
    in the main checkout. Records the current branch as distill.branch.
    Installs the pre-commit, pre-merge-commit, post-commit, post-merge and
    post-rewrite git hooks (a hook that is not ours is kept as <name>.legacy
    and still runs first), and a merge driver for the distilled files
    (.gitattributes + .git/config), so a git pull never conflicts on them.
    Unless --no-claude, merges the wake-up and reminder hooks into
    .claude/settings.json, keeping every existing setting and hook.
    Existing MEMORY.md and topic files that jmem did not write are counted and
    imported as lessons in one commit (unless --no-import). Keeps a short block
    in AGENTS.md (between markers; the rest of the file untouched) telling any
    agent where its memory is and how to record a lesson, and says how to
    register `jmem mcp` in each client. --codex, --gemini and --qwen add
    those clients' hooks.
    """
    if ci_curator and not ci:
        raise click.UsageError("--ci-curator adds a job to the CI workflow: give --ci github")
    if uninstall:
        report = initialize.uninstall(cwd(click_ctx))
    else:
        report = initialize.init(cwd(click_ctx), list(agents), git_hooks=not no_git_hooks,
                                 hooks_path_ok=hooks_path_ok, claude=not no_claude,
                                 claude_agents=list(claude_agents), ci=ci,
                                 ci_install=ci_install, import_existing=not no_import,
                                 ci_curator=ci_curator, agents_md=not no_agents_md,
                                 clients=tuple(c for c, on in (("codex", codex),
                                                               ("gemini", gemini),
                                                               ("qwen", qwen)) if on))
    if as_json:
        emit_json({"done": report.done, "notes": report.notes, "refused": report.refused})
        return errors.REFUSED if report.refused else errors.OK
    idle = "no journal-mem hooks installed: nothing to remove" if uninstall else \
        "journal-mem is already set up here: nothing to change"
    for line in report.done or ([] if report.refused else [idle]):
        click.echo(line)
    for note in report.notes:
        click.echo(short_lines(f"note: {note}"), err=True)
    for line in report.refused:
        click.echo(line, err=True)
    return errors.REFUSED if report.refused else errors.OK


def short_lines(text: str, width: int = 88) -> str:
    """A note as short lines: its prose wrapped at `width`; each line after a newline (a
    command to copy) kept whole, indented."""
    first, *rest = text.split("\n")
    out = textwrap.wrap(first, width, break_long_words=False, break_on_hyphens=False) or [""]
    return "\n".join([out[0], *(f"  {line}" for line in [*out[1:], *rest])])


@cli.command(context_settings=CONTEXT)
@click.pass_context
def rescue(click_ctx: click.Context) -> int:
    """In a linked worktree: move memory changes into the main checkout's journal.

    New lessons are validated and filed in the main journal; each line added
    to MEMORY.md, a topic file or another memory file becomes a new lesson
    (topic inbox). The worktree's copies go back to HEAD, unstaged. A file
    stays where it is when filing it fails.
    """
    report = do_rescue(cwd(click_ctx))
    for line in report.lines:
        click.echo(line)
    for line in report.failed:
        click.echo(f"jmem rescue: {line}", err=True)
    return errors.REFUSED if report.failed else errors.OK
