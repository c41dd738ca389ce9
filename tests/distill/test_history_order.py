"""Cause by git history (DESIGN rule 13): an entry whose commit descends from the commit
that brought in another entry knew it, whoever wrote it, whatever its `created` says.

Every entry here is written by hand (no `knew`, as another tool, an older jmem or a
person writes them), with its `created` behind the fact it names, and committed with
real git; the distiller then folds the journal."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from helpers import git, jmem

from journal_mem.gitops import lineage
from journal_mem.journal.entry import Entry, render
from journal_mem.journal.order import causal_order, history_edges

MEM = ".claude/agent-memory"
T0 = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "commit", "-q", "--allow-empty", "-m", "first")
    assert jmem(root, "init", "--agent", "api", "--agent", "web", "--no-git-hooks",
                "--no-claude").returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "jmem")
    return root


def entry(root: Path, name: str, *, commit: bool = True, **fields: object) -> str:
    """A hand-written entry file (no `knew`), committed on its own; its journal path."""
    agent = str(fields.setdefault("agent", "api"))
    fields.setdefault("topic", "auth")
    e = Entry(**fields)  # type: ignore[arg-type]
    rel = f"{agent}/journal/{e.created.date()}-{name}.md"
    path = root / MEM / rel
    path.write_text(render(e))
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"lesson {name}")
    return rel


def distilled(root: Path, agent: str = "api") -> str:
    proc = jmem(root, "distill")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return (root / MEM / agent / "MEMORY.md").read_text()


SKEWS = [dt.timedelta(minutes=-2), dt.timedelta(days=-3), dt.timedelta(seconds=-1)]


@pytest.mark.parametrize("skew", SKEWS, ids=["2-min", "3-days", "1-s"])
def test_a_supersede_committed_later_wins_with_its_clock_behind(tmp_path: Path,
                                                                skew: dt.timedelta) -> None:
    root = repo(tmp_path)
    entry(root, "ttl", key="token-ttl", title="Access tokens live 15 minutes", created=T0)
    entry(root, "ttl2", agent="web", key="token-ttl-1h", supersedes=("token-ttl",),
          title="Access tokens live 60 minutes now", created=T0 + skew)
    text = distilled(root)
    assert "token-ttl-1h" in text and "[token-ttl]" not in text, text
    assert "[token-ttl]" not in distilled(root, "web")


@pytest.mark.parametrize("skew", SKEWS, ids=["2-min", "3-days", "1-s"])
def test_a_retraction_committed_later_wins_with_its_clock_behind(tmp_path: Path,
                                                                 skew: dt.timedelta) -> None:
    root = repo(tmp_path)
    entry(root, "ttl", key="token-ttl", title="Access tokens live 15 minutes", created=T0)
    entry(root, "drop", agent="web", key="no-ttl", retracts=("token-ttl",),
          title="Tokens no longer expire on a timer", created=T0 + skew)
    assert "[token-ttl]" not in distilled(root)


def test_a_restatement_of_the_same_key_committed_later_wins(tmp_path: Path) -> None:
    root = repo(tmp_path)
    entry(root, "ttl", key="token-ttl", title="Access tokens live 15 minutes", created=T0)
    entry(root, "ttl-b", key="token-ttl", title="Access tokens live 30 minutes",
          created=T0 - dt.timedelta(days=3))
    text = distilled(root)
    assert "30 minutes" in text and "15 minutes" not in text, text


def test_a_restatement_after_the_correction_brings_the_key_back(tmp_path: Path) -> None:
    root = repo(tmp_path)
    entry(root, "ttl", key="token-ttl", title="Access tokens live 15 minutes", created=T0)
    entry(root, "drop", agent="web", key="no-ttl", retracts=("token-ttl",),
          title="Tokens no longer expire on a timer", created=T0 - dt.timedelta(minutes=5))
    entry(root, "back", key="token-ttl", title="Access tokens live 15 minutes again",
          created=T0 - dt.timedelta(minutes=9))
    assert "15 minutes again" in distilled(root)


def test_two_uncommitted_entries_are_ordered_by_clock(tmp_path: Path) -> None:
    """Nothing in history relates two entries that are both still pending."""
    root = repo(tmp_path)
    entry(root, "ttl", commit=False, key="token-ttl", title="Access tokens live 15 minutes",
          created=T0)
    entry(root, "ttl-b", commit=False, key="token-ttl", title="Access tokens live 30 minutes",
          created=T0 - dt.timedelta(minutes=1))
    assert "15 minutes" in distilled(root)


def test_two_branches_that_never_saw_each_other_are_ordered_by_clock(tmp_path: Path) -> None:
    """Concurrent commits (a merge of two branches): no history edge either way."""
    root = repo(tmp_path)
    git(root, "checkout", "-q", "-b", "side")
    entry(root, "side", key="token-ttl", title="Access tokens live 30 minutes",
          created=T0 + dt.timedelta(minutes=1))
    git(root, "checkout", "-q", "main")
    entry(root, "main", key="token-ttl", title="Access tokens live 15 minutes", created=T0)
    git(root, "merge", "-q", "--no-edit", "side")
    history = lineage.read(str(root), "HEAD", MEM)
    side, main = (f"api/journal/{T0.date()}-{n}.md" for n in ("side", "main"))
    assert not history.descends(history.added[side], history.added[main])
    assert not history.descends(history.added[main], history.added[side])
    assert "30 minutes" in distilled(root)  # the later clock, as nothing else orders them


def test_history_through_a_merge_orders_the_side_branch_after_what_it_merged(
        tmp_path: Path) -> None:
    """A side branch that merged main before its correction knew main's fact."""
    root = repo(tmp_path)
    entry(root, "ttl", key="token-ttl", title="Access tokens live 15 minutes", created=T0)
    git(root, "checkout", "-q", "-b", "side", "HEAD~1")
    git(root, "commit", "-q", "--allow-empty", "-m", "side work")
    git(root, "merge", "-q", "--no-edit", "main")
    entry(root, "fix", agent="web", key="token-ttl-1h", supersedes=("token-ttl",),
          title="Access tokens live 60 minutes now", created=T0 - dt.timedelta(days=3))
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-edit", "side")
    assert "[token-ttl]" not in distilled(root)


