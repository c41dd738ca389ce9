"""The guard shim answers a commit that stages nothing shaped like memory without starting
python; everything else (memory, the config, a quoted name, a `JMEM_*` setting, a config
that moves the memory root) still reaches the guard. Real `git commit`, the real shim, its
interpreter swapped for a wrapper that logs each start and then runs the real one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from guardkit import MEM, commit, env, install_hooks, lesson, put
from helpers import add_worktree, git

from journal_mem.guard.fast import might_be_memory
from journal_mem.setup.githooks import memory_pattern, shim


@pytest.fixture
def wt(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A linked worktree whose guard shims log every python start to the returned file."""
    install_hooks(repo)
    log = tmp_path / "python-starts.log"
    wrapper = tmp_path / "bin" / "python"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    hooks = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-path",
                     "hooks").stdout.strip())
    for name in ("pre-commit", "pre-merge-commit"):
        (hooks / name).write_text(shim(name, str(wrapper)))
    return add_worktree(repo, tmp_path / "wt"), log


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def staged_commit(wt: Path, rel: str, text: str = "x\n", **extra: str) -> tuple[int, str]:
    put(wt, rel, text)
    git(wt, "add", "--", rel)
    proc = commit(wt, env=env(**extra))
    return proc.returncode, proc.stderr


def test_an_ordinary_commit_starts_no_python(wt: tuple[Path, Path]) -> None:
    tree, log = wt
    code, err = staged_commit(tree, "src/app.py", "print('hi')\n")
    assert code == 0 and "jmem" not in err, err
    assert starts(log) == 0
    git(tree, "rm", "-q", "src/app.py")  # a deletion, and `commit -a` on a modified file
    assert commit(tree).returncode == 0 and starts(log) == 0
    put(tree, "README", "one\n")
    git(tree, "add", "README")
    assert commit(tree).returncode == 0
    put(tree, "README", "two\n")
    assert commit(tree, "-a").returncode == 0 and starts(log) == 0


@pytest.mark.parametrize("rel", [
    f"{MEM}/api/journal/2026-01-02-a.md",      # a journal entry
    f"{MEM}/api/feedback_testing.md",          # a native memory file beside MEMORY.md
    f"{MEM}/api/MEMORY.md",
    ".claude/journal-mem.toml",                # the config moves the memory root
    "other/place/topics/t.md",                 # memory's shape under another root
    "docs/MEMORY.md",
    "src/naïve.py",                            # git quotes the name: judged, not guessed
])
def test_anything_shaped_like_memory_reaches_the_guard(wt: tuple[Path, Path], rel: str) -> None:
    tree, log = wt
    code, err = staged_commit(tree, rel, lesson() if rel.endswith(".md") else "x = 1\n")
    assert starts(log) == 1, (rel, err)
    if rel.startswith(f"{MEM}/api/journal/"):
        assert code != 0 and "refused" in err  # and the guard judged it as before


@pytest.mark.parametrize("name", ["JMEM_DISABLE", "JMEM_MEMORY_ROOT", "JMEM_HOOKS_GUARD"])
def test_a_jmem_setting_in_the_environment_reaches_the_guard(wt: tuple[Path, Path],
                                                            name: str) -> None:
    tree, log = wt
    value = {"JMEM_DISABLE": "1", "JMEM_MEMORY_ROOT": "mem", "JMEM_HOOKS_GUARD": "true"}[name]
    code, err = staged_commit(tree, "src/app.py", **{name: value})
    assert starts(log) == 1 and code == 0, err


def test_a_config_that_moves_the_memory_root_sends_every_commit_to_the_guard(
        wt: tuple[Path, Path]) -> None:
    tree, log = wt
    put(tree, ".claude/journal-mem.toml", '# moved\n"memory_root" = "notes/memory"\n')
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "--no-verify", "-m", "move the root")
    code, err = staged_commit(tree, "notes/memory/api/some_fact.md", lesson())
    assert starts(log) == 1, err  # would be missed by the shim's default pattern alone
    assert code != 0 and "refused" in err, err


@pytest.mark.parametrize("config", ["[hooks]\nguard = false\n", "hooks.guard = false\n",
                                    "hooks = { guard = false }\n"])
def test_a_config_that_switches_the_guard_off_is_read_by_the_guard(
        wt: tuple[Path, Path], config: str) -> None:
    tree, log = wt
    put(tree, ".claude/journal-mem.toml", config)
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "--no-verify", "-m", "guard off")
    code, err = staged_commit(tree, "src/app.py")
    assert starts(log) == 1 and code == 0 and "off (hooks.guard = false)" in err, err


def test_the_pattern_says_yes_wherever_the_guard_would() -> None:
    """The shim's grep pattern against `might_be_memory`, on paths of every shape."""
    import re

    pattern = re.compile(memory_pattern())
    root = ".claude/agent-memory"
    paths = [".claude", ".claude/agent-memory", ".claude/agent-memory/api/x.md",
             ".claude/agent-memoryx/a", ".claude/journal-mem.toml", ".claude/settings.json",
             "a/journal/b.md", "journal.md", "x/topics/y", "topics", "MEMORY.md",
             "a/MEMORY.md.bak", "distill-state.json", "src/app.py", "Makefile"]
    for path in paths:
        assert bool(pattern.search(path)) == might_be_memory(path, root), path
