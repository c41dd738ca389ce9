"""`jmem write` answers without click (`lessons.write.fast_main`) exactly as the click
command does: the same entries, exit codes, stdout and stderr, for every way of giving the
arguments; whatever it does not read itself goes to click."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from helpers import git, jmem

from journal_mem.journal.entry import Entry, parse
from journal_mem.lessons.write import parse_args

BASE = ["--agent", "api", "--topic", "testing"]
CASES: list[tuple[list[str], str | None]] = [
    ([*BASE, "--title", "Use the fixture", "--body", "Because."], None),
    ([*BASE, "--title=Equals form", "--body=Body.", "--tag", "a", "--tag=b", "--json"], None),
    ([*BASE, "--title", "Last one wins", "--title", "Second title", "--body", "x"], None),
    ([*BASE, "--title", "From stdin", "--importance", "high", "--confidence", "0.9"], "Piped."),
    ([*BASE, "--title", "Body file dash", "--body-file", "-", "--outbox"], "Dash body."),
    ([*BASE, "--title", "Corrects", "--supersedes", "use-the-fixture", "--retracts", "nope",
      "--applies-to", "web", "--ref", "src/app.py", "--source", "PR 7", "--key", "k-one"],
     None),
    ([*BASE, "--title", "Bad type", "--type", "opinion", "--body", "x"], None),
    ([*BASE, "--title", "Bad confidence", "--confidence", "-0.5", "--body", "x"], None),
    (["--agent", "api", "--title", "No topic", "--body", "x"], None),
    ([*BASE, "--title", "Both bodies", "--body", "x", "--body-file", "-"], "y"),
    ([*BASE, "--title", "Unknown option", "--colour", "red"], None),
    ([*BASE, "--title"], None),
    ([*BASE, "--title", "Secret", "--body", "password = hunter2hunter2"], None),
    (["--help"], None),
]


def team(root: Path) -> Path:
    git(root.parent, "init", "-q", "-b", "main", str(root))
    init = jmem(root, "init", "--agent", "api", "--agent", "web", "--no-git-hooks",
                "--no-claude")
    assert init.returncode == 0, init.stderr
    return root


def normal(text: str, root: Path) -> str:
    """Output with the checkout's path and the random part of entry names taken out."""
    text = text.replace(str(root.resolve()), "ROOT").replace(str(root), "ROOT")
    return re.sub(r"-[0-9a-f]{10}\.md", "-X.md", text)


def entries(root: Path) -> list[Entry]:
    found = sorted((root / ".claude").rglob("journal/*.md")) + sorted(
        (root / ".git" / "journal-mem" / "outbox").rglob("*.md"))
    epoch = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)  # the two runs' clocks differ
    return [parse(p.read_bytes()).replace(created=epoch, knew=()) for p in found]


def test_the_fast_path_and_click_agree(tmp_path: Path) -> None:
    fast, slow = team(tmp_path / "fast"), team(tmp_path / "slow")
    for args, stdin in CASES:
        a = jmem(fast, "write", *args, stdin=stdin)
        b = jmem(slow, "-C", str(slow), "write", *args, stdin=stdin)  # -C: through click
        assert a.returncode == b.returncode, (args, a.stderr, b.stderr)
        assert normal(a.stdout, fast) == normal(b.stdout, slow), args
        assert normal(a.stderr, fast) == normal(b.stderr, slow), args
    assert entries(fast) == entries(slow)
    assert len(entries(fast)) == 6


@pytest.mark.parametrize("args", [["--help"], ["--from-file", "e.md"], ["--colour", "x"],
                                  ["--title"], ["--title", "--body"], ["positional"],
                                  ["--body", "x", "--body-file", "-"], ["--json=yes"]])
def test_what_the_fast_path_leaves_to_click(args: list[str]) -> None:
    assert parse_args(args) is None


def test_a_write_started_without_stdin_files_its_lesson(repo: Path) -> None:
    """No stdin at all (a daemon, a closed descriptor): no body to read, the lesson filed;
    `--body-file -` then reads an empty body, not a crash."""
    import os
    import subprocess
    import sys

    from helpers import base_env

    for extra in ([], ["--body-file", "-"]):
        proc = subprocess.run(
            [sys.executable, "-m", "journal_mem", "write", "--agent", "api", "--topic", "t",
             "--title", f"Filed without stdin {len(extra)}", *extra], cwd=repo, env=base_env(),
            capture_output=True, text=True, preexec_fn=lambda: os.close(0))
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr and "unexpected" not in proc.stderr
    assert git(repo, "status", "--porcelain").stdout.count("journal/") == 2