def test_knew_beats_a_history_edge_that_contradicts_it() -> None:
    """Committed out of the order they were written: B names A in `knew`, yet B's
    commit came first. The writer saw what it saw: A before B."""
    a = Entry(agent="api", topic="auth", key="k", title="Tokens live 15 minutes", created=T0)
    b = Entry(agent="web", topic="auth", key="k", title="Tokens live 30 minutes",
              created=T0 - dt.timedelta(minutes=2), knew=("api/journal/a.md",))

    class Lineage:
        def __init__(self) -> None:
            self.added = {"api/journal/a.md": "c2", "web/journal/b.md": "c1"}

        def generation(self, commit: str) -> int:
            return {"c1": 1, "c2": 2}[commit]

        def descends(self, later: str, earlier: str) -> bool:
            return (later, earlier) == ("c2", "c1")

    items = [("api/journal/a.md", a), ("web/journal/b.md", b)]
    edges = history_edges(items, Lineage())
    assert edges == {"api/journal/a.md": ("web/journal/b.md",)}
    assert [p for p, _ in causal_order(items, edges)] == ["api/journal/a.md",
                                                          "web/journal/b.md"]


def test_check_agrees_with_the_distill_under_history_order(tmp_path: Path) -> None:
    root = repo(tmp_path)
    entry(root, "ttl", key="token-ttl", title="Access tokens live 15 minutes", created=T0)
    entry(root, "ttl2", agent="web", key="token-ttl-1h", supersedes=("token-ttl",),
          title="Access tokens live 60 minutes now", created=T0 - dt.timedelta(days=3))
    distilled(root)
    proc = jmem(root, "check")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_pending_correction_behind_its_fact_wins_and_check_agrees(tmp_path: Path) -> None:
    """Not committed yet, it will be committed on top of HEAD by the distill: it knew every
    committed entry of its key, so the fold orders it so at once, and the rebuild `check`
    makes from the distill's commit (where history says the same) agrees."""
    root = repo(tmp_path)
    entry(root, "ttl", key="token-ttl", title="Access tokens live 15 minutes", created=T0)
    entry(root, "ttl2", commit=False, agent="web", key="token-ttl-1h",
          supersedes=("token-ttl",), title="Access tokens live 60 minutes now",
          created=T0 - dt.timedelta(days=3))
    assert "[token-ttl]" not in distilled(root)
    proc = jmem(root, "check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[token-ttl]" not in distilled(root)
