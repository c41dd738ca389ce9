"""Memory that git ignores is refused by `init`, `write` and `distill`; `status` says so.

An ignored journal would be folded here but never committed, and every other
clone's `check` would then fail on facts it cannot rebuild.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import git, jmem, journal_files, make_repo

MEM = ".claude/agent-memory"
WRITE = ("write", "--agent", "api", "--topic", "testing", "--title", "A lesson", "--body", "x")


@pytest.mark.parametrize("rule", [".claude/", "journal/", "*.md", "agent-memory"])
def test_write_refuses_an_ignored_journal(repo: Path, rule: str) -> None:
    (repo / ".gitignore").write_text(f"{rule}\n")
    proc = jmem(repo, *WRITE)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "git ignores memory files" in proc.stderr
    assert f".gitignore:1: {rule}" in proc.stderr
    hint = "hint: the rule `.claude/` ignores the folder above" if rule == ".claude/" \
        else "hint: remove or narrow each rule"
    assert hint in proc.stderr
    assert journal_files(repo, "api") == []


def test_the_hint_for_an_ignored_parent_folder_works_when_followed(repo: Path) -> None:
    """`.claude/` ignored whole (a common rule): `!/.claude/agent-memory/` after it does
    nothing; the rewrite the hint names lets `import claude-md` and `write` in, and keeps
    the rest of `.claude/` ignored."""
    (repo / ".gitignore").write_text(".claude/\n")
    (repo / "CLAUDE.md").write_text("# Rules\n\n- Never push to main\n")
    refused = jmem(repo, "import", "claude-md", "CLAUDE.md")
    assert refused.returncode == 1
    said = " ".join(refused.stderr.split())
    assert "replace it with `.claude/*` and add `!/.claude/agent-memory/` and " \
        "`!/.claude/journal-mem.toml` after it" in said
    (repo / ".gitignore").write_text(".claude/*\n!/.claude/agent-memory/\n"
                                     "!/.claude/journal-mem.toml\n")
    assert jmem(repo, "import", "claude-md", "CLAUDE.md").returncode == 0
    assert jmem(repo, *WRITE).returncode == 0
    assert git(repo, "check-ignore", "-q", ".claude/settings.local.json").returncode == 0


def test_write_passes_when_a_later_rule_unignores(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.md\n!/.claude/agent-memory/**\n")
    proc = jmem(repo, *WRITE)
    assert proc.returncode == 0, proc.stderr
    assert len(journal_files(repo, "api")) == 1


def test_distill_refuses_an_ignored_memory_root(repo: Path) -> None:
    assert jmem(repo, *WRITE).returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lesson")
    (repo / ".git" / "info" / "exclude").write_text("MEMORY.md\n")
    head = git(repo, "rev-parse", "HEAD").stdout
    proc = jmem(repo, "distill")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{MEM}/api/MEMORY.md: ignored by git (.git/info/exclude:1: MEMORY.md)" in proc.stderr
    assert not (repo / MEM / "api" / "MEMORY.md").exists()
    assert git(repo, "rev-parse", "HEAD").stdout == head


def test_init_refuses_and_creates_nothing(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "m")
    (main / ".gitignore").write_text(".claude\n")
    proc = jmem(main, "init", "--agent", "api", "--no-claude", "--no-git-hooks")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ".claude/journal-mem.toml: ignored by git (.gitignore:1: .claude)" in proc.stderr
    assert not (main / ".claude").exists()


def test_status_warns(repo: Path) -> None:
    (repo / ".gitignore").write_text("journal\n")
    proc = jmem(repo, "status")
    assert proc.returncode == 0, proc.stderr
    assert (f"warning: {MEM}/api/journal/" in proc.stdout
            and "ignored by git (.gitignore:1: journal)" in proc.stdout), proc.stdout


def test_rescue_refuses_an_ignored_journal(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "wt", str(wt))
    lesson = wt / MEM / "api" / "journal" / "2026-01-02-a-lesson.md"
    lesson.write_text("---\nagent: api\ncreated: 2026-01-02T03:04:05+00:00\ntopic: testing\n"
                      "---\n\n# A lesson\n\nDetail.\n")
    (repo / ".git" / "info" / "exclude").write_text("journal/\n")
    git(wt, "add", "-f", "--", str(lesson))
    proc = jmem(wt, "rescue")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "rescue refused, nothing written" in proc.stderr
    assert journal_files(repo, "api") == [] and lesson.exists()


def test_a_tracked_file_under_a_rule_is_not_ignored_and_an_untracked_one_is(
        repo: Path) -> None:
    """The rules are tried without the index first (`--no-index`), which also reports
    tracked paths; only what it found is asked again with the index, which drops them:
    the answer is git's own, as one call with the index gives."""
    from journal_mem.gitops.ignored import ignored

    tracked = f"{MEM}/api/MEMORY.md"
    untracked = f"{MEM}/api/topics/inbox.md"
    (repo / tracked).write_text("# Memory of api\n")
    git(repo, "add", "-f", tracked)
    (repo / ".gitignore").write_text("MEMORY.md\ninbox.md\n!keep-me.md\n")
    assert git(repo, "check-ignore", "--no-index", tracked).returncode == 0
    found = ignored(str(repo), [tracked, untracked, f"{MEM}/api/topics/keep-me.md"])
    assert found == {untracked: ".gitignore:2: inbox.md"}
    assert ignored(str(repo), [tracked]) == {}
    assert ignored(str(repo), []) == {}
