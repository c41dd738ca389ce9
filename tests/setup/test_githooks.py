"""Hook installation by `jmem init`: shims, .legacy chaining, uninstall, core.hooksPath."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from guardkit import ENTRY_TEXT, MEM, commit, commit_in_main, install_hooks, put
from helpers import REPO_ROOT, add_worktree, base_env, git, jmem

from journal_mem.setup.githooks import MARKER

OURS = ("pre-commit", "pre-merge-commit", "post-commit")


def hooks_dir(main: Path) -> Path:
    return main / ".git" / "hooks"


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in a folder: content and mode."""
    return {p.name: (p.read_bytes(), p.stat().st_mode) for p in sorted(folder.iterdir())}


def test_init_installs_three_marked_executable_shims(repo: Path) -> None:
    proc = jmem(repo, "init", "--no-claude")
    assert proc.returncode == 0, proc.stderr
    for name in OURS:
        path = hooks_dir(repo) / name
        text = path.read_text()
        assert MARKER in text
        assert path.stat().st_mode & stat.S_IXUSR
        assert f"installed the {name} hook" in proc.stdout
    python = os.path.abspath(sys.executable)
    assert f"exec {python} -m journal_mem guard --hook pre-commit" in \
        (hooks_dir(repo) / "pre-commit").read_text()
    assert "guard --hook pre-merge-commit" in (hooks_dir(repo) / "pre-merge-commit").read_text()


def test_post_commit_shim_starts_a_background_distill(repo: Path) -> None:
    install_hooks(repo)
    text = (hooks_dir(repo) / "post-commit").read_text()
    assert ("-m journal_mem distill --if-due --background </dev/null >/dev/null 2>&1 &"
            in text)
    assert text.rstrip().endswith("exit 0")
    put(repo, "x.py", "x = 1\n")
    git(repo, "add", "-A")
    assert commit(repo).returncode == 0


def test_second_init_changes_nothing(repo: Path) -> None:
    install_hooks(repo)
    before = snapshot(hooks_dir(repo))
    proc = jmem(repo, "init", "--no-claude")
    assert proc.returncode == 0
    assert proc.stdout.strip() == "journal-mem is already set up here: nothing to change"
    assert snapshot(hooks_dir(repo)) == before


def test_no_git_hooks_installs_nothing(repo: Path) -> None:
    before = snapshot(hooks_dir(repo))
    assert jmem(repo, "init", "--no-git-hooks", "--no-claude").returncode == 0
    assert snapshot(hooks_dir(repo)) == before


def _foreign(repo: Path, name: str, body: str) -> Path:
    path = hooks_dir(repo) / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_foreign_hook_is_kept_runs_first_and_still_blocks(repo: Path) -> None:
    _foreign(repo, "pre-commit", 'echo "foreign hook says no" >&2\nexit 1')
    proc = jmem(repo, "init", "--no-claude")
    assert "kept your pre-commit hook as pre-commit.legacy" in proc.stdout
    assert "foreign hook says no" in (hooks_dir(repo) / "pre-commit.legacy").read_text()
    put(repo, "x.py", "x = 1\n")
    git(repo, "add", "-A")
    proc = commit(repo)
    assert proc.returncode != 0
    assert "foreign hook says no" in proc.stderr


def test_foreign_hook_that_passes_still_lets_the_guard_run(repo: Path) -> None:
    _foreign(repo, "pre-commit", 'echo "foreign ran" >&2')
    install_hooks(repo)
    put(repo, f"{MEM}/api/stray.txt", "x\n")
    git(repo, "add", "-A")
    proc = commit(repo)
    assert proc.returncode != 0
    assert "foreign ran" in proc.stderr and "not a journal entry" in proc.stderr


