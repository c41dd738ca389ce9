"""Commands an agent meets at the start and end of a session: its wake-up pack, the
end-of-session reminder, the Claude Code plugin, Codex's trust records, and the MCP
server."""

from __future__ import annotations

import sys

import click

from journal_mem import errors
from journal_mem.cli.base import CONTEXT, cli, cwd, declared, emit_json
from journal_mem.gitops import gitcore
from journal_mem.mcpserver import handshake
from journal_mem.setup import client_files
from journal_mem.setup.plugin import folder, install_lines
from journal_mem.wake import clients
from journal_mem.wake.claude import PACK_LIMIT
from journal_mem.wake.hooks import REMIND_OPTIONS, WAKE_OPTIONS, remind_hook, wake_hook
from journal_mem.wake.pack import for_command


@cli.command(context_settings=CONTEXT)
@declared(WAKE_OPTIONS)
def wake(agent: str | None, hook: str | None, max_chars: int, query: str | None,
         min_confidence: float, as_json: bool, plugin: bool) -> int:
    """Print an agent's wake-up pack: the main checkout's MEMORY.md, lessons written
    since the last distill (newest first), and the keys corrected since then.

    Cut to --max-chars, whole lines, lowest-ranked first; a last line says what
    was cut. With --hook claude (what `jmem init` puts in .claude/settings.json
    for SessionStart, SubagentStart, UserPromptSubmit, PostToolUse,
    PostToolUseFailure and PostToolBatch) it gives each session only what it
    lacks, once however many of its hooks run at the same moment, in UTF-16
    units below Claude Code's cap, and never fails: a problem is one line on
    stderr, exit 0.
    """
    if hook:
        data = clients.begin(hook, sys.stdin.buffer.read())
        return errors.OK if data is None else wake_hook(data, agent,
                                                        min(max_chars, PACK_LIMIT),
                                                        plugin=plugin)

    click_ctx = click.get_current_context()
    pack = for_command(cwd(click_ctx), agent, max_chars=max_chars, query=query,
                       min_confidence=min_confidence)
    if as_json:
        emit_json(pack.as_json())
    else:
        click.echo(pack.text, nl=False)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@declared(REMIND_OPTIONS)
def remind(agent: str | None, hook: str, plugin: bool) -> int:
    """Stop/SubagentStop hook: once per session, when the session edited or committed
    files (or ran 20 minutes) and recorded no lesson of its own, remind it (as
    context) to record one. Never fails: exit 0."""
    data = clients.begin(hook, sys.stdin.buffer.read())
    return errors.OK if data is None else remind_hook(data, agent, plugin=plugin)


@cli.command("claude-plugin", context_settings=CONTEXT)
def claude_plugin() -> int:
    """Print where journal-mem's Claude Code plugin is, and how to install it.

    The plugin runs the same hooks as `jmem init` writes, for every project on
    the machine, without needing `jmem` on Claude Code's PATH or the hooks in
    the branch's .claude/settings.json (a worktree of an older commit).
    """
    click.echo(folder())
    for line in install_lines(folder()):
        click.echo(line, err=True)
    return errors.OK


@cli.command("codex-trust", context_settings=CONTEXT)
@click.pass_context
def codex_trust(click_ctx: click.Context) -> int:
    """Print the config.toml records with which Codex CLI runs this repository's
    journal-mem hooks (written by `jmem init --codex`).

    Codex runs a project's hooks only when its user trusts the project and each
    hook (a hash of its command). A repository cannot grant that for its users,
    so jmem never edits ~/.codex/config.toml: review the records and append them
    yourself, once per clone. They name the main checkout's hooks file, which is
    what Codex looks for in its linked worktrees too, and only hooks exactly as
    `init` writes them:

    \b
      jmem codex-trust >> ~/.codex/config.toml

    Records the config already holds are left out; one it holds with another
    value is named on stderr (edit it by hand), with exit 1.
    """
    # Codex (0.171.0) looks for the main checkout's records in every linked worktree too
    root = gitcore.locate(cwd(click_ctx)).main_root
    missing = client_files.missing_hooks(root, client_files.CODEX)
    if missing:
        raise errors.ConfigError(
            f"{root}: {client_files.CODEX.file} lacks journal-mem's {', '.join(missing)} "
            "hooks: nothing to trust", hint="run `jmem init --codex` (and commit it)")
    hostile = client_files.unvouched(root)
    if hostile:
        raise errors.PolicyViolation(
            "codex-trust refused, nothing printed: these hooks run journal-mem's command "
            "but are not what `jmem init --codex` writes, so jmem will not vouch for them:\n"
            + "\n".join(hostile),
            hint="review them in Codex yourself, or put journal-mem's back with "
                 "`jmem init --codex` (after removing those), then run codex-trust again")
    toml, clash = client_files.trust_toml(root)
    click.echo(toml, nl=False)
    for line in clash:
        click.echo(f"jmem: {client_files.codex_home()}/config.toml already sets this "
                   f"differently; change it by hand to: {line}", err=True)
    return errors.REFUSED if clash else errors.OK


@cli.command(context_settings=CONTEXT)
@click.pass_context
def mcp(click_ctx: click.Context) -> int:
    """Serve this checkout's memory to an MCP client on stdin/stdout.

    Tools: wake (the agent's pack), recall (ranked facts), write_lesson
    (validated as `jmem write`), status; resource memory://AGENT/MEMORY.md.
    Register it in a client as the command `jmem mcp` run in the checkout
    (`jmem init` prints how for each client; docs/clients.md).
    """
    handshake.serve(cwd(click_ctx))  # the SDK loads after the handshake
    return errors.OK
