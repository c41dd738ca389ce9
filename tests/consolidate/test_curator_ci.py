"""`jmem init --ci github --ci-curator`: a scheduled job runs the curator and opens a pull
request; it never pushes to the memory branch. Linted by the real actionlint."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from helpers import jmem, make_repo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "setup"))
from test_ci import INIT_CI, WORKFLOW, actionlint

INSTALL = ("--ci-install", "pip install journal-mem==0.1.0")


def test_the_curate_job_opens_a_pull_request_and_never_pushes_the_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    proc = jmem(repo, *INIT_CI, *INSTALL, "--ci-curator")
    assert proc.returncode == 0, proc.stderr
    assert "curate job runs `jmem consolidate --propose`" in proc.stdout
    flow = yaml.safe_load((repo / WORKFLOW).read_text())
    assert sorted(flow["jobs"]) == ["curate", "distill", "snapshot"]
    job = flow["jobs"]["curate"]
    assert job["needs"] == "distill" and "schedule" in job["if"]
    assert job["permissions"] == {"contents": "write", "pull-requests": "write"}
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "jmem consolidate --propose" in runs and 'gh pr create --base "$MEMORY_BRANCH"' in runs
    # values reach the scripts as YAML strings in the job's env, never pasted into shell
    assert job["env"] == {"MEMORY_BRANCH": "main",
                          "CURATOR_JOURNAL": ".claude/agent-memory/curator/journal"}
    pushes = [line.strip() for line in runs.splitlines() if "git push" in line]
    assert pushes == ['git push origin "HEAD:refs/heads/$topic"']  # a topic branch only
    assert 'topic="jmem-curator/$RUN_ID"' in runs
    lint = actionlint(repo / WORKFLOW)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_no_curate_job_unless_asked_and_never_without_ci(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    assert jmem(repo, *INIT_CI, *INSTALL).returncode == 0
    assert "curate" not in yaml.safe_load((repo / WORKFLOW).read_text())["jobs"]
    other = make_repo(tmp_path / "other")
    proc = jmem(other, "init", "--no-git-hooks", "--no-claude", "--ci-curator")
    assert proc.returncode == 2 and "give --ci github" in proc.stderr
