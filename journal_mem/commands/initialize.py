"""`jmem init`: config, memory root, agent folders and git hooks, idempotently."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from journal_mem.config.schema import load, render_file
from journal_mem.config.settings import CONFIG_FILE
from journal_mem.errors import ConfigError
from journal_mem.gitops import gitfacts
from journal_mem.names import is_name
from journal_mem.store.gitignored import refuse_ignored
from journal_mem.store.layout import KEEP, Layout

if TYPE_CHECKING:
    from journal_mem.commands.cisource import Source


@dataclass
class InitReport:
    """What `init` did; an empty `done` means the repository was already set up."""

    done: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # git hooks: lines explaining why init refused to install (exit 1)
    refused: list[str] = field(default_factory=list)


def _create(path: str, text: str, report: InitReport, root: str) -> None:
    """Create `path` with `text` unless it exists (never overwrites)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    report.done.append(f"created {os.path.relpath(path, root)}")


def init(cwd: str, agents: list[str], *, git_hooks: bool = True, hooks_path_ok: bool = False,
         claude: bool = True, claude_agents: list[str] | None = None,
         ci: str | None = None, ci_install: str | None = None,
         import_existing: bool = True) -> InitReport:
    """Set up journal-mem in the main checkout of the repository at `cwd`.

    Config, memory root and agent folders; memory files that jmem did not
    write are imported as lessons (`import_existing`, else the command that
    does it is named); then the git hooks (`git_hooks`),
    the Claude Code hooks (`claude`) and agent definitions (`claude_agents`);
    with `ci` ("github"), the CI workflow that distills and pushes.
    """
    bad = [a for a in agents if not is_name(a)]
    if bad:
        raise ConfigError(
            "\n".join(f"--agent: {a!r} is not a valid name (^[a-z0-9][a-z0-9-]{{0,63}}$)"
                      for a in bad))
    repo = gitfacts.locate(cwd)
    root = repo.main_root
    report = InitReport()
    if not repo.is_main:
        report.notes.append(f"running in a linked worktree: set up the main checkout {root}")
    branch = gitfacts.current_branch(root)
    source = ci_source(root, ci, ci_install)  # before anything is written: it may refuse
    layout = Layout(repo, load(root).memory_root)
    refuse_ignored(layout, sorted(set(agents) | set(layout.agents_on_disk())), "init",
                   extra=[CONFIG_FILE])
    _create(os.path.join(root, CONFIG_FILE), render_file(branch, agents), report, root)
    config = load(root)
    layout = Layout(repo, config.memory_root)
    os.makedirs(layout.main_memory, exist_ok=True)
    if not agents and not layout.agents_on_disk():
        _create(os.path.join(layout.main_memory, KEEP), "", report, root)
    for agent in agents:
        _create(os.path.join(layout.journal_dir(agent), KEEP), "", report, root)
    _line_endings(root, config.memory_root, report)
    if config.distill.branch == "" and branch:
        report.notes.append(f"distill.branch is unset in {CONFIG_FILE}; the distiller will "
                            f"write on whatever branch is checked out (now {branch!r})")
    existing_memory(cwd, layout, report, import_existing)
    if git_hooks:
        _install_hooks(root, report, hooks_path_ok)
    if claude or claude_agents:
        init_claude(repo, report, hooks=claude, agents=claude_agents or [])
    if ci:
        init_ci(root, ci, source, config.distill.branch or branch, config.memory_root, report)
    return report


def _line_endings(root: str, memory_root: str, report: InitReport) -> None:
    """Keep memory files LF in every clone (`core.autocrlf`, `eol=crlf` rules)."""
    from journal_mem.store.gitattributes import FILE, eol_rule, merge_lines

    if any(c.isspace() for c in memory_root):
        report.notes.append(f"memory_root {memory_root!r} holds a space: add a .gitattributes "
                            "rule keeping its files LF (text eol=lf) by hand")
        return
    for line in merge_lines(root, [eol_rule(memory_root)]):
        report.done.append(f"added `{line}` to {FILE} (memory files stay LF in every "
                           "checkout; commit it)")