def test_uninstall_leaves_the_hooks_dir_as_it_found_it(repo: Path) -> None:
    _foreign(repo, "pre-commit", "exit 0")
    _foreign(repo, "commit-msg", "exit 0")
    before = snapshot(hooks_dir(repo))
    install_hooks(repo)
    assert snapshot(hooks_dir(repo)) != before
    proc = jmem(repo, "init", "--uninstall")
    assert proc.returncode == 0, proc.stderr
    assert "restored your pre-commit hook from pre-commit.legacy" in proc.stdout
    assert snapshot(hooks_dir(repo)) == before
    again = jmem(repo, "init", "--uninstall")
    assert again.stdout.strip() == "no journal-mem hooks installed: nothing to remove"
    assert snapshot(hooks_dir(repo)) == before


def test_foreign_hook_and_legacy_both_present_is_refused(repo: Path) -> None:
    _foreign(repo, "pre-commit", "exit 0")
    _foreign(repo, "pre-commit.legacy", "exit 0")
    before = snapshot(hooks_dir(repo))
    proc = jmem(repo, "init", "--no-claude")
    assert proc.returncode == 1
    assert "a foreign hook and pre-commit.legacy both exist" in proc.stderr
    assert snapshot(hooks_dir(repo)) == before


def test_worktree_init_installs_into_the_shared_hooks_dir(repo: Path, tmp_path: Path) -> None:
    wt = add_worktree(repo, tmp_path / "wt")
    assert jmem(wt, "init", "--no-claude").returncode == 0
    assert MARKER in (hooks_dir(repo) / "pre-commit").read_text()
    assert not (wt / ".git").is_dir()


def test_core_hooks_path_is_not_written_without_permission(repo: Path, tmp_path: Path) -> None:
    shared = tmp_path / "husky"
    shared.mkdir()
    git(repo, "config", "core.hooksPath", str(shared))
    proc = jmem(repo, "init", "--no-claude")
    assert proc.returncode == 1
    assert "core.hooksPath is set" in proc.stderr
    python = os.path.abspath(sys.executable)
    assert f"  pre-commit: {python} -m journal_mem guard --hook pre-commit" in proc.stderr
    assert "relative" not in proc.stderr
    assert list(shared.iterdir()) == []
    proc = jmem(repo, "init", "--no-claude", "--hooks-path-ok")
    assert proc.returncode == 0, proc.stderr
    assert MARKER in (shared / "pre-commit").read_text()


def test_relative_core_hooks_path_is_warned_about(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".githooks")
    proc = jmem(repo, "init", "--no-claude")
    assert proc.returncode == 1
    assert "core.hooksPath is relative ('.githooks')" in proc.stderr
    assert "runs no hook at all" in proc.stderr
    proc = jmem(repo, "init", "--no-claude", "--hooks-path-ok")
    assert proc.returncode == 0
    assert MARKER in (repo / ".githooks" / "pre-commit").read_text()


def test_pre_commit_framework_runs_the_guard(repo: Path, tmp_path: Path) -> None:
    """`.pre-commit-hooks.yaml` works with the real pre-commit (`try-repo`)."""
    commit_in_main(repo, f"{MEM}/api/journal/2026-01-02-x.md", ENTRY_TEXT)
    put(repo, f"{MEM}/api/journal/2026-01-02-x.md", ENTRY_TEXT + "\nedited\n")
    git(repo, "add", "-A")
    env = base_env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO_ROOT), "journal-mem-guard",
         "--verbose"],
        cwd=repo, env=env, text=True, capture_output=True, check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "journal-mem guard" in out and "Failed" in out
    assert "journal entries are append-only" in out


def test_every_hook_has_its_shim_template_and_every_template_is_used() -> None:
    from journal_mem.setup import githooks as hooks

    assert set(hooks.TEMPLATES) == set(hooks.HOOKS)
    folder = REPO_ROOT / "journal_mem" / "resources"
    assert {p.name for p in folder.glob("hook-*.sh")} == set(hooks.TEMPLATES.values())
    for name in hooks.HOOKS:
        text = hooks.shim(name)
        assert text.startswith("#!/bin/sh\n") and hooks.MARKER in text
        assert f"{name}{hooks.LEGACY}" in text and "@" + "PYTHON" not in text
