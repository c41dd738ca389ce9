"""The guard, through real `git commit` / `git merge` with the hooks installed by `jmem init`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from guardkit import MEM, commit, commit_in_main, env, head, install_hooks, lesson, put
from helpers import add_worktree, base_env, git, jmem, make_repo

from journal_mem.names import default_key

ENTRY = f"{MEM}/api/journal/2026-01-02-run-the-api-tests.md"
MEMORY_MD = f"{MEM}/api/MEMORY.md"


@pytest.fixture
def main(repo: Path) -> Path:
    install_hooks(repo)
    return repo


@pytest.fixture
def wt(main: Path, tmp_path: Path) -> Path:
    return add_worktree(main, tmp_path / "wt")


def refused(proc: subprocess.CompletedProcess[str], path: str, *words: str) -> None:
    """The commit failed, and the guard named the path, the rule and the fix."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    out = proc.stderr
    assert "jmem guard:" in out and "refused" in out, out
    assert f"  {path}\n" in out, out
    for word in words:
        assert word in out, out


# --- linked worktree -------------------------------------------------------------


def test_ordinary_commit_in_worktree_passes_silently(wt: Path) -> None:
    put(wt, "src/app.py", "print('hi')\n")
    git(wt, "add", "-A")
    proc = commit(wt)
    assert proc.returncode == 0, proc.stderr
    assert "jmem" not in proc.stderr


def test_new_lesson_staged_in_worktree_is_refused(wt: Path) -> None:
    put(wt, ENTRY, lesson())
    git(wt, "add", "-A")
    before = head(wt)
    refused(commit(wt), ENTRY, "added in a linked worktree", "do:   jmem rescue")
    assert head(wt) == before


def test_memory_md_edit_in_worktree_is_refused(main: Path, tmp_path: Path) -> None:
    commit_in_main(main, MEMORY_MD, "# api memory\n")
    wt = add_worktree(main, tmp_path / "wt")
    put(wt, MEMORY_MD, "# api memory\n- a new fact\n")
    git(wt, "add", "-A")
    refused(commit(wt), MEMORY_MD, "modified in a linked worktree", "jmem rescue")


def test_deleted_and_renamed_memory_in_worktree_are_refused(main: Path, tmp_path: Path) -> None:
    commit_in_main(main, ENTRY, lesson())
    other = f"{MEM}/api/journal/2026-01-03-other.md"
    commit_in_main(main, other, lesson(title="Other"))
    wt = add_worktree(main, tmp_path / "wt")
    git(wt, "rm", "-q", "--", ENTRY)
    moved = f"{MEM}/web/journal/2026-01-03-other.md"
    git(wt, "mv", other, moved)
    proc = commit(wt)
    refused(proc, ENTRY, "deleted in a linked worktree")
    refused(proc, other, "deleted in a linked worktree")
    refused(proc, moved, "added in a linked worktree")
    assert "3 problems" in proc.stderr


def test_rename_out_of_memory_root_is_refused(main: Path, tmp_path: Path) -> None:
    commit_in_main(main, ENTRY, lesson())
    wt = add_worktree(main, tmp_path / "wt")
    git(wt, "mv", ENTRY, "notes.md")
    refused(commit(wt), ENTRY, "deleted in a linked worktree")


def test_commit_all_and_commit_path_use_the_temporary_index(main: Path, tmp_path: Path) -> None:
    commit_in_main(main, MEMORY_MD, "# api memory\n")
    wt = add_worktree(main, tmp_path / "wt")
    put(wt, MEMORY_MD, "# api memory\n- edited, not staged\n")
    refused(commit(wt, "-a"), MEMORY_MD, "modified in a linked worktree")
    refused(commit(wt, "--", MEMORY_MD), MEMORY_MD, "modified in a linked worktree")


def test_commit_from_a_subdirectory(wt: Path) -> None:
    put(wt, ENTRY, lesson())
    put(wt, "src/app.py", "x = 1\n")
    git(wt, "add", "-A")
    refused(commit(wt / "src"), ENTRY, "jmem rescue")
    git(wt, "rm", "-q", "--cached", "--", ENTRY)
    proc = commit(wt / "src")
    assert proc.returncode == 0, proc.stderr


def test_non_ascii_file_names(main: Path, wt: Path) -> None:
    name = f"{MEM}/api/journal/2026-01-02-café-über.md"
    put(wt, name, lesson())
    git(wt, "add", "-A")
    refused(commit(wt), name, "jmem rescue")
    put(main, name, lesson())
    git(main, "add", "-A")
    proc = commit(main)
    assert proc.returncode == 0, proc.stderr


