"""The distill state a commit changes is HEAD's (`folding.committed_state`): when the file
on disk holds HEAD's very bytes its parse is used, else HEAD's blob is read and parsed."""

from __future__ import annotations

from pathlib import Path

import pytest
from distill_helpers import MEM, lesson
from helpers import git

from journal_mem import repo as repo_module
from journal_mem.distill import distiller, folding
from journal_mem.gitops import gitcore, indexlock
from journal_mem.journal.foldstate import parse_state

STATE = f"{MEM}/distill-state.json"


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []
    run = gitcore.run

    def spy(args: list[str], *rest: object, **kw: object) -> gitcore.GitResult:
        calls.append(list(args))
        return run(args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitcore, "run", spy)
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    return calls


def _distilled(repo: Path) -> repo_module.Context:
    lesson(repo, "api", "a1", topic="alpha", title="Alpha lesson one")
    ctx = repo_module.open_context(str(repo))
    assert distiller.distill(ctx, distiller.Options()).status == "distilled"
    return repo_module.open_context(str(repo))


def test_the_state_on_disk_that_head_holds_is_not_read_from_git(
        repo: Path, git_calls: list[list[str]]) -> None:
    ctx = _distilled(repo)
    disk = (repo / STATE).read_bytes()
    parsed = parse_state(disk)
    git_calls.clear()
    assert folding.committed_state(ctx, disk, parsed) is parsed
    assert not any(call[:2] == ["cat-file", "blob"] for call in git_calls)


def test_another_state_on_disk_gives_head_s(repo: Path, git_calls: list[list[str]]) -> None:
    """A state on disk other than HEAD's (a `--no-commit` distill, a hand edit, CRLF line
    endings): HEAD's is read and parsed."""
    ctx = _distilled(repo)
    head = parse_state(git(repo, "show", f"HEAD:{STATE}").stdout.encode())
    assert head is not None
    for disk in (b"{}", (repo / STATE).read_bytes().replace(b"\n", b"\r\n")):
        git_calls.clear()
        got = folding.committed_state(ctx, disk, parse_state(disk))
        assert got == head
        assert any(call[:2] == ["cat-file", "blob"] for call in git_calls)
    assert folding.committed_state(ctx) == head


def test_no_state_in_head(repo: Path) -> None:
    lesson(repo, "api", "a1", topic="alpha", title="Alpha lesson one")
    ctx = repo_module.open_context(str(repo))
    assert distiller.distill(ctx, distiller.Options(commit=False)).status == "distilled"
    assert git(repo, "rev-parse", "--verify", "--quiet", f"HEAD:{STATE}", check=False
               ).returncode != 0
    disk = (repo / STATE).read_bytes()
    assert folding.committed_state(ctx, disk, parse_state(disk)) is None


def test_a_distill_after_a_committed_one_reads_no_state_from_git(
        repo: Path, git_calls: list[list[str]]) -> None:
    ctx = _distilled(repo)
    lesson(repo, "api", "a2", 5, topic="alpha", title="Alpha lesson two")
    git_calls.clear()
    assert distiller.distill(ctx, distiller.Options()).status == "distilled"
    assert not [call for call in git_calls if call[:2] == ["cat-file", "blob"]
                and call[2].endswith(STATE)]
    assert distiller.distill(ctx, distiller.Options(check=True, rebuild=True)
                             ).status == "unchanged"
