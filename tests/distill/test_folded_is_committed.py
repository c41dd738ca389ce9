"""An agent writes lessons into the main checkout while distills run one after another:
every entry a distill commit's `distill-state.json` names as folded is in that commit's
tree (a clone never sees a state naming a file it lacks), and at the end every lesson
is folded and committed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from distill_helpers import MEM, lesson
from helpers import base_env, git, jmem

from journal_mem import repo as repo_module
from journal_mem.distill import distiller
from journal_mem.gitops import indexlock
from journal_mem.journal import forked, reader

WRITES = 30
WRITER = """
import subprocess, sys
for i in range(int(sys.argv[1])):
    subprocess.run([sys.executable, "-m", "journal_mem", "write", "--agent", "web",
                    "--topic", "race", "--title", f"Lesson {i} written during distills",
                    "--key", f"race-{i}"], check=True, capture_output=True)
"""


def _folded_but_not_in_tree(main: Path, commit: str) -> list[str]:
    state = json.loads(git(main, "show", f"{commit}:{MEM}/distill-state.json").stdout)
    tree = set(git(main, "ls-tree", "-r", "--name-only", commit, "--", MEM).stdout.split())
    return [rel for rel in state["folded"] if f"{MEM}/{rel}" not in tree]


@pytest.mark.parametrize("large", [False, True], ids=["listed-in-place", "listed-in-a-child"])
def test_lessons_written_during_distills_are_committed_by_the_distill_that_folds_them(
        repo: Path, monkeypatch: pytest.MonkeyPatch, large: bool) -> None:
    monkeypatch.setattr(indexlock, "QUIET_S", 0.0)
    if large:  # the listing forked at the distill's start, caught up at the read
        monkeypatch.setattr(reader, "STAT_FORK_BYTES", 0)
        monkeypatch.setattr(forked, "children", lambda: 1)
    lesson(repo, "api", "seed", 1)
    ctx = repo_module.open_context(str(repo))
    assert distiller.distill(ctx, distiller.Options()).status == "distilled"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(WRITES)], cwd=repo,
                              env=base_env(), stderr=subprocess.PIPE)
    commits: list[str] = []
    try:
        while writer.poll() is None:
            out = distiller.distill(repo_module.open_context(str(repo)), distiller.Options())
            if out.commit:
                commits.append(out.commit)
    finally:
        _, err = writer.communicate()
    assert writer.returncode == 0, err
    out = distiller.distill(repo_module.open_context(str(repo)), distiller.Options())
    commits += [out.commit] if out.commit else []
    assert len(commits) >= 3  # distills did run while the lessons came in
    for commit in commits:
        assert _folded_but_not_in_tree(repo, commit) == [], commit
    folded = json.loads((repo / MEM / "distill-state.json").read_text())["folded"]
    assert sum(rel.startswith("web/journal/") for rel in folded) == WRITES
    assert git(repo, "status", "--porcelain", "--", MEM).stdout == ""
    check = jmem(repo, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert os.listdir(repo / MEM / "web" / "journal")
