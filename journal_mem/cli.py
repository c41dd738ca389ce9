"""The click commands. Each parses options, calls one core function, prints, and
returns an exit code; the core never imports click."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from journal_mem import errors

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
TYPES = ["principle", "semantic", "procedural", "episodic", "reflective"]


def _cwd(click_ctx: click.Context) -> str:
    return str(click_ctx.find_root().params.get("directory") or os.getcwd())


def _emit_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _emit(data: object, lines: list[str], as_json: bool) -> None:
    """The report as JSON, or as its lines of text."""
    if as_json:
        _emit_json(data)
    else:
        for line in lines:
            click.echo(line)


@click.group(context_settings=CONTEXT)
@click.option(
    "-C", "directory", type=click.Path(file_okay=False), default=None, metavar="PATH",
    help="Run as if started in PATH (like git -C).",
)
@click.version_option(package_name="journal-mem", prog_name="journal-mem")
def cli(directory: str | None) -> None:
    """Git-native memory for teams of coding agents.

    Agents append dated lessons to a journal in the main checkout; a single
    distiller folds the journal into each agent's MEMORY.md; git hooks keep
    worktrees from editing memory directly.

    Exit codes: 0 ok, 1 refused or invalid input, 2 usage, 3 unexpected error
    (see the log named), 4 unsupported repository, 75 another distill holds the lock.
    """


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
@click.option("--no-import", is_flag=True,
              help="Do not import existing hand-written memory; only say how to.")
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def init(click_ctx: click.Context, agents: tuple[str, ...], no_git_hooks: bool, no_claude: bool,
         claude_agents: tuple[str, ...], uninstall: bool, hooks_path_ok: bool,
         ci: str | None, ci_install: str | None, no_import: bool, as_json: bool) -> int:
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
    imported as lessons in one commit (unless --no-import).
    """
    from journal_mem.commands import initialize

    if uninstall:
        report = initialize.uninstall(_cwd(click_ctx))
    else:
        report = initialize.init(_cwd(click_ctx), list(agents), git_hooks=not no_git_hooks,
                                 hooks_path_ok=hooks_path_ok, claude=not no_claude,
                                 claude_agents=list(claude_agents), ci=ci,
                                 ci_install=ci_install, import_existing=not no_import)
    if as_json:
        _emit_json({"done": report.done, "notes": report.notes, "refused": report.refused})
        return errors.REFUSED if report.refused else errors.OK
    idle = "no journal-mem hooks installed: nothing to remove" if uninstall else \
        "journal-mem is already set up here: nothing to change"
    for line in report.done or ([] if report.refused else [idle]):
        click.echo(line)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    for line in report.refused:
        click.echo(line, err=True)
    return errors.REFUSED if report.refused else errors.OK


