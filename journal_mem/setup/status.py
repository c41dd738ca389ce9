"""`jmem status`: the first thing to run when "memory doesn't work".

Pending lessons per agent, the outbox, the last distill, the lock, budget use
of each MEMORY.md, and which git and Claude Code hooks are installed. With
`--sessions`, what the last sessions were given when they woke up.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import Any

from journal_mem.errors import GitError, JournalMemError
from journal_mem.gitops import gitcore
from journal_mem.journal.ignored import ignored_lines
from journal_mem.journal.listing import MISNAMED, misnamed_files, pending_paths
from journal_mem.journal.lock import held_by
from journal_mem.layout import DISTILL_STATE, Layout
from journal_mem.loop import hooklog
from journal_mem.repo import Context, open_context
from journal_mem.setup import client_files, discover, githooks
from journal_mem.setup.claude_files import PATH_HINT
from journal_mem.wake import claude_files as claude_settings
from journal_mem.wake import sessions


def collect(cwd: str) -> dict[str, Any]:
    """Everything `status` reports, as plain data (printed as is by `--json`)."""
    ctx = open_context(cwd)
    layout = ctx.layout
    agents = sorted(set(layout.agents_on_disk()) | set(ctx.config.agents))
    waiting = pending_paths(layout)
    return {
        "main_checkout": ctx.repo.main_root,
        "worktree": None if ctx.repo.is_main else ctx.repo.worktree_root,
        "pending": {a: sum(1 for w in waiting if w[0] == a and not w[3]) for a in agents},
        "threshold": ctx.config.distill.threshold,
        "outbox": [w[2] for w in waiting if w[3]],
        "misnamed": [f"{layout.memory_root}/{rel}" for rel in misnamed_files(layout)],
        "last_distill": _last_distill(ctx),
        "lock": held_by(layout.state_dir),
        "budgets": {a: _budget(ctx, a) for a in agents},
        "git_hooks": _git_hooks(ctx.repo.main_root),
        "claude_hooks": _claude_hooks(ctx.repo.main_root, ctx.repo.worktree_root),
        "client_hooks": _client_hooks(ctx.repo.main_root),
        "codex_trusted": _codex_trusted(ctx.repo.main_root),
        "ignored": _ignored(layout, agents),
        "elsewhere": [{"what": what, "paths": paths, "command": command}
                      for what, paths, command in discover.found_in(ctx)],
    }


def session_log(cwd: str, limit: int) -> list[dict[str, Any]]:
    """The last `limit` wake-ups recorded in the session log, oldest first."""
    repo = gitcore.locate(cwd)
    return sessions.read(repo.state_dir, limit)


def hook_summary(cwd: str) -> dict[str, dict[str, Any]]:
    """Per agent-loop point: calls, ran, skipped (why), failed, facts found, lessons written."""

    return hooklog.summary(hooklog.read(gitcore.locate(cwd).state_dir))


def render(report: dict[str, Any]) -> list[str]:
    """The report as the lines `status` prints."""
    out = [f"main checkout: {report['main_checkout']}"]
    if report["worktree"]:
        out.append(f"this worktree: {report['worktree']} (memory is read and written in the "
                   "main checkout)")
    pending = ", ".join(f"{a} {n}" for a, n in report["pending"].items()) or "no agents"
    out.append(f"pending lessons: {pending} (a distill starts at {report['threshold']})")
    out.append(f"outbox: {len(report['outbox'])} waiting" +
               "".join(f"\n  {p}" for p in report["outbox"]))
    for path in report["misnamed"]:
        out.append(f"warning: {path}: {MISNAMED}")
    last = report["last_distill"]
    out.append("last distill: " + (f"{last['date']} (commit {last['commit'] or 'not committed'})"
                                   if last else "never"))
    lock = report["lock"]
    out.append(f"lock: held ({lock})" if lock else "lock: free")
    for agent, use in report["budgets"].items():
        out.append(f"{agent}/MEMORY.md: " + (
            f"{use['lines']}/{use['max_lines']} lines, {use['bytes']}/{use['max_bytes']} bytes"
            + (f"; {use['evicted']} facts evicted (no room in the topic files; only in the "
               "journal, `jmem recall` finds them)" if use["evicted"] else "")
            if use else "not distilled yet"))
    githooks = report["git_hooks"]
    out.append("git hooks: " + ", ".join(f"{h} {state}" for h, state in githooks.items()))
    ch = report["claude_hooks"]
    out.append("Claude Code hooks: " + ("all installed" if not ch["missing"] else
                                         f"missing {', '.join(ch['missing'])} (run jmem init)"))
    for client, missing in report["client_hooks"].items():
        label = {"codex": "Codex", "gemini": "Gemini CLI"}.get(client, client)
        out.append(f"{label} hooks: " + (
            "all installed" if not missing else
            f"missing {', '.join(missing)} (run jmem init --{client})") + (
            _trust_note(report.get("codex_trusted")) if client == "codex" else ""))
    for line in report["ignored"]:
        out.append(f"warning: {line}: lessons there are never committed (remove the rule; "
                   "init, write and distill refuse until then)")
    out += _claude_warnings(ch)
    found = [(e["what"], e["paths"], e["command"]) for e in report.get("elsewhere", [])]
    out += [f"note: {line}" for line in discover.lines(found)]
    return out


def _claude_warnings(ch: dict[str, Any]) -> list[str]:
    """What keeps memory from reaching Claude Code sessions, and the fix."""
    if ch["plugin"]:
        return ["Claude Code plugin: installed (runs the hooks in every checkout, finds jmem "
                "without PATH)"]
    out = []
    if not ch["jmem_on_path"]:
        out.append("warning: `jmem` is not on PATH: the hooks in .claude/settings.json cannot "
                   "run (Claude Code shows a hook error, status 127, and every session goes "
                   f"on without memory); {PATH_HINT}, or install the Claude "
                   "Code plugin (jmem claude-plugin says how)")
    if ch["worktree_missing"]:
        out.append(f"warning: this worktree's .claude/settings.json lacks "
                   f"{', '.join(ch['worktree_missing'])}: it was checked out before `jmem "
                   "init`, and Claude Code runs the hooks of the checkout it starts in. Merge "
                   "the main branch, or install the Claude Code plugin (jmem claude-plugin)")
    return out


def _trust_note(trusted: bool | None) -> str:
    if trusted:
        return "; trusted in your Codex config"
    return ("; not trusted in your Codex config yet, so Codex runs none of them: review "
            "`jmem codex-trust` and append it to ~/.codex/config.toml")


def render_sessions(records: list[dict[str, Any]]) -> list[str]:
    """One line per recorded wake-up."""
    if not records:
        return ["no session has woken up with journal-mem yet"]
    out = []
    for r in records:
        keys = r.get("keys") or []
        who = r.get("agent", "?") + (f" ({r['agent_id']})" if r.get("agent_id") else "")
        out.append(f"{r.get('time', '?')}  {r.get('session_id') or '-'}  {who}  "
                   f"{len(keys)} keys: {', '.join(keys) if keys else '-'}")
    return out


def _last_distill(ctx: Context) -> dict[str, Any] | None:
    try:
        with open(ctx.layout.distill_state, "rb") as fh:
            state = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    rel = f"{ctx.layout.memory_root}/{DISTILL_STATE}"
    log = gitcore.run(["log", "-1", "--format=%h %cs", "--", rel], ctx.repo.main_root,
                       clean=True, check=False)
    return {"date": state.get("date") if isinstance(state, dict) else None,
            "commit": log.text().strip() if log.ok else ""}


def _budget(ctx: Context, agent: str) -> dict[str, int] | None:
    try:
        with open(ctx.layout.memory_md(agent), "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    return {"lines": data.count(b"\n"), "max_lines": ctx.config.budget.memory_lines,
            "bytes": len(data), "max_bytes": ctx.config.budget.memory_bytes,
            "evicted": evicted_count(data)}


def evicted_count(memory_md: bytes) -> int:
    """Facts with no room in any topic file, as MEMORY.md's last line counts them."""

    last = memory_md.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    found = re.search(rb"(\d+) only in the journal", last)
    return int(found.group(1)) if found else 0