def test_merging_main_into_a_worktree_branch_passes(main: Path, wt: Path) -> None:
    put(wt, "src/feature.py", "x = 1\n")
    git(wt, "add", "-A")
    assert commit(wt).returncode == 0
    put(main, ENTRY, lesson())
    git(main, "add", "-A")
    assert commit(main).returncode == 0
    proc = git(wt, "merge", "--no-edit", "--no-ff", "main", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (wt / ENTRY).exists()


# --- main checkout ---------------------------------------------------------------


def test_new_valid_lesson_in_main_passes(main: Path) -> None:
    proc = jmem(main, "write", "--agent", "api", "--topic", "testing", "--title", "A lesson",
                "--body", "Detail.")
    assert proc.returncode == 0, proc.stderr
    git(main, "add", "-A")
    proc = commit(main)
    assert proc.returncode == 0, proc.stderr
    assert "jmem" not in proc.stderr


def test_modifying_a_committed_entry_is_refused(main: Path) -> None:
    commit_in_main(main, ENTRY, lesson())
    put(main, ENTRY, lesson(body="Edited afterwards."))
    git(main, "add", "-A")
    refused(commit(main), ENTRY, "append-only",
            'jmem write --agent api --topic testing --title "…" --supersedes '
            + default_key("Run the API tests with -p no:randomly"),
            f"git restore --staged --worktree -- {ENTRY}")


def test_deleting_a_committed_entry_is_refused(main: Path) -> None:
    commit_in_main(main, ENTRY, lesson())
    git(main, "rm", "-q", "--", ENTRY)
    refused(commit(main), ENTRY, "deleted: journal entries are append-only",
            "--retracts " + default_key("Run the API tests with -p no:randomly"))


def test_append_only_can_be_switched_off(main: Path) -> None:
    commit_in_main(main, ENTRY, lesson())
    put(main, ENTRY, lesson(body="Edited afterwards."))
    git(main, "add", "-A")
    proc = commit(main, env=env(JMEM_GUARD_APPEND_ONLY="false"))
    assert proc.returncode == 0, proc.stderr


def test_hand_edit_of_distilled_files_is_refused(main: Path) -> None:
    put(main, MEMORY_MD, "# api memory\n- hand written\n")
    topic = f"{MEM}/api/topics/testing.md"
    put(main, topic, "## hand written\n")
    git(main, "add", "-A")
    proc = commit(main)
    refused(proc, MEMORY_MD, "MEMORY.md is generated by the distiller",
            'jmem write --agent api --topic … --title "…"')
    refused(proc, topic, 'jmem write --agent api --topic testing --title "…"')


def test_unknown_paths_are_refused_but_gitkeep_is_fine(main: Path) -> None:
    put(main, f"{MEM}/api/notes.txt", "scratch\n")
    put(main, f"{MEM}/api/journal/todo.md", "scratch\n")
    put(main, f"{MEM}/ops/journal/.gitkeep", "")
    git(main, "add", "-A")
    proc = commit(main)
    refused(proc, f"{MEM}/api/notes.txt", "not a journal entry",
            f"git rm --cached -q -- {MEM}/api/notes.txt")
    refused(proc, f"{MEM}/api/journal/todo.md", "not a journal entry")
    assert ".gitkeep" not in proc.stderr.split("rule:")[0]
    git(main, "rm", "-q", "--cached", "--", f"{MEM}/api/notes.txt", f"{MEM}/api/journal/todo.md")
    assert commit(main).returncode == 0


def test_invalid_lesson_is_refused_with_each_problem(main: Path) -> None:
    put(main, ENTRY, lesson(agent="web", extra="supersede: x\n"))
    git(main, "add", "-A")
    refused(commit(main), ENTRY, "a new lesson must be a valid journal entry",
            "agent: 'web' does not match its folder 'api'", "supersede: unknown field",
            f"git add -- {ENTRY}")


def test_the_staged_blob_is_checked_not_the_work_tree(main: Path) -> None:
    put(main, ENTRY, lesson(agent="web"))
    git(main, "add", "-A")
    put(main, ENTRY, lesson())  # fixed on disk, but not staged
    refused(commit(main), ENTRY, "does not match its folder")
    git(main, "add", "-A")
    put(main, ENTRY, "garbage\n")  # broken on disk after staging a valid one
    assert commit(main).returncode == 0


def test_secrets_are_refused(main: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    put(main, ENTRY, lesson(body=f"Use the token {token} for the API."))
    git(main, "add", "-A")
    proc = commit(main)
    refused(proc, ENTRY, "looks like a secret", "line 9: looks like a github token")
    assert token not in proc.stderr
    assert commit(main, env=env(JMEM_GUARD_SCAN_SECRETS="0")).returncode == 0


def test_conflict_markers_are_refused(main: Path) -> None:
    put(main, ENTRY, lesson(body="<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch"))
    git(main, "add", "-A")
    refused(commit(main), ENTRY, "unresolved conflict markers")


def test_symlinks_are_refused(main: Path) -> None:
    put(main, "lesson.md", lesson())
    os.symlink("../../../../lesson.md", main / ENTRY)
    git(main, "add", "-A")
    refused(commit(main), ENTRY, "symlinks are not allowed")


def test_first_commit_of_an_empty_repository(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "fresh", commit=False)
    proc = jmem(main, "init", "--agent", "api", "--no-claude")
    assert proc.returncode == 0, proc.stderr
    put(main, f"{MEM}/api/journal/2026-01-02-bad.md", lesson(agent="web"))
    git(main, "add", "-A")
    refused(commit(main), f"{MEM}/api/journal/2026-01-02-bad.md", "does not match its folder")
    put(main, f"{MEM}/api/journal/2026-01-02-bad.md", lesson())
    git(main, "add", "-A")
    proc = commit(main)
    assert proc.returncode == 0, proc.stderr


def test_pre_merge_commit_refuses_a_branch_that_edited_memory(main: Path, tmp_path: Path) -> None:
    commit_in_main(main, ENTRY, lesson())
    wt = add_worktree(main, tmp_path / "wt")
    put(wt, ENTRY, lesson(body="Rewritten on a branch."))
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "--no-verify", "-m", "edit memory, bypassing the guard")
    put(main, "src/other.py", "y = 2\n")
    git(main, "add", "-A")
    assert commit(main).returncode == 0
    proc = git(main, "merge", "--no-edit", "feature", check=False)
    refused(proc, ENTRY, "merge refused by the pre-merge-commit hook", "append-only",
            "git merge --abort")
    assert git(main, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode == 0


# --- switches, fast path, CLI ----------------------------------------------------


def test_jmem_disable_makes_the_guard_a_no_op_that_says_so(wt: Path) -> None:
    put(wt, ENTRY, lesson())
    git(wt, "add", "-A")
    proc = commit(wt, env=env(JMEM_DISABLE="1"))
    assert proc.returncode == 0, proc.stderr
    assert "jmem guard: off (JMEM_DISABLE=1); nothing checked" in proc.stderr


def test_hooks_guard_false_in_the_config_file(main: Path) -> None:
    config = main / ".claude" / "journal-mem.toml"
    config.write_text(config.read_text().replace("[hooks]\n", "[hooks]\nguard = false\n"))
    put(main, ENTRY, lesson(agent="web"))
    git(main, "add", "-A")
    proc = commit(main)
    assert proc.returncode == 0, proc.stderr
    assert "off (hooks.guard = false)" in proc.stderr


def test_empty_jmem_disable_means_unset(wt: Path) -> None:
    put(wt, ENTRY, lesson())
    git(wt, "add", "-A")
    refused(commit(wt, env=env(JMEM_DISABLE="")), ENTRY, "jmem rescue")


FAST_PROBE = """
import sys
from journal_mem.main import main
code = main(["guard", "--hook", "pre-commit"])
heavy = sorted(m for m in ("subprocess", "click", "pydantic", "yaml", "tomllib", "typing")
               if m in sys.modules)
print(code, ",".join(heavy) or "-")
"""


def test_fast_path_imports_only_light_modules(main: Path) -> None:
    put(main, "src/app.py", "x = 1\n")
    git(main, "add", "-A")
    proc = subprocess.run([sys.executable, "-c", FAST_PROBE], cwd=main, env=base_env(),
                          text=True, capture_output=True, check=False)
    assert proc.stdout.split() == ["0", "-"], proc.stdout + proc.stderr


def test_guard_help_goes_through_click(main: Path) -> None:
    proc = jmem(main, "guard", "--help")
    assert proc.returncode == 0
    assert "--hook [pre-commit|pre-merge-commit]" in proc.stdout


def test_guard_by_hand_reports_like_the_hook(main: Path) -> None:
    put(main, ENTRY, lesson(agent="web"))
    git(main, "add", "-A")
    proc = jmem(main / ".claude", "-C", str(main), "guard")
    assert proc.returncode == 1
    assert "commit refused by the pre-commit hook" in proc.stderr
