"""`jmem distill` reaches the fold without click (`distill/command.py`): the same
options, read from the one declaration click builds the command from, the same report
and exit code; what it does not read goes to click."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from distill_helpers import head, lesson, snapshot
from helpers import base_env, jmem

# main() in a child, then which click modules it loaded (a module click imports first)
PROBE = ("import sys\nfrom journal_mem.main import main\ncode = main(sys.argv[1:])\n"
         "print('click loaded' if 'click.core' in sys.modules else 'no click')\n")


def _probe(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROBE, *args], cwd=repo, env=base_env(),
                          capture_output=True, text=True, check=False)


def test_a_distill_without_click_reports_what_the_click_command_reports(repo: Path) -> None:
    lesson(repo, "api", "run-tests-serially", title="Run the API tests serially")
    lesson(repo, "web", "use-node-20", title="Use node 20", applies_to=("all",),
           type="principle", confidence=1.0)
    (repo / ".claude" / "agent-memory" / "api" / "journal" / "2026-05-02-bad.md").write_text(
        "---\nagent: api\n---\nno title\n")  # an invalid entry: exit 1, its lines on stderr
    for args in (["--dry-run"], ["--dry-run", "--json"], ["--check"], ["--check", "--json"]):
        fast = jmem(repo, "distill", *args)
        slow = jmem(repo, "-C", str(repo), "distill", *args)  # -C: through click
        assert (fast.returncode, fast.stdout, fast.stderr) == (
            slow.returncode, slow.stdout, slow.stderr), args
        assert fast.returncode == 1 and "bad.md" in fast.stdout + fast.stderr
    before = head(repo)
    done = _probe(repo, "distill", "--json")
    assert done.returncode == 0 and done.stdout.rstrip().endswith("no click"), done.stderr
    assert '"status": "distilled"' in done.stdout and head(repo) != before
    again = jmem(repo, "-C", str(repo), "distill", "--check")
    assert again.returncode == 1 and "bad.md" in again.stdout + again.stderr  # invalid only
    assert "would change" not in again.stdout + again.stderr


def test_what_the_declaration_does_not_hold_goes_to_click(repo: Path) -> None:
    lesson(repo, "api", "run-tests-serially", title="Run the API tests serially")
    before = snapshot(repo)
    dated = _probe(repo, "distill", "--dry-run", "--date", "2026-06-01")
    assert dated.returncode == 0 and dated.stdout.rstrip().endswith("click loaded")
    bad = jmem(repo, "distill", "--date", "June")
    assert bad.returncode == 2 and "--date: 'June' is not YYYY-MM-DD" in bad.stderr
    stray = jmem(repo, "distill", "now")
    assert stray.returncode == 2 and "unexpected extra argument" in stray.stderr.lower()
    shown = jmem(repo, "distill", "--help")
    assert shown.returncode == 0 and "--if-due" in shown.stdout and "--push" in shown.stdout
    assert snapshot(repo) == before  # a dry run, refusals and help write nothing
