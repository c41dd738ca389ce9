"""`jmem init`: config, memory root, agent folders and git hooks, idempotently."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from journal_mem.errors import ConfigError
from journal_mem.fsutil import create_new
from journal_mem.gitops import gitcore, mergedriver
from journal_mem.gitops.mergedriver import patterns
from journal_mem.importers import native
from journal_mem.importers.found import native_files
from journal_mem.importers.memfiles import drafts_of, foreign
from journal_mem.importers.run import import_memory, refuse_symlinks
from journal_mem.journal.ignored import refuse_ignored
from journal_mem.layout import KEEP, Layout
from journal_mem.names import is_name, not_a_name
from journal_mem.repo import open_context
from journal_mem.schema import render_file
from journal_mem.settings import CONFIG_FILE
from journal_mem.setup import ci as ciflow
from journal_mem.setup import ci as cisource
from journal_mem.setup import claude_files as claude_settings
from journal_mem.setup import clients as client_setup
from journal_mem.setup import discover, githooks
from journal_mem.setup.gitattributes import FILE, eol_rule, merge_lines
from journal_mem.wake.claude_files import AGENTS

if TYPE_CHECKING:
    from journal_mem.setup.ci import Source


@dataclass
class InitReport:
    """What `init` did; an empty `done` means the repository was already set up."""

    done: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # git hooks: lines explaining why init refused to install (exit 1)
    refused: list[str] = field(default_factory=list)


def _create(path: str, text: str, report: InitReport, root: str) -> None:
    """Create `path` with `text` unless it exists (never overwrites)."""
    if create_new(path, text):
        report.done.append(f"created {os.path.relpath(path, root)}")


def init(cwd: str, agents: list[str], *, git_hooks: bool = True, hooks_path_ok: bool = False,
         claude: bool = True, claude_agents: list[str] | None = None,
         ci: str | None = None, ci_install: str | None = None,
         import_existing: bool = True, ci_curator: bool = False, agents_md: bool = True,
         clients: tuple[str, ...] = ()) -> InitReport:
    """Set up journal-mem in the main checkout of the repository at `cwd`.

    Config, memory root and agent folders; memory files that jmem did not
    write are imported as lessons (`import_existing`, else the command that
    does it is named); then the git hooks (`git_hooks`),
    the Claude Code hooks (`claude`) and agent definitions (`claude_agents`);
    the `AGENTS.md` block (`agents_md`) and the hooks of the other `clients`
    ("codex", "gemini", "qwen"); with `ci` ("github"), the CI workflow that distills and pushes
    (and with `ci_curator`, its weekly curator job that opens a pull request).
    """
    bad = [a for a in agents if not is_name(a)]
    if bad:
        raise ConfigError(
            "\n".join(f"--agent: {not_a_name(a)}" for a in bad))
    repo = gitcore.locate(cwd)
    root = repo.main_root
    report = InitReport()
    if not repo.is_main:
        report.notes.append(f"running in a linked worktree: set up the main checkout {root}")
    branch = gitcore.current_branch(root)
    source = ci_source(root, ci, ci_install)  # before anything is written: it may refuse
    layout = open_context(cwd).layout
    refuse_symlinks(layout, "init")
    refuse_ignored(layout, sorted(set(agents) | set(layout.agents_on_disk())), "init",
                   extra=[CONFIG_FILE])
    _create(os.path.join(root, CONFIG_FILE), render_file(branch, agents), report, root)
    ctx = open_context(cwd)  # the config just written
    config, layout = ctx.config, ctx.layout
    os.makedirs(layout.main_memory, exist_ok=True)
    if not agents and not layout.agents_on_disk():
        _create(os.path.join(layout.main_memory, KEEP), "", report, root)
    for agent in agents:
        _create(os.path.join(layout.journal_dir(agent), KEEP), "", report, root)
    _attributes(root, config.memory_root, report, merge_driver=git_hooks)
    if config.distill.branch == "" and branch:
        report.notes.append(f"distill.branch is unset in {CONFIG_FILE}; the distiller will "
                            f"write on whatever branch is checked out (now {branch!r})")
    existing_memory(cwd, layout, report, import_existing)
    report.notes += discover.lines(discover.found_in(open_context(cwd)))
    if git_hooks:
        _install_hooks(root, report, hooks_path_ok)
    if claude or claude_agents:
        init_claude(repo, report, hooks=claude, agents=claude_agents or [])
    init_other_clients(root, config.memory_root, config.default_agent, report,
                       agents_md=agents_md, clients=clients)
    if ci:
        init_ci(root, ci, source, config.distill.branch or branch, config.memory_root, report,
                curator=ci_curator)
    return report


def _attributes(root: str, memory_root: str, report: InitReport, merge_driver: bool) -> None:
    """One `.gitattributes` block for memory: its files stay LF in every clone
    (`core.autocrlf`, `eol=crlf` rules), and with `merge_driver` the distilled files
    merge with `jmem-distilled` (`gitops/mergedriver.py`), so a pull never conflicts."""

    if any(c.isspace() for c in memory_root):
        report.notes.append(f"memory_root {memory_root!r} holds a space: add .gitattributes "
                            "rules keeping its files LF (text eol=lf) and its distilled files "
                            "merge=jmem-distilled by hand")
        return
    wanted = [eol_rule(memory_root), *(patterns(memory_root) if merge_driver else [])]
    for line in merge_lines(root, wanted):
        why = ("distilled files never conflict on a pull" if "merge=" in line
               else "memory files stay LF in every checkout")
        report.done.append(f"added `{line}` to {FILE} ({why}; commit it)")


def existing_memory(cwd: str, layout: Layout, report: InitReport, do_import: bool) -> None:
    """Say what memory is already there (hand-written MEMORY.md and topic files) and
    import it (before the git hooks exist, so no background distill starts mid-init)."""

    found = foreign(layout)
    natives = native_files(layout)
    if not found and not natives:
        return
    ctx = open_context(cwd)
    judged = native.judge(layout, ctx.config.default_agent, ctx.policy, natives)
    facts = len(drafts_of(layout, found)) + len(judged.drafts)
    agents = sorted({f.agent for f in found} | {nf.agent or ctx.config.default_agent
                                                for nf in natives})
    seen = (f"found existing memory not written by jmem: {len(found) + len(natives)} files, "
            f"{facts} facts ({', '.join(agents)})")
    if natives:
        lines = [len(found) for nf, found in judged.adopted if nf.is_index]
        whole = len(judged.adopted) - len(lines)
        parts = [f"{whole} native memory file(s) adopted whole"] if whole else []
        parts += [f"a root index read line by line ({sum(lines)} facts)"] if lines else []
        parts += [f"{len(judged.refused)} refused"] if judged.refused else []
        seen += "; " + ", ".join(parts)
    if not do_import:
        report.notes.append(f"{seen}; import it with `jmem import memory` before the first "
                            "distill (a distill imports it too, never overwriting it unread)")
        return

    done = import_memory(ctx, [])
    where = f" (commit {done.commit[:12]})" if done.commit else ""
    report.done.append(f"{seen}: imported {len(done.written)} new lessons{where}, "
                       f"{done.skipped} already in the journal")
    report.done += [line for line in done.details if ": native memory adopted" in line]
    report.notes += [line for line in done.details if ": native memory refused" in line]
    report.notes += [f"not imported: {line}" for line in done.invalid]
    if done.note:
        report.notes.append(done.note)


# --- CI workflow: the fleet's single distiller -------------------------------------


def ci_source(root: str, provider: str | None, install: str | None) -> Source | None:
    """How the CI job installs jmem (`setup/ci.py`); None when no workflow will be written."""

    if not provider:
        return None
    if provider not in ciflow.PROVIDERS:
        raise ConfigError(f"--ci: {provider!r} is not supported (one of: "
                          f"{', '.join(ciflow.PROVIDERS)})")
    if os.path.lexists(os.path.join(root, ciflow.WORKFLOW)):
        return None  # kept as it is: nothing to choose
    return cisource.choose(install)


def init_ci(root: str, provider: str, source: Source | None, branch: str, memory_root: str,
            report: InitReport, curator: bool = False) -> None:
    """Write the CI workflow (`setup/ci.py`) unless one exists."""

    if source is None:
        report.notes.append(f"kept the existing {ciflow.WORKFLOW} (not rewritten)")
        return
    if not branch:
        raise ConfigError("--ci: no branch to distill on (detached HEAD, distill.branch unset)",
                          hint="set distill.branch in .claude/journal-mem.toml")
    path, created = ciflow.write_workflow(root, branch, memory_root, source.command, curator)
    if created:
        report.done.append(f"created {path} (check and distill --push on {branch}; "
                           "commit and push it)")
        report.done.append(f"CI installs jmem with: {source.command} ({source.why})")
        if curator:
            report.done.append("its curate job runs `jmem consolidate --propose` daily and "
                               "opens a pull request (set [consolidate] command and the "
                               "ANTHROPIC_API_KEY secret, or any secret your command needs)")
    else:
        report.notes.append(f"kept the existing {path} (not rewritten)")


# --- Claude Code: settings.json hooks and agent files (wake/remind) ---------


def init_claude(repo: gitcore.Repo, report: InitReport, *, hooks: bool,
                agents: list[str]) -> None:
    """Merge the wake/remind hooks into `.claude/settings.json` (when `hooks`) and
    write `.claude/agents/NAME.md` for each of `agents`, in the main checkout."""


    root = repo.main_root
    ctx = open_context(root)
    config, layout = ctx.config, ctx.layout
    if githooks:
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
                f"kept the existing {AGENTS}/{name}.md (not rewritten)")
        else:
            report.done.append(f"created {os.path.relpath(path, root)}")
        _create(os.path.join(layout.journal_dir(name), KEEP), "", report, root)


# --- every other client: AGENTS.md, Codex and Gemini CLI hooks, the MCP server ------


def init_other_clients(root: str, memory_root: str, default_agent: str, report: InitReport,
                       *, agents_md: bool, clients: tuple[str, ...]) -> None:
    """The `AGENTS.md` block and each client's hooks; when anything was new, how to
    register `jmem mcp`."""
    done: list[str] = []
    if agents_md:
        step, note = client_setup.write_agents_md(root, memory_root, default_agent)
        done += [step] if step else []
        report.notes += [note] if note else []
    for client in clients:
        steps, notes = client_setup.init_client(root, client)
        done += steps
        report.notes += notes
    report.done += done
    if done:
        report.notes += client_setup.mcp_notes()


# --- git hooks -----------------------------------------------------------------


def _install_hooks(root: str, report: InitReport, hooks_path_ok: bool) -> None:

    done = githooks.install(root, hooks_path_ok)
    report.done += done.done
    report.notes += done.notes
    report.refused += done.refused
    if not done.refused:
        _merge_driver(root, report)


def _merge_driver(root: str, report: InitReport) -> None:
    """Register the merge driver the `.gitattributes` lines name (`gitops/mergedriver.py`)."""

    step = mergedriver.register(root, githooks.python())
    if step:
        report.done.append(step)


def uninstall(cwd: str) -> InitReport:
    """`init --uninstall`: remove journal-mem's git hooks and put `.legacy` hooks back.

    Memory, config and journal stay: they are the team's data.
    """

    repo = gitcore.locate(cwd)
    done = githooks.uninstall(repo.main_root)
    gone = mergedriver.unregister(repo.main_root)
    return InitReport(done=[*done.done, *([gone] if gone else [])], notes=done.notes)
