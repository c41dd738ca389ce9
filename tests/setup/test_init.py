"""`jmem init`: config, memory root, agent folders; idempotent; branch recorded."""

from __future__ import annotations

import tomllib
from pathlib import Path

from helpers import add_worktree, jmem, make_repo

NO_HOOKS = ("--no-git-hooks", "--no-claude")


def test_init_creates_config_and_agent_folders(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "r")
    proc = jmem(main, "init", "--agent", "api", "--agent", "web", *NO_HOOKS)
    assert proc.returncode == 0, proc.stderr
    assert "created .claude/journal-mem.toml" in proc.stdout
    assert (main / ".claude/agent-memory/api/journal/.gitkeep").is_file()
    assert (main / ".claude/agent-memory/web/journal/.gitkeep").is_file()
    config = tomllib.loads((main / ".claude/journal-mem.toml").read_text())
    assert config["distill"]["branch"] == "main"
    assert config["agents"] == ["api", "web"]
    text = (main / ".claude/journal-mem.toml").read_text()
    assert "# memory_lines = 200" in text and "# threshold = 10" in text


def test_second_init_changes_nothing_and_says_so(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "r")
    assert jmem(main, "init", "--agent", "api", *NO_HOOKS).returncode == 0
    before = {p: p.read_bytes() for p in main.rglob("*") if p.is_file() and ".git/" not in str(p)}
    proc = jmem(main, "init", "--agent", "api", *NO_HOOKS)
    assert proc.returncode == 0
    assert "already set up here: nothing to change" in proc.stdout
    after = {p: p.read_bytes() for p in main.rglob("*") if p.is_file() and ".git/" not in str(p)}
    assert after == before


def test_init_from_a_worktree_sets_up_the_main_checkout(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "r")
    wt = add_worktree(main, tmp_path / "wt")
    proc = jmem(wt, "init", "--agent", "api", *NO_HOOKS)
    assert proc.returncode == 0, proc.stderr
    assert (main / ".claude/journal-mem.toml").is_file()
    assert not (wt / ".claude").exists()


def test_init_refuses_bad_agent_names(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "r")
    proc = jmem(main, "init", "--agent", "../evil", "--agent", "Upper", *NO_HOOKS)
    assert proc.returncode == 1
    assert "'../evil' is not a valid name" in proc.stderr and "'Upper'" in proc.stderr
    assert not (main / ".claude").exists()


def test_init_in_an_empty_repository(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "r", commit=False)
    proc = jmem(main, "init", *NO_HOOKS)
    assert proc.returncode == 0, proc.stderr
    assert (main / ".claude/agent-memory/.gitkeep").is_file()


def test_init_outside_a_repository_exit_4(tmp_path: Path) -> None:
    assert jmem(tmp_path, "init", *NO_HOOKS).returncode == 4