@cli.command(context_settings=CONTEXT)
@click.option("--agent", metavar="NAME", help="Writer [env JMEM_AGENT, else default_agent].")
@click.option("--topic", metavar="NAME", help="Topic file the lesson folds into.")
@click.option("--title", metavar="TEXT", help="One line, at most 150 characters.")
@click.option("--body", metavar="TEXT", help="The detail (else --body-file, else stdin).")
@click.option("--body-file", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Read the body from FILE ('-' for stdin).")
@click.option("--type", "kind", metavar="TYPE",
              help="principle | semantic (default) | procedural | episodic | reflective.")
@click.option("--confidence", metavar="X", help="Within the type's range.")
@click.option("--importance", metavar="LEVEL", help="critical | high | medium (default) | low.")
@click.option("--key", metavar="KEY",
              help="The fact's team-wide identity [short key from the title].")
@click.option("--supersedes", multiple=True, metavar="KEY", help="Key this replaces (repeatable).")
@click.option("--retracts", multiple=True, metavar="KEY", help="Key to delete (repeatable).")
@click.option("--applies-to", multiple=True, metavar="AGENT",
              help="Other agent that must hold it, or 'all' (repeatable).")
@click.option("--valid-until", metavar="DATE", help="YYYY-MM-DD or datetime; dropped after.")
@click.option("--tag", "tags", multiple=True, metavar="TAG", help="Tag (repeatable, at most 8).")
@click.option("--ref", "refs", multiple=True, metavar="PATH",
              help="Repository path the fact is about (repeatable).")
@click.option("--source", metavar="TEXT", help="Where it came from (PR, issue, run id).")
@click.option("--from-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="File a complete entry (frontmatter and all) after validating it.")
@click.option("--outbox", is_flag=True,
              help="Write to the outbox in the common git dir [env JMEM_OUTBOX=1].")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"path", "key", "outbox", "related"}.')
@click.pass_context
def write(click_ctx: click.Context, agent: str | None, topic: str | None, title: str | None,
          body: str | None, body_file: str | None, kind: str | None, confidence: str | None,
          importance: str | None, key: str | None, supersedes: tuple[str, ...],
          retracts: tuple[str, ...], applies_to: tuple[str, ...], valid_until: str | None,
          tags: tuple[str, ...], refs: tuple[str, ...], source: str | None,
          from_file: str | None, outbox: bool, as_json: bool) -> int:
    """Record one lesson in the main checkout's journal; print its path.

    Works from any worktree and subdirectory: the entry is always created in
    the main checkout (or, with --outbox or when the main checkout cannot be
    written, in <git-common-dir>/journal-mem/outbox/). Nothing is written
    unless every field is valid.

    \b
    Example:
      jmem write --agent api --topic testing --title "Run the API tests with -p no:randomly" \\
          --body "They share a database fixture; random order makes them flaky."
    """
    from journal_mem.commands import write as core
    from journal_mem.store.context import open_context

    context = open_context(_cwd(click_ctx))
    fields: dict[str, Any] = {
        "type": kind, "confidence": confidence, "importance": importance, "key": key,
        "supersedes": list(supersedes), "retracts": list(retracts),
        "applies_to": list(applies_to), "valid_until": valid_until, "tags": list(tags),
        "refs": list(refs), "source": source,
    }
    if from_file:
        given = [f"--{n.replace('_', '-')}" for n, v in fields.items() if v]
        given += [o for o, v in (("--topic", topic), ("--title", title), ("--body", body),
                                 ("--body-file", body_file)) if v]
        if given:
            raise click.UsageError(f"--from-file files the entry as it is; drop {', '.join(given)}")
        entry = core.from_file(context, from_file, agent)
    else:
        if body is not None and body_file is not None:
            raise click.UsageError("give the body once: --body or --body-file")
        if body is None:
            if body_file == "-" or (body_file is None and not sys.stdin.isatty()):
                body = core.decode_text(sys.stdin.buffer.read(), "stdin")
            elif body_file is not None:
                with open(body_file, "rb") as fh:
                    body = core.decode_text(fh.read(), "--body-file")
        entry = core.compose(context, agent=agent, topic=topic, title=title, body=body or "",
                             fields=fields)
        if key is None:
            core.refuse_key_clash(context, entry)
    found = core.related_facts(context, entry)
    written = core.file_entry(context, entry, outbox)
    if as_json:
        _emit_json({"path": written.path, "key": written.key, "outbox": written.outbox,
                    "related": [r.as_json() for r in found]})
    else:
        click.echo(written.path)
    for line in core.describe_related(found):
        click.echo(line, err=True)
    if written.note:
        click.echo(f"jmem: {written.note}", err=True)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
def demo(keep: bool) -> int:
    """Tell the whole story in a temporary repository, narrating each step."""
    from journal_mem.commands.demo import run_demo

    return run_demo(keep=keep, echo=click.echo)


# --- wake-up, reminder and status ---------------------------------------------


@cli.command(context_settings=CONTEXT)
@click.option("--agent", metavar="NAME", help="Whose memory [env JMEM_AGENT, else default_agent].")
@click.option("--hook", type=click.Choice(["claude"]),
              help="Claude Code SessionStart/SubagentStart: hook JSON in, context JSON out.")
@click.option("--max-chars", type=click.IntRange(min=200), default=10_000, show_default=True,
              help="Budget of the pack, in characters.")
@click.option("--query", metavar="TEXT",
              help="Add the live facts this agent holds that best answer TEXT.")
@click.option("--min-confidence", type=click.FloatRange(0.0, 1.0), default=0.7,
              show_default=True, help="Query facts below this confidence are left out.")
@click.option("--json", "as_json", is_flag=True, help="Print the pack and its parts as JSON.")
@click.option("--plugin", is_flag=True, hidden=True,
              help="Run from the Claude Code plugin: step aside for project hooks.")
def wake(agent: str | None, hook: str | None, max_chars: int, query: str | None,
         min_confidence: float, as_json: bool, plugin: bool) -> int:
    """Print an agent's wake-up pack: the main checkout's MEMORY.md, lessons written
    since the last distill (newest first), and the keys corrected since then.

    Cut to --max-chars, whole lines, lowest-ranked first; a last line says what
    was cut. With --hook claude (what `jmem init` puts in .claude/settings.json
    for SessionStart, SubagentStart, UserPromptSubmit and PostToolUse) it gives
    each session only what it lacks, in UTF-16 units below Claude Code's cap,
    and never fails: a problem is one line on stderr, exit 0.
    """
    if hook:
        from journal_mem.commands.claude_hooks import wake_hook

        return wake_hook(sys.stdin.buffer.read(), agent, min(max_chars, 9_500),
                         plugin=plugin)
    from journal_mem.commands.wake import for_command

    click_ctx = click.get_current_context()
    pack = for_command(_cwd(click_ctx), agent, max_chars=max_chars, query=query,
                       min_confidence=min_confidence)
    if as_json:
        _emit_json(pack.as_json())
    else:
        click.echo(pack.text, nl=False)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@click.option("--agent", metavar="NAME", help="Whose lesson [the subagent's name, else "
              "JMEM_AGENT, else default_agent].")
@click.option("--hook", type=click.Choice(["claude"]), required=True,
              help="Claude Code Stop/SubagentStop: hook JSON in, context JSON out.")
@click.option("--plugin", is_flag=True, hidden=True,
              help="Run from the Claude Code plugin: step aside for project hooks.")
def remind(agent: str | None, hook: str, plugin: bool) -> int:
    """Stop/SubagentStop hook: once per session, when the session edited or committed
    files (or ran 20 minutes) and wrote no lesson since it started, remind it (as
    context) to record one. Never fails: exit 0."""
    from journal_mem.commands.claude_hooks import remind_hook

    del hook
    return remind_hook(sys.stdin.buffer.read(), agent, plugin=plugin)


@cli.command("claude-plugin", context_settings=CONTEXT)
def claude_plugin() -> int:
    """Print where journal-mem's Claude Code plugin is, and how to install it.

    The plugin runs the same hooks as `jmem init` writes, for every project on
    the machine, without needing `jmem` on Claude Code's PATH or the hooks in
    the branch's .claude/settings.json (a worktree of an older commit).
    """
    from journal_mem.commands.plugin import folder, install_lines

    click.echo(folder())
    for line in install_lines(folder()):
        click.echo(line, err=True)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@click.option("--sessions", "session_count", type=int, default=None, is_flag=False,
              flag_value=20, metavar="[N]", help="Show the last N (20) recorded wake-ups.")
@click.option("--hooks", "hook_log", is_flag=True,
              help="Summarise the agent-loop hook log (jmem hook / journal_mem.api).")
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def status(click_ctx: click.Context, session_count: int | None, hook_log: bool,
           as_json: bool) -> int:
    """Pending lessons, outbox, last distill, lock, budgets, and which hooks are
    installed: the first thing to run when memory doesn't work."""
    from journal_mem.commands import status as core

    if hook_log:
        from journal_mem.store.hooklog import render

        table = core.hook_summary(_cwd(click_ctx))
        _emit(table, render(table), as_json)
    elif session_count is not None:
        records = core.session_log(_cwd(click_ctx), session_count)
        _emit(records, core.render_sessions(records), as_json)
    else:
        report = core.collect(_cwd(click_ctx))
        _emit(report, core.render(report), as_json)
    return errors.OK


# --- end of wake-up, reminder and status --------------------------------------

# --- guard and rescue -----------------------------------------------------------


@cli.command("merge-driver", context_settings=CONTEXT, hidden=True)
@click.argument("ancestor")
@click.argument("current")
@click.argument("other")
@click.argument("path")
def merge_driver(ancestor: str, current: str, other: str, path: str) -> int:
    """Git's merge driver for distilled files (`jmem init` registers it): keep the
    checked-out side and distill again after the merge."""
    from journal_mem.gitops.mergedriver import merge

    return merge(current, path, os.getcwd())


@cli.command(context_settings=CONTEXT)
@click.option("--hook", type=click.Choice(["pre-commit", "pre-merge-commit"]), default=None,
              help="The git hook calling (it only changes the wording).")
def guard(hook: str | None) -> int:
    """Check what is staged under the memory root (the git hooks run this).

    From a linked worktree every memory change is refused (use `jmem rescue`).
    In the main checkout: committed journal entries are append-only, distilled
    files change only in the distiller's commit, and every new lesson must be
    valid, with no secret, conflict marker or symlink. Each refusal names the
    path, the rule and the command that does it right; exit 1 blocks the
    commit. JMEM_DISABLE=1 or hooks.guard = false turn it off.
    """
    from journal_mem.commands.guard import decide

    click_ctx = click.get_current_context()
    verdict = decide(_cwd(click_ctx), hook)
    for line in verdict.lines:
        click.echo(line, err=True)
    return verdict.code


@cli.command(context_settings=CONTEXT)
@click.pass_context
def rescue(click_ctx: click.Context) -> int:
    """In a linked worktree: move memory changes into the main checkout's journal.

    New lessons are validated and filed in the main journal; each line added
    to MEMORY.md, a topic file or another memory file becomes a new lesson
    (topic inbox). The worktree's copies go back to HEAD, unstaged. A file
    stays where it is when filing it fails.
    """
    from journal_mem.commands.rescue import rescue as do_rescue

    report = do_rescue(_cwd(click_ctx))
    for line in report.lines:
        click.echo(line)
    for line in report.failed:
        click.echo(f"jmem rescue: {line}", err=True)
    return errors.REFUSED if report.failed else errors.OK

# --- distill and check ------------------------------------------------------------


@cli.command(context_settings=CONTEXT)
@click.option("--if-due", is_flag=True,
              help="Only when pending lessons reach distill.threshold or the oldest is older "
                   "than distill.max_age_hours; else exit 0 quietly (the post-commit hook).")
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@click.option("--check", "check_only", is_flag=True,
              help="Exit 1 if a distill would change any file; write nothing.")
@click.option("--rebuild", is_flag=True, help="Ignore the parse cache (same bytes).")
@click.option("--no-commit", is_flag=True, help="Write the files but do not commit them.")
@click.option("--background", is_flag=True,
              help="Detach, log to <git-common-dir>/journal-mem/logs/distill.log, return at once.")
@click.option("--date", "on_date", metavar="YYYY-MM-DD",
              help="Distill as of this date instead of today (UTC): replays and tests.")
@click.option("--push", "push_remote", is_flag=False, flag_value="", default=None,
              metavar="[REMOTE]", help="Distill on top of REMOTE's distill.branch and push; "
              "retry on the new tip when another writer wins (never forced).")
@click.option("--attempts", type=click.IntRange(1, 50), default=8, show_default=True,
              help="With --push: how many times to try before giving up.")
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def distill(click_ctx: click.Context, if_due: bool, dry_run: bool, check_only: bool, rebuild: bool,
            no_commit: bool, background: bool, on_date: str | None, push_remote: str | None,
            attempts: int, as_json: bool) -> int:
    """Fold the journal into every agent's topic files and MEMORY.md, and commit them.

    One writer for all worktrees (a second distill exits 75). Corrections reach
    every agent that held the fact; retracted, superseded, expired and stale
    facts are removed; MEMORY.md never exceeds its budget. The commit holds only
    memory paths and lists what changed and why. Invalid entries are reported
    and skipped (exit 1).
    """
    import datetime as dt

    from journal_mem.commands import distill as core
    from journal_mem.store.context import open_context

    if background:  # normally answered by main.py before click loads
        from journal_mem.commands.background import detach

        return detach(list(click_ctx.find_root().obj), _cwd(click_ctx))  # the argv given
    date = None
    if on_date:
        try:
            date = dt.date.fromisoformat(on_date)
        except ValueError:
            raise click.UsageError(f"--date: {on_date!r} is not YYYY-MM-DD") from None
    opts = core.Options(dry_run=dry_run, check=check_only, rebuild=rebuild,
                        commit=not no_commit, if_due=if_due, date=date)
    from journal_mem.store import progress

    # a bar on a terminal for long work; never in --json or for the post-commit hook
    progress.allow(not (as_json or if_due))
    if push_remote is not None:  # docs/DESIGN.md, "Many machines"
        return _distill_push(click_ctx, opts, push_remote or None, attempts, as_json)
    # --no-commit is the setting distill.commit = false for this run (flags > env > file)
    flags = {"distill.commit": False} if no_commit else None
    outcome = core.distill(open_context(_cwd(click_ctx), flags), opts)
    from journal_mem.commands.report import distill_json, distill_lines

    if as_json:
        _emit_json(distill_json(outcome))
    else:
        out, err = distill_lines(outcome)
        for line in out:
            click.echo(line)
        for line in err:
            click.echo(f"jmem: {line}", err=True)
    return outcome.exit_code


@cli.command(context_settings=CONTEXT)
@click.option("--base", metavar="REF",
              help="Also fail when a journal entry was modified or deleted since REF.")
@click.option("--allow-root-move", is_flag=True,
              help="Accept a memory_root changed since REF (a deliberate move).")
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def check(click_ctx: click.Context, base: str | None, allow_root_move: bool,
          as_json: bool) -> int:
    """CI: every entry valid, distilled files equal a rebuild, budgets held, journal
    append-only since REF, no conflict markers, symlinks or secrets in memory."""
    from journal_mem.commands.check import run_check
    from journal_mem.store.context import open_context

    problems = run_check(open_context(_cwd(click_ctx)), base, allow_root_move=allow_root_move)
    if as_json:
        _emit_json({"ok": not problems, "problems": problems})
    elif problems:
        for line in problems:
            click.echo(line)
        click.echo(f"jmem check: {len(problems)} problems", err=True)
    else:
        click.echo("jmem check: ok")
    return errors.REFUSED if problems else errors.OK


# --- end distill and check ---

# --- watch, outbox, distill --push ---------------------------------------------------


def _distill_push(click_ctx: click.Context, opts: Any, remote: str | None, attempts: int,
                  as_json: bool) -> int:
    """`distill --push [REMOTE]`: see journal_mem/push.py."""
    from journal_mem.commands.push import push_distill
    from journal_mem.commands.report import distill_json, distill_lines
    from journal_mem.store.context import open_context

    if opts.dry_run or opts.check or not opts.commit or opts.if_due:
        raise click.UsageError("--push distills and commits: drop --dry-run, --check, "
                               "--no-commit and --if-due")
    done = push_distill(open_context(_cwd(click_ctx)), opts, remote, attempts)
    where = f"{done.remote}/{done.branch}"
    if as_json:
        data = distill_json(done.outcome) if done.outcome else {}
        data["push"] = {"remote": done.remote, "branch": done.branch, "pushed": done.pushed,
                        "attempts": done.attempts, "rejected": done.rejected,
                        "steps": done.steps}
        _emit_json(data)
        return done.exit_code
    if done.outcome:
        out, err = distill_lines(done.outcome)
        for line in out:
            click.echo(line)
        for line in err:
            click.echo(f"jmem: {line}", err=True)
    lost = f" after {done.rejected} rejected push{'es' if done.rejected != 1 else ''}" \
        if done.rejected else ""
    if done.pushed:
        click.echo(f"pushed {done.pushed[:12]} to {where}{lost}")
    else:
        click.echo(f"{where} already holds everything: nothing to push{lost}")
    return done.exit_code


@cli.command(context_settings=CONTEXT)
@click.option("--once", is_flag=True, help="Exit after the first distill (scripts, tests).")
@click.option("--debounce", type=click.FloatRange(0.0, 600.0), default=1.0, show_default=True,
              metavar="SECONDS", help="Wait until writes pause this long, then evaluate once.")
@click.option("--interval", type=click.FloatRange(1.0), default=60.0, show_default=True,
              metavar="SECONDS", help="Re-evaluate this often without events (max age).")
@click.pass_context
def watch(click_ctx: click.Context, once: bool, debounce: float, interval: float) -> int:
    """Watch the main checkout's journals and the outbox; distill when due.

    Due means what `distill --if-due` means: pending lessons reach
    distill.threshold, or the oldest is older than distill.max_age_hours. A
    burst of writes makes one evaluation; writes during a distill make exactly
    one more. A failing distill is logged and watching goes on. Ctrl-C or
    SIGTERM stop it cleanly (a distill in progress finishes first).
    """
    from journal_mem.commands.watch import WatchOptions
    from journal_mem.commands.watch import watch as core

    opts = WatchOptions(once=once, debounce=debounce, max_wait=max(10.0, debounce * 10),
                        interval=interval)
    return core(_cwd(click_ctx), opts, lambda line: click.echo(line))


@cli.group(context_settings=CONTEXT)
def outbox() -> None:
    """The outbox: lessons from sessions that cannot write into the main checkout,
    waiting in <git-common-dir>/journal-mem/outbox/ for the next distill."""


@outbox.command("list", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def outbox_list(click_ctx: click.Context, as_json: bool) -> int:
    """Every waiting entry, and whether the next drain will file it."""
    from journal_mem.store.context import open_context
    from journal_mem.store.outbox import waiting

    context = open_context(_cwd(click_ctx))
    items = waiting(context.layout, context.policy)
    if as_json:
        _emit_json([w.as_json() for w in items])
        return errors.OK
    for w in items:
        click.echo(f"{w.agent}: {w.title or '(invalid)'}\n  {w.path}")
        for problem in w.problems:
            click.echo(f"  invalid: {problem}")
    click.echo(f"outbox: {len(items)} waiting"
               + (f", {sum(1 for w in items if w.problems)} invalid" if items else ""))
    return errors.OK


@outbox.command("drain", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
@click.pass_context
def outbox_drain(click_ctx: click.Context, as_json: bool) -> int:
    """Move every valid entry into the main journal now (every distill does this too).

    Nothing leaves the outbox before its copy is in the journal; an invalid
    entry stays there and is reported (exit 1).
    """
    from journal_mem.store.context import open_context
    from journal_mem.store.outbox import drain_now

    context = open_context(_cwd(click_ctx))
    done = drain_now(context.layout, context.policy)
    if as_json:
        _emit_json({"moved": done.moved, "invalid": done.invalid})
    else:
        for path in done.moved:
            click.echo(f"moved into the journal: {path}")
        for problem in done.invalid:
            click.echo(f"jmem: left in the outbox: {problem}", err=True)
        click.echo(f"outbox: {len(done.moved)} moved, {len(done.invalid)} left (invalid)")
    return errors.REFUSED if done.invalid else errors.OK


# --- end watch, outbox, distill --push ---


# --- recall -----------------------------------------------------------------------


@cli.command(context_settings=CONTEXT)
@click.argument("question", nargs=-1)
@click.option("--agent", metavar="NAME", help="Only facts this agent holds.")
@click.option("--type", "type_", type=click.Choice(TYPES), help="Only facts of this type.")
@click.option("--tag", metavar="TAG", help="Only facts carrying this tag.")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), metavar="YYYY-MM-DD",
              help="Only facts written on or after this date.")
@click.option("--limit", type=click.IntRange(min=1, max=10_000), default=5, show_default=True,
              help="How many facts.")
@click.option("--rebuild", is_flag=True, help="Rebuild the index from the journal first.")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
@click.pass_context
def recall(click_ctx: click.Context, question: tuple[str, ...], agent: str | None,
           type_: str | None, tag: str | None, since: Any, limit: int,
           rebuild: bool, as_json: bool) -> int:
    """Ranked live facts for a natural-language QUESTION.

    Each fact comes with its key, the agents holding it, its topic, date and
    journal entry. Retracted, superseded and expired facts are never returned.
    The index lives in the common git dir and follows the journal by itself.
    With --type/--tag/--since and no QUESTION, lists the matching facts,
    newest first.

    \b
    Examples:
      jmem recall how do I run the API tests --agent api
      jmem recall --type episodic --tag fail-diag --since 2026-11-01
    """
    from journal_mem.commands import recall as core
    from journal_mem.store import progress
    from journal_mem.store.context import open_context

    progress.allow(not as_json)  # a bar on a terminal for a long rebuild; never in --json
    day = since.date().isoformat() if since else None
    filters = core.Filters(agent, type_, tag, day)
    if not question and not (type_ or tag or day):
        raise click.UsageError("give a QUESTION, or --type, --tag or --since")
    hits = core.recall(open_context(_cwd(click_ctx)), " ".join(question), agent=agent,
                       limit=limit, rebuild=rebuild, filters=filters)
    _emit([hit.as_json() for hit in hits], core.render(hits), as_json)
    return errors.OK


@cli.command("log", context_settings=CONTEXT)
@click.argument("key", required=False)
@click.option("--path", "path", metavar="FILE", help="A distilled file: the fact at --line.")
@click.option("--line", type=click.IntRange(min=1), help="The line of --path (1-based).")
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
@click.pass_context
def log_(click_ctx: click.Context, key: str | None, path: str | None, line: int | None,
         as_json: bool) -> int:
    """The life of one fact across the team, oldest first.

    Every journal entry that wrote, corrected, superseded or retracted KEY
    (date, agent, title, source and refs, the commit that brought it in),
    every distill commit that changed it in some agent's MEMORY.md, and what
    each holder loaded from when to when. With --path FILE --line N, the fact
    on that line of a distilled file.

    \b
    Examples:
      jmem log filter-by-value-and-missing-fields
      jmem log --path .claude/agent-memory/web/MEMORY.md --line 12
    """
    from journal_mem.commands import factlog
    from journal_mem.store.context import open_context

    if (key is None) == (path is None) or (path is None) != (line is None):
        raise click.UsageError("give a KEY, or --path FILE with --line N")
    context = open_context(_cwd(click_ctx))
    if path is not None and line is not None:
        key = factlog.key_at(context, path, line)
    assert key is not None
    history = factlog.fact_log(context, key)
    _emit(history, factlog.render(history), as_json)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the lines as JSON.")
@click.pass_context
def blame(click_ctx: click.Context, file: str, as_json: bool) -> int:
    """Each fact line of a distilled FILE with the entry that last stated it:
    date, agent, the commit that brought the entry in, and its source."""
    from journal_mem.commands import factlog
    from journal_mem.store.context import open_context

    rows = factlog.blame(open_context(_cwd(click_ctx)), file)
    _emit(rows, factlog.render_blame(rows), as_json)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), metavar="YYYY-MM-DD",
              help="Count only the entries written on or after this date.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@click.pass_context