def _git_hooks(root: str) -> dict[str, str]:
    folder = githooks.hooks_dir(root)
    states = {}
    for name in githooks.HOOKS:
        path = os.path.join(folder, name)
        states[name] = (_ours(path, name) if githooks.is_ours(path) else
                        "foreign (not ours)" if os.path.lexists(path) else "missing")
    return states


def _ours(path: str, name: str) -> str:
    """"installed", or what differs from the shim this jmem writes (an older version's,
    or another interpreter's): `init` rewrites it."""
    try:
        with open(path, encoding="utf-8") as fh:
            same = fh.read() == githooks.shim(name)
    except (OSError, UnicodeDecodeError):
        same = False
    return "installed" if same else \
        "installed, not as this jmem writes it (`jmem init` rewrites it)"


def _client_hooks(root: str) -> dict[str, list[str]]:
    """For each other client whose hook file the checkout has (Codex, Gemini CLI, Qwen
    Code): the events whose journal-mem hook it lacks."""
    return {name: client_files.missing_hooks(root, spec)
            for name, spec in client_files.CLIENT_HOOKS.items()
            if os.path.exists(os.path.join(root, spec.file))}


def _codex_trusted(root: str) -> bool | None:
    """Whether the user's Codex config holds every trust record journal-mem's Codex hooks
    need (None: the checkout has no Codex hook file)."""
    if not os.path.exists(os.path.join(root, client_files.CODEX.file)):
        return None
    try:
        if client_files.unvouched(root):
            return False
        lines, clash = client_files.trust_toml(root)
    except JournalMemError:
        return False
    return not lines and not clash


def _claude_hooks(root: str, worktree: str) -> dict[str, Any]:
    missing = claude_settings.missing_hooks(root)
    # a linked worktree runs its own branch's settings: say so when they lag the main's
    lagging = worktree != root and len(missing) < len(claude_settings.HOOKS)
    return {"missing": missing, "jmem_on_path": shutil.which("jmem") is not None,
            "worktree_missing": claude_settings.missing_hooks(worktree) if lagging else [],
            "plugin": claude_settings.plugin_enabled()}


def _ignored(layout: Layout, agents: list[str]) -> list[str]:
    """Memory files git would ignore; a failing git call is reported, not raised."""
    try:
        return ignored_lines(layout, agents)
    except GitError as exc:
        return [f"{layout.memory_root}: cannot tell whether git ignores it ({exc.message})"]
