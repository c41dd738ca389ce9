"""The distill commit and the user's git: it waits for a running commit of the main
checkout, never runs hooks, and a distill killed holding `index.lock` is cleaned up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from distill_helpers import head, lesson
from helpers import base_env, git, jmem

from journal_mem.gitops import indexlock


def test_a_distill_waits_while_a_commit_of_the_main_checkout_runs(repo: Path) -> None:
    lesson(repo, "api", "k1")
    tip = head(repo)
    committing = subprocess.Popen(["sleep", "30"])  # stands for a `git commit` in its hooks
    busy = repo / ".git" / "journal-mem" / "busy"
    busy.mkdir(parents=True, exist_ok=True)
    (busy / str(committing.pid)).touch()  # what our pre-commit shim leaves
    try:
        proc = subprocess.Popen([sys.executable, "-m", "journal_mem", "distill"], cwd=repo,
                                env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(2.0)
        assert proc.poll() is None and head(repo) == tip  # still waiting
    finally:
        committing.kill()
        committing.wait()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert head(repo) != tip and not list(busy.iterdir())
    assert git(repo, "status", "--porcelain").stdout == ""


def test_pre_commit_shim_marks_a_main_checkout_commit_busy(tmp_path: Path) -> None:
    from helpers import make_repo

    main = make_repo(tmp_path / "main")
    assert jmem(main, "init", "--agent", "api", "--no-claude").returncode == 0
    hooks = main / ".git" / "hooks"
    (hooks / "pre-commit.legacy").write_text(
        '#!/bin/sh\nls "$(git rev-parse --git-common-dir)/journal-mem/busy" > seen.txt\n')
    (hooks / "pre-commit.legacy").chmod(0o755)
    # the legacy hook runs after the shim's first line: the mark is there while it runs
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "init")
    seen = (main / "seen.txt").read_text().split()
    assert len(seen) == 1 and seen[0].isdigit()


def test_the_distill_commit_runs_no_hook_and_keeps_staged_work(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ntouch hook-ran\nexit 1\n")
    hook.chmod(0o755)
    (repo / "mine.txt").write_text("staged\n")
    git(repo, "add", "mine.txt")
    lesson(repo, "api", "k1")
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    assert not (repo / "hook-ran").exists()
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["mine.txt"]
    assert git(repo, "status", "--porcelain").stdout == "A  mine.txt\n"
    assert git(repo, "reflog", "-1", "--format=%gs").stdout.startswith("commit: jmem distill")


def test_an_index_lock_left_by_a_killed_distill_is_removed(repo: Path) -> None:
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(indexlock.TOKEN)
    (repo / ".git" / "index.lock.jmem-99999").write_bytes(indexlock.TOKEN)
    lesson(repo, "api", "k1")
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    assert not lock.exists() and not (repo / ".git" / "index.lock.jmem-99999").exists()
    assert git(repo, "status", "--porcelain").stdout == ""


def test_a_foreign_index_lock_is_left_alone(repo: Path) -> None:
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"DIRC someone else's index")
    state = repo / ".git" / "journal-mem"
    assert indexlock.recover(str(repo / ".git"), str(state), head(repo)) == ""
    assert lock.read_bytes() == b"DIRC someone else's index"


def test_a_distill_killed_after_moving_head_gets_its_index_in_place(repo: Path) -> None:
    """Killed between `update-ref` and the rename: HEAD holds the commit, the lock file the
    index that goes with it; the next distill puts that index in place."""
    git_dir, state = repo / ".git", repo / ".git" / "journal-mem"
    (repo / "new.txt").write_text("new\n")
    scratch = str(tmp_index := repo / ".git" / "scratch-index")
    env = base_env(GIT_INDEX_FILE=scratch)
    git(repo, "read-tree", "HEAD", env=env)
    git(repo, "add", "new.txt", env=env)
    tree = git(repo, "write-tree", env=env).stdout.strip()
    new = git(repo, "commit-tree", tree, "-p", "HEAD", "-m", "distill").stdout.strip()
    git(repo, "update-ref", "HEAD", new)
    lock = git_dir / "index.lock"
    lock.write_bytes(tmp_index.read_bytes())
    st = os.stat(lock)
    state.mkdir(exist_ok=True)
    (state / indexlock.MARKER).write_text(json.dumps(
        {"pid": 1, "dev": st.st_dev, "ino": st.st_ino, "base": "", "new": new}))
    done = indexlock.recover(str(git_dir), str(state), new)
    assert "finished" in done and not lock.exists()
    assert git(repo, "status", "--porcelain", "--untracked-files=no").stdout == ""


def test_the_distill_commit_leaves_the_files_it_wrote_clean_in_the_index(repo: Path) -> None:
    """The index entries of what a distill committed carry their files' stat data, so a
    `git status` that may not write the index (GIT_OPTIONAL_LOCKS=0, as ours run) need not
    read and hash every distilled file again; nothing is staged by it, and a file changed
    since it was hashed stays changed."""
    lesson(repo, "api", "k1")
    lesson(repo, "web", "k2")
    assert jmem(repo, "distill").returncode == 0
    debug = git(repo, "ls-files", "--debug", "--", ".claude/agent-memory").stdout
    entries = [e for e in debug.split("\n.claude/") if not e.split("\n", 1)[0].endswith(
        ".gitkeep")]  # the only empty files
    assert len(entries) >= 6, debug  # two journal entries, MEMORY.md and topic files, state
    for entry in entries:  # `size: 0` and zero times: an entry with no stat data
        assert "\n  size: 0\t" not in entry and "mtime: 0:0" not in entry, entry
    assert git(repo, "status", "--porcelain").stdout == ""
    assert git(repo, "diff", "--cached", "--stat").stdout == ""
