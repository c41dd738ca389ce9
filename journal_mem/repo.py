"""The composition root: a command opens its repository here once (where it is, its
config, its memory layout) and passes the `Context` down; the team's agents and the
fold of a journal for this repository are named here, once."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from journal_mem.gitops import gitcore
from journal_mem.journal.validate import Policy
from journal_mem.layout import Layout
from journal_mem.schema import Config, load

if TYPE_CHECKING:  # the fold's modules load only for a command that folds
    from journal_mem.journal.entry import Entry
    from journal_mem.journal.fold import Fold


@dataclass(frozen=True)
class Context:
    """What nearly every command needs."""

    repo: gitcore.Repo
    config: Config
    layout: Layout

    @property
    def policy(self) -> Policy:
        """The one validation policy every command judges entries by."""
        return Policy(entry_bytes=self.config.budget.entry_bytes,
                      scan_secrets=self.config.guard.scan_secrets,
                      default_topic=self.config.distill.default_topic)

    @property
    def agents(self) -> list[str]:
        """The team's agents: those the config names and those with a folder on disk."""
        return sorted(set(self.config.agents) | set(self.layout.agents_on_disk()))

    def fold(self, entries: list[tuple[str, Entry]], date: dt.date, *, rev: str = "HEAD",
             agents: list[str] | None = None, report_near: bool = True) -> Fold:
        """The live facts of `entries` on `date` as the distiller folds them here: for the
        team's agents (or `agents`), refs judged against `rev`'s tree, by the config."""
        from journal_mem.gitops.memgit import ref_checker
        from journal_mem.journal.fold import fold

        return fold(entries, agents=self.agents if agents is None else agents, date=date,
                    ref_exists=ref_checker(self.repo.main_root, rev), config=self.config,
                    report_near=report_near)


def open_context(cwd: str, flags: dict[str, Any] | None = None) -> Context:
    """Locate the repository from `cwd` and load the main checkout's config."""
    repo = gitcore.locate(cwd)
    config = load(repo.main_root, flags, state_dir=repo.state_dir)
    return Context(repo, config, Layout(repo, config.memory_root))