def stats(click_ctx: click.Context, since: Any, as_json: bool) -> int:
    """The team's memory in numbers: entries written (per agent, per month),
    distilled topic files, lines of maintained memory, agents with memory, the
    cap and each agent's use of it, evictions, facts dropped by each rule,
    pending lessons, and entries per maintained line."""
    from journal_mem.commands import stats as core
    from journal_mem.store.context import open_context

    table = core.collect(open_context(_cwd(click_ctx)), since.date() if since else None)
    _emit(table, core.render_lines(table), as_json)
    return errors.OK


@cli.command(context_settings=CONTEXT)
@click.option("--out", "out_dir", metavar="DIR", type=click.Path(file_okay=False),
              help="Folder for index.html [<git-common-dir>/journal-mem/report].")
@click.option("--open", "open_", is_flag=True, help="Open the page in a browser.")
@click.pass_context
def report(click_ctx: click.Context, out_dir: str | None, open_: bool) -> int:
    """One static HTML page of the team's memory (no server, no network).

    Timelines of every fact held by several agents or corrected (one lane per
    holder, coloured by the version it loaded), budgets, pending lessons and
    their age, evictions, stale-ref drops, open conflicts and the stats table.
    """
    from journal_mem.commands.teamreport import write_report
    from journal_mem.store.context import open_context

    context = open_context(_cwd(click_ctx))
    path = write_report(context, out_dir or os.path.join(context.layout.state_dir, "report"))
    click.echo(path)
    if open_:
        import webbrowser

        webbrowser.open(f"file://{path}")
    return errors.OK


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
    from journal_mem.api import cli_main

    return cli_main([name])


