"""Open a repository for a command: where it is, its config, its memory layout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from journal_mem.config.schema import Config, load
from journal_mem.gitops import gitfacts
from journal_mem.model.validate import Policy
from journal_mem.store.layout import Layout


@dataclass(frozen=True)
class Context:
    """What nearly every command needs."""

    repo: gitfacts.Repo
    config: Config
    layout: Layout

    @property
    def policy(self) -> Policy:
        """The one validation policy every command judges entries by."""
        return Policy(entry_bytes=self.config.budget.entry_bytes,
                      scan_secrets=self.config.guard.scan_secrets,
                      default_topic=self.config.distill.default_topic)


def open_context(cwd: str, flags: dict[str, Any] | None = None) -> Context:
    """Locate the repository from `cwd` and load the main checkout's config."""
    repo = gitfacts.locate(cwd)
    config = load(repo.main_root, flags, state_dir=repo.state_dir)
    return Context(repo, config, Layout(repo, config.memory_root))
