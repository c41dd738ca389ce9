"""Golden files for what a user reads: a guard refusal, a distill report (text and
`--json`), a wake-up pack, a Claude Code hook answer, and `jmem status`.

Each test builds a real repository, runs the real program (`jmem` as a child
process, or `git commit` running the hooks `jmem init` installed) and compares
a transcript of the run (command, exit code, stdout, stderr) with
`tests/expected/<name>.txt`, byte for byte after `normalise`. A mismatch fails
with a unified diff. `JMEM_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py`
rewrites the files instead (each test then reports itself skipped, naming the
file it wrote): read the diff in git before committing it.

Determinism: entries carry a fixed `created`, distills run with `--date`,
commits get fixed author and committer dates, and the environment is the one
`helpers.base_env` gives (no JMEM_* or GIT_* locals) with HOME, XDG_CONFIG_HOME,
PATH, the locale and the Claude Code variables pinned too. So dates are not
normalised: they are fixed. Only the tests' temp paths, commit ids and the random
suffix of journal file names vary from run to run.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from guardkit import MEM, put
from helpers import REPO_ROOT, add_worktree, git, jmem

# Read at import: the autouse `_isolated_env` fixture drops every JMEM_* variable.
REGEN = os.environ.get("JMEM_REGEN_GOLDEN", "") == "1"
EXPECTED = REPO_ROOT / "tests" / "expected"
CLOCK = "2024-03-01T12:00:00+00:00"  # every commit's author and committer date

_HEX = re.compile(r"\b[0-9a-f]{7,40}\b")
# A journal or outbox file name: `<YYYY-MM-DD>-<slug>-<10 random hex digits>.md`.
_SUFFIX = re.compile(r"(\b\d{4}-\d{2}-\d{2}-[^\s/\"]*)-[0-9a-f]{10}(\.md)\b")


def normalise(text: str, paths: dict[str, str], commits: list[str]) -> str:
    """The text with what varies between runs replaced by placeholders, and nothing else.

    1. paths: each key of `paths` (a temp folder, as given and as its realpath)
       becomes its value (`<repo>`, `<worktree>`, `<tmp>`), longest first;
    2. commit ids: a run of 7 to 40 hex digits that begins one of `commits`
       (the repository's real commits, full length) becomes `<commit>`; other
       hex (key hashes such as `run-api-734c`) is left alone;
    3. random suffixes: the 10 hex digits that end a journal file name
       (`2024-03-02-run-the-tests-<suffix>.md`) become `<suffix>`.
    """
    for raw in sorted(paths, key=len, reverse=True):
        text = text.replace(raw, paths[raw])
    text = _HEX.sub(lambda m: "<commit>" if any(c.startswith(m.group(0)) for c in commits)
                    else m.group(0), text)
    return _SUFFIX.sub(r"\1-<suffix>\2", text)


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/expected/NAME.txt; with JMEM_REGEN_GOLDEN=1, rewrite it."""
    path = EXPECTED / f"{name}.txt"
    old = path.read_bytes().decode("utf-8") if path.exists() else None
    if REGEN:
        if old != actual:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(actual.encode("utf-8"))
        pytest.skip(f"JMEM_REGEN_GOLDEN=1: {'rewrote' if old != actual else 'unchanged'} "
                    f"{path.relative_to(REPO_ROOT)}")
    if old is None:
        pytest.fail(f"{path.relative_to(REPO_ROOT)} does not exist; write it with "
                    "JMEM_REGEN_GOLDEN=1", pytrace=False)
    if old != actual:
        diff = difflib.unified_diff(old.splitlines(keepends=True),
                                    actual.splitlines(keepends=True),
                                    f"expected/{name}.txt", "actual", n=2)
        pytest.fail("".join(diff) + "\n(the output changed: if on purpose, rerun with "
                    "JMEM_REGEN_GOLDEN=1 and commit the new file)", pytrace=False)


# --- the team's repository ------------------------------------------------------------


@dataclass
class Team:
    """A repository set up with `jmem init` (git hooks, Claude Code hooks), with lessons."""

    main: Path
    tmp: Path
    keys: dict[str, str] = field(default_factory=dict)
    wt: Path | None = None

    def write(self, name: str, agent: str, created: str, topic: str, title: str, body: str,
              extra: str = "", *, cwd: Path | None = None, flags: tuple[str, ...] = ()) -> str:
        """`jmem write --from-file` of an entry with a fixed `created`; returns its key."""
        src = self.tmp / "drafts" / f"{name}.md"
        put(src.parent, src.name, f"---\nagent: {agent}\ncreated: {created}\ntopic: {topic}\n"
                                  f"{extra}---\n\n# {title}\n\n{body}\n")
        proc = jmem(cwd or self.main, "write", "--json", "--from-file", str(src), *flags)
        assert proc.returncode == 0, proc.stderr
        self.keys[name] = json.loads(proc.stdout)["key"]
        return self.keys[name]

    def worktree(self) -> Path:
        self.wt = add_worktree(self.main, self.tmp / "wt")
        return self.wt

    def transcript(self, argv: list[str], cwd: Path, stdin: str | None = None) -> str:
        """Run `jmem ARGV` (or `git …` when argv starts with git) in `cwd`; the normalised
        record of the run: where, the command, its stdin, exit code, stdout and stderr."""
        if argv[0] == "git":
            proc, shown = git(cwd, *argv[1:], check=False), argv
        else:
            proc, shown = jmem(cwd, *argv, stdin=stdin), ["jmem", *argv]
        text = (f"{cwd}$ {shlex.join(shown)}\n"
                + (f"[stdin]\n{stdin}\n" if stdin is not None else "")
                + f"[exit {proc.returncode}]\n[stdout]\n{proc.stdout}[stderr]\n{proc.stderr}")
        return normalise(text, self.placeholders(), self.commits())

    def placeholders(self) -> dict[str, str]:
        named = {self.main: "<repo>", self.tmp: "<tmp>"}
        if self.wt is not None:
            named[self.wt] = "<worktree>"
        out = {}
        for path, label in named.items():
            out[str(path)] = out[os.path.realpath(path)] = label
        return out

    def commits(self) -> list[str]:
        return git(self.main, "rev-list", "--all").stdout.split()


@pytest.fixture(autouse=True)
def _pinned_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What else a child process could read from this machine, pinned (the conftest's
    `_isolated_env` has dropped JMEM_* and the GIT_* locals)."""
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    # `jmem` on PATH (status warns without it): this interpreter running this checkout
    put(bin_dir, "jmem", f'#!/bin/sh\nexec "{sys.executable}" -m journal_mem "$@"\n').chmod(0o755)
    for name in list(os.environ):
        if name.startswith("CLAUDE"):  # a test run inside a Claude Code session
            monkeypatch.delenv(name)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("HOME", str(home))  # no ~/.gitconfig, no ~/.claude
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setenv("PYTHONUTF8", "1")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("GIT_AUTHOR_DATE", CLOCK)
    monkeypatch.setenv("GIT_COMMITTER_DATE", CLOCK)


@pytest.fixture
def team(repo: Path, tmp_path: Path) -> Team:
    """`repo` (agents api and web) with jmem's git hooks and Claude Code hooks committed,
    three lessons distilled as of 2024-03-05, then a correction and a retraction pending."""
    assert jmem(repo, "init").returncode == 0  # the git hooks and .claude/settings.json
    # committed without hooks: a post-commit would start a background distill
    git(repo, "-c", "core.hooksPath=/dev/null", "add", "-A")
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "install the hooks")
    t = Team(repo, tmp_path)
    t.write("tests", "api", "2024-03-02T09:00:00+00:00", "testing",
            "Run the API tests with -p no:randomly", "They share one database fixture.")
    t.write("deploy", "api", "2024-03-02T10:00:00+00:00", "deploy",
            "Deploy only from the release branch", "CI pushes tags from there.")
    t.write("make", "web", "2024-03-03T11:00:00+00:00", "build", "Use make -j2 on the CI box",
            "It has two cores.", "applies_to: [all]\n")
    proc = jmem(repo, "distill", "--date", "2024-03-05")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t.write("one-process", "api", "2024-03-06T09:00:00+00:00", "testing",
            "Run the API tests in one process",
            "The database fixture is not safe across pytest-xdist workers.",
            f"supersedes: [{t.keys['tests']}]\n")
    t.write("from-main", "api", "2024-03-06T10:00:00+00:00", "deploy",
            "Deploys happen from main now", "The release branch is gone.",
            f"retracts: [{t.keys['deploy']}]\n")
    return t


@pytest.fixture
def later(team: Team) -> Team:
    """`team` after its second distill (2024-03-07), with one lesson pending in the
    journal, one in the outbox, and a linked worktree made after the distill."""
    proc = jmem(team.main, "distill", "--date", "2024-03-07")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wt = team.worktree()
    team.write("seed", "api", "2024-03-08T09:00:00+00:00", "testing",
               "The flaky cart test needs a fixed seed", "Seed 42 reproduces the failure.",
               cwd=wt)
    team.write("outbox", "web", "2024-03-08T10:00:00+00:00", "build",
               "Cache the node modules between CI runs", "A cold install takes four minutes.",
               cwd=wt, flags=("--outbox",))
    return team


# --- the golden files -------------------------------------------------------------------


def test_guard_refusal_of_a_memory_edit_in_a_worktree(team: Team) -> None:
    wt = team.worktree()
    memory = f"{MEM}/api/MEMORY.md"
    put(wt, memory, (wt / memory).read_text() + "- Use the staging database [hand-edit]\n")
    git(wt, "add", memory)
    text = team.transcript(["git", "commit", "-m", "Note the staging database"], wt)
    assert "[exit 1]" in text
    check_golden("guard_refusal_worktree", text)


def test_distill_report(team: Team) -> None:
    text = team.transcript(["distill", "--date", "2024-03-07"], team.main)
    check_golden("distill_report", text)


def test_distill_report_json(team: Team) -> None:
    text = team.transcript(["distill", "--date", "2024-03-07", "--json"], team.main)
    body = text.split("[stdout]\n", 1)[1].split("[stderr]\n", 1)[0]
    assert json.loads(body)["status"]  # still one JSON document after normalising
    check_golden("distill_report_json", text)


def test_wake_pack_from_a_worktree(later: Team) -> None:
    assert later.wt is not None
    check_golden("wake_pack", later.transcript(["wake", "--agent", "api"], later.wt))


def test_claude_hook_answer_at_session_start(later: Team) -> None:
    assert later.wt is not None
    stdin = json.dumps({"session_id": "golden-session", "cwd": str(later.wt),
                        "hook_event_name": "SessionStart", "source": "startup"})
    text = later.transcript(["wake", "--hook", "claude", "--agent", "api"], later.wt,
                            stdin=stdin)
    body = text.split("[stdout]\n", 1)[1].split("[stderr]\n", 1)[0]
    assert json.loads(body)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    check_golden("wake_hook_claude_session_start", text)


def test_status_from_a_worktree(later: Team) -> None:
    assert later.wt is not None
    check_golden("status_worktree", later.transcript(["status"], later.wt))


# --- the normaliser -----------------------------------------------------------------------


def test_normalise_replaces_only_what_varies() -> None:
    sha = "066400c6282a" + "0" * 28
    text = ("committed 066400c6282a at /tmp/x/main/.claude (commit 066400c 2024-03-01)\n"
            "- Run it [run-api-734c] (api/journal/2024-03-08-run-it-a2784e4df5.md)\n"
            "deadbeef1234 is no commit\n")
    got = normalise(text, {"/tmp/x/main": "<repo>", "/tmp/x": "<tmp>"}, [sha])
    assert got == ("committed <commit> at <repo>/.claude (commit <commit> 2024-03-01)\n"
                   "- Run it [run-api-734c] (api/journal/2024-03-08-run-it-<suffix>.md)\n"
                   "deadbeef1234 is no commit\n")
