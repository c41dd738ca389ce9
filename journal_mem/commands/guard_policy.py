"""What the guard's rules share: the refused change, the policy they apply, path kinds.

Read without pydantic: the guard runs inside `git commit` (the slow path of
`jmem guard`, see `guard_rules.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from journal_mem.config import settings
from journal_mem.gitops import gitfacts
from journal_mem.names import is_name
from journal_mem.store.journal import is_entry_name
from journal_mem.store.layout import DISTILL_STATE, JOURNAL, KEEP, MEMORY_MD, TOPICS, Layout

HEX_RE = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
CONFLICT_RE = re.compile(rb"^(?:<{7}|>{7})(?: |$)", re.MULTILINE)
WHAT = {"A": "added", "M": "modified", "D": "deleted", "T": "type changed", "U": "unmerged"}
RESCUE = "jmem rescue   (files lessons and edits in the main checkout's journal, unstages them)"
DISTILLER_ONLY = "only the distiller's own commit may change it"
ROOT_MOVE_ENV = "JMEM_ALLOW_ROOT_MOVE"
CONFIG_FILE = settings.CONFIG_FILE
NEW_LESSON = 'jmem write --agent {agent} --topic {topic} --title "…"'


@dataclass
class Problem:
    """One refused change: where, which rule, details, and what to run instead."""

    path: str
    rule: str
    fix: list[str]
    details: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"  {self.path}", f"    rule: {self.rule}"]
        out += [f"          - {d}" for d in self.details]
        out += [f"    {'do:' if i == 0 else '    '}   {f}" for i, f in enumerate(self.fix)]
        return out


@dataclass(frozen=True)
class Policy:
    """Where things are and the settings the rules need."""

    repo: gitfacts.Repo
    layout: Layout
    default_agent: str
    append_only: bool
    scan_secrets: bool
    entry_bytes: int


def load_policy(cwd: str) -> Policy:
    """The repository and its settings, read without pydantic.

    The guard runs inside `git commit`; the validated `Config` model would add
    ~150 ms of imports. A broken config is reported by every other command.
    """
    repo = gitfacts.locate(cwd)
    view = settings.Settings(repo.main_root)
    return Policy(
        repo=repo,
        layout=Layout(repo, view.memory_root),
        default_agent=str(view.get("default_agent")),
        append_only=view.switch("guard.append_only"),
        scan_secrets=view.switch("guard.scan_secrets"),
        entry_bytes=view.whole("budget.entry_bytes"),
    )


def classify(rel: str) -> tuple[str, str | None]:
    """Kind of a path relative to the memory root, and the agent folder it is in."""
    parts = rel.split("/")
    if parts[-1] == KEEP:
        return "keep", None
    agent = parts[0] if len(parts) > 1 and is_name(parts[0]) else None
    if agent and len(parts) == 3 and parts[1] == JOURNAL and is_entry_name(parts[2]):
        return "entry", agent
    if agent and (parts[1:] == [MEMORY_MD] or (len(parts) >= 3 and parts[1] == TOPICS)):
        return "distilled", agent
    if parts == [DISTILL_STATE]:
        return "distilled", None
    return "unknown", agent