# --- import and export (existing memory in, snapshots out) ------------------------


def _import_done(report: Any, as_json: bool) -> int:
    _emit(report.as_dict(), report.lines(), as_json)
    return int(report.exit_code)


_NO_COMMIT = click.option("--no-commit", is_flag=True,
                          help="Write the entries but do not commit them.")
_AS_JSON = click.option("--json", "as_json", is_flag=True, help="Report as JSON.")
_AGENT = click.option("--agent", metavar="NAME",
                      help="Writer of the lessons [env JMEM_AGENT, else default_agent].")
_APPLIES = click.option("--applies-to", "applies_to", multiple=True, metavar="AGENT",
                        help="Agents that must hold the lessons, or 'all' (repeatable).")


@cli.group("import", context_settings=CONTEXT)
def import_group() -> None:
    """Existing memory into the journal: ordinary lessons with provenance.

    Each source writes its new entries in one commit with `source:` naming the
    file and its commit (and the original date where known); a second run
    imports nothing. Records that cannot become lessons are listed (exit 1).
    """


@import_group.command("memory", context_settings=CONTEXT)
@click.argument("agents", nargs=-1, metavar="[AGENT]...")
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_memory(click_ctx: click.Context, agents: tuple[str, ...], no_commit: bool,
                  as_json: bool) -> int:
    """Hand-written MEMORY.md and topic files (all agents, or those named).

    One lesson per list item or paragraph (bullets, numbered items, headed
    sections); its topic is the topic file's name or its MEMORY.md section.
    Files the distiller wrote are left alone.
    """
    from journal_mem.commands import importing
    from journal_mem.store.context import open_context

    report = importing.import_memory(open_context(_cwd(click_ctx)), list(agents), not no_commit)
    return _import_done(report, as_json)


