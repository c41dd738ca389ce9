"""`jmem init --ci github`: the workflow that makes CI the fleet's single distiller."""

from __future__ import annotations

from pathlib import Path

import yaml
from helpers import jmem

WORKFLOW = ".github/workflows/journal-mem.yml"


def test_init_ci_writes_one_job_in_one_concurrency_group(repo: Path) -> None:
    proc = jmem(repo, "init", "--no-git-hooks", "--no-claude", "--ci", "github")
    assert proc.returncode == 0, proc.stderr
    assert f"created {WORKFLOW}" in proc.stdout
    flow = yaml.safe_load((repo / WORKFLOW).read_text())
    on = flow[True]  # YAML 1.1 reads the key `on` as true; GitHub reads it as "on"
    assert on["push"]["branches"] == ["main"]
    assert on["push"]["paths"] == [".claude/agent-memory/*/journal/**"]
    assert on["schedule"][0]["cron"]
    assert flow["concurrency"] == {"group": "journal-mem-distill", "cancel-in-progress": False}
    assert flow["permissions"] == {"contents": "write"}
    job = flow["jobs"]["distill"]
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "pip install journal-mem" in runs
    assert runs.index("jmem check") < runs.index("jmem distill --push")


def test_init_ci_keeps_a_daily_snapshot_as_an_artifact(repo: Path) -> None:
    proc = jmem(repo, "init", "--no-git-hooks", "--no-claude", "--ci", "github",
                "--ci-install", "pip install journal-mem==0.1.0")
    assert proc.returncode == 0, proc.stderr
    flow = yaml.safe_load((repo / WORKFLOW).read_text())
    assert sorted(flow["jobs"]) == ["distill", "snapshot"]
    job = flow["jobs"]["snapshot"]
    assert job["needs"] == "distill" and "schedule" in job["if"]
    assert job["permissions"] == {"contents": "read"}  # a snapshot never pushes
    steps = job["steps"]
    runs = "\n".join(step.get("run", "") for step in steps)
    assert "pip install journal-mem==0.1.0" in runs
    assert "jmem export --json memory-snapshot.json" in runs
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "memory-snapshot.json"


def test_install_line_is_configurable_and_the_file_is_never_rewritten(repo: Path) -> None:
    args = ("init", "--no-git-hooks", "--no-claude", "--ci", "github")
    jmem(repo, *args, "--ci-install", "pipx install journal-mem==0.1.0")
    text = (repo / WORKFLOW).read_text()
    assert "run: pipx install journal-mem==0.1.0" in text
    (repo / WORKFLOW).write_text(text + "# ours\n")
    proc = jmem(repo, *args)
    assert proc.returncode == 0
    assert f"kept the existing {WORKFLOW}" in proc.stderr
    assert (repo / WORKFLOW).read_text().endswith("# ours\n")


def test_unknown_ci_provider_is_a_usage_error(repo: Path) -> None:
    proc = jmem(repo, "init", "--ci", "gitlab")
    assert proc.returncode == 2
    assert not (repo / ".github").exists()
