"""The composition root: every entry point opens its repository here once (where it is,
its settings, its memory layout) and passes the `Context` down; the team's agents and
the fold of a journal for this repository are named here, once.

The context is cheap to build and the same for every path: locating the repository,
the standard-library settings view and the layout, nothing more. The validated
`Config` (the pydantic model, ~150 ms of imports on a cold start) loads on first use
of `Context.config`, so the git hooks and the agent hooks run on the very context
the other commands use, and only commands that need the model pay for it.
"""

from __future__ import annotations

import os

from journal_mem import settings
from journal_mem.gitops import gitcore
from journal_mem.journal.validate import Policy
from journal_mem.layout import Layout

# `typing` and `datetime` cost every command ~4 ms to import: annotations only.
TYPE_CHECKING = False
if TYPE_CHECKING:  # the fold's and the model's modules load only for a command using them
    import datetime as dt
    from collections.abc import Callable, Iterable
    from typing import Any

    from journal_mem.journal.entry import Entry
    from journal_mem.journal.fold import Fold
    from journal_mem.journal.replay import Kept
    from journal_mem.schema import Config


class Context:
    """Repository, settings, layout and (on first use) config for one command."""

    __slots__ = ("_config", "_policy", "layout", "repo", "settings")

    def __init__(self, repo: gitcore.Repo, view: settings.Settings,
                 config: Config | None = None, memory_root: str | None = None) -> None:
        self.repo = repo
        self.settings = view
        self._config = config
        self._policy: Policy | None = None
        root = memory_root or (config.memory_root if config is not None else view.memory_root)
        self.layout = Layout(repo, root)

    @property
    def config(self) -> Config:
        """The validated configuration (flags > JMEM_* > file > defaults), loaded once."""
        if self._config is None:
            from journal_mem.schema import load  # the model: only for a command that asks

            self._config = load(self.repo.main_root, self.settings.flags,
                                state_dir=self.repo.state_dir)
        return self._config

    @property
    def policy(self) -> Policy:
        """The one validation policy every command judges entries by."""
        if self._policy is None:
            view = self.settings
            self._policy = Policy(entry_bytes=view.whole("budget.entry_bytes"),
                                  scan_secrets=view.switch("guard.scan_secrets"),
                                  default_topic=str(view.get("distill.default_topic")))
        return self._policy

    @property
    def default_agent(self) -> str:
        """The writer of a lesson that names none."""
        return str(self.settings.get("default_agent"))

    @property
    def agents(self) -> list[str]:
        """The team's agents: those the settings name and those with a folder on disk."""
        named = self._config.agents if self._config is not None else \
            self.settings.names("agents")
        return sorted(set(named) | set(self.layout.agents_on_disk()))

    def at_root(self, memory_root: str) -> Context:
        """This context with the memory at another root (the guard judges a commit that
        moves the root under both)."""
        return Context(self.repo, self.settings, self._config, memory_root)

    def fold(self, entries: list[tuple[str, Entry]], date: dt.date, *, rev: str = "HEAD",
             agents: list[str] | None = None, report_near: bool = True,
             files: Callable[[Iterable[str]], int] | None = None,
             kept: Callable[[], Kept | None] | None = None, settle: bool = True,
             keep_near: bool = False) -> Fold:
        """The live facts of `entries` on `date` as the distiller folds them here: for the
        team's agents (or `agents`), refs judged against `rev`'s tree, by the config, in
        the order of `rev`'s history (`gitops.lineage`), then of `knew`, then of clocks;
        going on from the replay `kept()` gives, kept by an earlier fold, when that
        gives the same (`journal.replay`; `files`: the digest of entry files).
        `settle=False`: the near-duplicates may still be being found in a child (forked
        once the git process that read refs has ended); the caller waits for them with
        `Fold.settle`. `keep_near`: keep what they were found by (`Fold.signatures`)."""
        from journal_mem.gitops.lineage import read as history  # and its pickled cache
        from journal_mem.gitops.memgit import ref_checker, refs_same
        from journal_mem.journal.fold import fold

        root, memory_root = self.repo.main_root, self.layout.memory_root
        state = self.layout.state_dir  # where the logs read are kept (`gitops.logcache`)
        commit = ((gitcore.head_from_files(self.repo.common_dir) if rev == "HEAD" else None)
                  or gitcore.resolve(root, rev) or "")
        with ref_checker(root, commit or rev, state) as exists:  # the very commit `at` names
            result = fold(entries, agents=self.agents if agents is None else agents,
                          date=date, ref_exists=exists, config=self.config,
                          report_near=report_near,
                          lineage=lambda: history(root, rev, memory_root, state), files=files,
                          kept=kept, settle=settle, at=commit, keep_near=keep_near,
                          same_since=lambda old, paths: refs_same(root, old, commit,
                                                                  memory_root, paths, state))
        if result.waiting:  # the git process that read refs has ended: fork now
            result.start()
        if report_near:  # the code its facts cite, as git history says now
            from journal_mem.journal.citations import judge

            judge(result, root, commit or rev, memory_root, self.layout.state_dir,
                  self.config, known=bool(commit))
        return result


def context_of(repo: gitcore.Repo, flags: dict[str, Any] | None = None) -> Context:
    """The context of a repository already located (cheap: no config model yet)."""
    cache = os.path.join(repo.state_dir, "cache")  # the config file's parse is kept there
    return Context(repo, settings.Settings(repo.main_root, flags, cache))


def light_context(cwd: str) -> Context:
    """Locate the repository from `cwd`: the cheap context, for the hot paths and every
    command alike (the config model loads when first asked for)."""
    return context_of(gitcore.locate(cwd))


def open_context(cwd: str, flags: dict[str, Any] | None = None) -> Context:
    """Locate the repository from `cwd` and load the main checkout's config now (a
    command that reports a broken setting before it does anything)."""
    ctx = context_of(gitcore.locate(cwd), flags)
    ctx.config  # noqa: B018 - validated now, so a broken setting fails before any work
    return ctx