@import_group.command("claude-md", context_settings=CONTEXT)
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@_AGENT
@_APPLIES
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_claude_md(click_ctx: click.Context, path: str, agent: str | None,
                     applies_to: tuple[str, ...], no_commit: bool, as_json: bool) -> int:
    """A CLAUDE.md or AGENTS.md: rules become principles, other sections semantic
    lessons, held by the agents named with --applies-to (default: all)."""
    from journal_mem.commands import importing
    from journal_mem.commands.write import resolve_agent
    from journal_mem.store.context import open_context

    context = open_context(_cwd(click_ctx))
    report = importing.import_claude_md(context, path, resolve_agent(context, agent),
                                        list(applies_to), not no_commit)
    return _import_done(report, as_json)


@import_group.command("retro", context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(dir_okay=False, exists=True))
@_AGENT
@_APPLIES
@click.option("--topic", default="retrospectives", show_default=True, metavar="NAME",
              help="Topic of the lessons.")
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_retro(click_ctx: click.Context, paths: tuple[str, ...], agent: str | None,
                 applies_to: tuple[str, ...], topic: str, no_commit: bool,
                 as_json: bool) -> int:
    """Retrospectives: one reflective lesson per finding or lesson (a sub-section of a
    lessons/findings section, else each of its items), dated from the file name."""
    from journal_mem.commands import importing
    from journal_mem.commands.write import resolve_agent
    from journal_mem.store.context import open_context

    context = open_context(_cwd(click_ctx))
    report = importing.import_retro(context, list(paths), resolve_agent(context, agent),
                                    list(applies_to), topic, not no_commit)
    return _import_done(report, as_json)