def existing_memory(cwd: str, layout: Layout, report: InitReport, do_import: bool) -> None:
    """Say what memory is already there (hand-written MEMORY.md and topic files) and
    import it (before the git hooks exist, so no background distill starts mid-init)."""
    from journal_mem.store.memfiles import drafts_of, foreign

    found = foreign(layout)
    if not found:
        return
    facts = len(drafts_of(layout, found))
    agents = sorted({f.agent for f in found})
    seen = (f"found existing memory not written by jmem: {len(found)} files, {facts} facts "
            f"({', '.join(agents)})")
    if not do_import:
        report.notes.append(f"{seen}; import it with `jmem import memory` before the first "
                            "distill (a distill imports it too, never overwriting it unread)")
        return
    from journal_mem.commands.importing import import_memory
    from journal_mem.store.context import open_context

    done = import_memory(open_context(cwd), [])
    where = f" (commit {done.commit[:12]})" if done.commit else ""
    report.done.append(f"{seen}: imported {len(done.written)} new lessons{where}, "
                       f"{done.skipped} already in the journal")
    report.notes += [f"not imported: {line}" for line in done.invalid]
    if done.note:
        report.notes.append(done.note)


# --- CI workflow: the fleet's single distiller -------------------------------------


def ci_source(root: str, provider: str | None, install: str | None) -> Source | None:
    """How the CI job installs jmem (`cisource.py`); None when no workflow will be written."""
    from journal_mem.commands import ciflow, cisource

    if not provider:
        return None
    if provider not in ciflow.PROVIDERS:
        raise ConfigError(f"--ci: {provider!r} is not supported (one of: "
                          f"{', '.join(ciflow.PROVIDERS)})")
    if os.path.lexists(os.path.join(root, ciflow.WORKFLOW)):
        return None  # kept as it is: nothing to choose
    return cisource.choose(install)


def init_ci(root: str, provider: str, source: Source | None, branch: str, memory_root: str,
            report: InitReport) -> None:
    """Write the CI workflow (`ciflow.py`) unless one exists."""
    from journal_mem.commands import ciflow

    if source is None:
        report.notes.append(f"kept the existing {ciflow.WORKFLOW} (not rewritten)")
        return
    if not branch:
        raise ConfigError("--ci: no branch to distill on (detached HEAD, distill.branch unset)",
                          hint="set distill.branch in .claude/journal-mem.toml")
    path, created = ciflow.write_workflow(root, branch, memory_root, source.command)
    if created:
        report.done.append(f"created {path} (check and distill --push on {branch}; "
                           "commit and push it)")
        report.done.append(f"CI installs jmem with: {source.command} ({source.why})")
    else:
        report.notes.append(f"kept the existing {path} (not rewritten)")


# --- Claude Code: settings.json hooks and agent files (wake/remind) ---------


def init_claude(repo: gitfacts.Repo, report: InitReport, *, hooks: bool,
                agents: list[str]) -> None:
    """Merge the wake/remind hooks into `.claude/settings.json` (when `hooks`) and
    write `.claude/agents/NAME.md` for each of `agents`, in the main checkout."""
    import shutil

    from journal_mem.claude import settings as claude_settings

    root = repo.main_root
    config = load(root)
    layout = Layout(repo, config.memory_root)
    if hooks:
        with_memory = sorted({*layout.agents_on_disk(), *config.agents, *agents})
        report.done += claude_settings.merge_settings(root, with_memory)
        if shutil.which("jmem") is None:
            report.notes.append("the Claude Code hooks run `jmem` from PATH, and there is none: "
                                + claude_settings.PATH_HINT
                                + ", or install the Claude Code plugin (jmem claude-plugin)")
    for name in agents:
        path = claude_settings.write_agent(root, name)
        if path is None:
            report.notes.append(
                f"kept the existing {claude_settings.AGENTS}/{name}.md (not rewritten)")
        else:
            report.done.append(f"created {os.path.relpath(path, root)}")
        _create(os.path.join(layout.journal_dir(name), KEEP), "", report, root)


# --- git hooks -----------------------------------------------------------------


def _install_hooks(root: str, report: InitReport, hooks_path_ok: bool) -> None:
    from journal_mem.gitops import hooks

    done = hooks.install(root, hooks_path_ok)
    report.done += done.done
    report.notes += done.notes
    report.refused += done.refused


def uninstall(cwd: str) -> InitReport:
    """`init --uninstall`: remove journal-mem's git hooks and put `.legacy` hooks back.

    Memory, config and journal stay: they are the team's data.
    """
    from journal_mem.gitops import hooks

    repo = gitfacts.locate(cwd)
    done = hooks.uninstall(repo.main_root)
    return InitReport(done=done.done, notes=done.notes)