@import_group.command("mem0", context_settings=CONTEXT)
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@_AGENT
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_mem0(click_ctx: click.Context, path: str, agent: str | None, no_commit: bool,
                as_json: bool) -> int:
    """A mem0 JSON export: each memory a lesson with its metadata's type, confidence,
    tags and expires_at (as valid_until); written by its agent_id when that is a
    valid agent name, else by --agent."""
    from journal_mem.commands import importing
    from journal_mem.commands.write import resolve_agent
    from journal_mem.store.context import open_context

    context = open_context(_cwd(click_ctx))
    report = importing.import_mem0(context, path, resolve_agent(context, agent), not no_commit)
    return _import_done(report, as_json)


@import_group.command("snapshot", context_settings=CONTEXT)
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@_NO_COMMIT
@_AS_JSON
@click.pass_context
def import_snapshot(click_ctx: click.Context, path: str, no_commit: bool, as_json: bool) -> int:
    """A snapshot written by `jmem export`: every live fact, same key and fields."""
    from journal_mem.commands import importing
    from journal_mem.store.context import open_context

    report = importing.import_snapshot(open_context(_cwd(click_ctx)), path, not no_commit)
    return _import_done(report, as_json)


@cli.command(context_settings=CONTEXT)
@click.option("--json", "out", metavar="PATH", type=click.Path(dir_okay=False),
              help="Write the snapshot to PATH (else print it).")
@click.pass_context
def export(click_ctx: click.Context, out: str | None) -> int:
    """One JSON snapshot: every live fact (key, title, body, type, confidence,
    importance, holders, topic, dates, valid_until, refs, source, entry path),
    the journal's entry list and the distill state."""
    from journal_mem.commands import export as core
    from journal_mem.model.snapshot import dumps
    from journal_mem.store.context import open_context

    doc = core.snapshot(open_context(_cwd(click_ctx)))
    if out is None:
        click.echo(dumps(doc), nl=False)
    else:
        core.write_snapshot(doc, out)
        click.echo(core.summary(doc, out))
    return errors.OK


def run(argv: list[str]) -> int:
    """Run the CLI on `argv`; return the exit code. click's own exceptions become exit
    codes here; every other one goes to the error boundary in `main.main`."""
    try:
        result = cli.main(args=argv, prog_name="jmem", standalone_mode=False, obj=list(argv))
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("jmem: aborted", err=True)
        return errors.REFUSED
    except click.ClickException as exc:
        exc.show()
        return errors.USAGE if isinstance(exc, click.UsageError) else exc.exit_code
    return int(result) if isinstance(result, int) else errors.OK
