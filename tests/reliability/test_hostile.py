"""Hostile inputs, each refused with a clear message through the real commands:
`write` (options and `--from-file`), the guard on a real `git commit`, `distill`, `check`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from guardkit import commit, head, install_hooks, lesson
from helpers import git, jmem, journal_files

pytestmark = pytest.mark.reliability
MEM = ".claude/agent-memory"
NAME = "2026-01-02-hostile.md"
TEN_MB = 10 * 1024 * 1024

PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"
SECRETS = {
    "private key block": (PRIVATE_KEY, "private key"),
    "AWS access key id": ("Use AKIAQYLPMN5HHHFPZAM2 for uploads.", "aws access key id"),
    "GitHub token": ("CI token ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5", "github token"),
    "Slack token": ("Webhook xoxb-2048-4096-" + "AbCdEfGhIjKl", "slack token"),
    "high-entropy assignment": ("api_key = 'q8Zr4TgW1xPv9LmK2sYb'", "secret assignment"),
}

# name: (entry bytes, a phrase every refusal of it contains)
ENTRIES: dict[str, tuple[bytes, str]] = {
    **{f"traversal in {field}": (lesson(extra=f"{field}: ../../../etc\n").encode(),
                                 "not a valid")
       for field in ("key", "supersedes", "retracts", "applies_to")},
    "traversal in agent": (lesson(agent="../../../etc").encode(), "not a valid name"),
    "traversal in topic": (lesson(topic="../../../etc").encode(), "not a valid name"),
    "traversal in refs": (lesson(extra="refs: [../../../etc/passwd]\n").encode(),
                          "relative to the repository top"),
    "YAML object tag": (lesson(extra="source: !!python/object/apply:os.system ['id']\n")
                        .encode(), "YAML tag"),
    "10 MB entry": (lesson(body="x" * TEN_MB).encode(), "limit"),
    "NUL byte": (lesson(body="before\0after").encode(), "NUL"),
    # CRLF is read as LF (a Windows checkout); a bare CR is still refused
    "bare CR line ends": (lesson().replace("\n", "\r").encode(), "bare CR"),
    "conflict markers": (lesson(body="<<<<<<< HEAD\nold\n=======\nnew\n>>>>>>> topic").encode(),
                         "conflict marker"),
    **{f"secret: {kind}": (lesson(body=text).encode(), phrase)
       for kind, (text, phrase) in SECRETS.items()},
}


@pytest.fixture
def main(repo: Path) -> Path:
    install_hooks(repo)
    return repo


def out(proc: object) -> str:
    return getattr(proc, "stdout", "") + getattr(proc, "stderr", "")


def journal_names(main: Path) -> set[str]:
    return {p.name for agent in ("api", "web") for p in journal_files(main, agent)}


@pytest.mark.parametrize("case", sorted(ENTRIES))
def test_hostile_entry_refused_everywhere(main: Path, tmp_path: Path, case: str,
                                          figure: Callable[[str, object], None]) -> None:
    data, phrase = ENTRIES[case]
    before_names, before_head = journal_names(main), head(main)

    source = tmp_path / NAME  # 1. jmem write --from-file: refused, nothing written
    source.write_bytes(data)
    proc = jmem(main, "write", "--from-file", str(source))
    assert proc.returncode == 1 and phrase in out(proc), out(proc)
    assert journal_names(main) == before_names

    placed = main / MEM / "api" / "journal" / NAME  # 2. the guard on a real commit
    placed.write_bytes(data)
    git(main, "add", "--", str(placed))
    proc = commit(main)
    assert proc.returncode != 0 and phrase in out(proc), out(proc)
    assert head(main) == before_head
    git(main, "reset", "-q")

    proc = jmem(main, "distill")  # 3. distill: reported, skipped, exit 1, not committed
    assert proc.returncode == 1 and phrase in out(proc), out(proc)
    assert NAME not in git(main, "ls-files", MEM).stdout
    state = main / MEM / "distill-state.json"
    assert not state.exists() or NAME not in state.read_text()

    git(main, "add", "--", str(placed))  # 4. bypassed with --no-verify: check catches it
    git(main, "commit", "-q", "--no-verify", "-m", "bypass")
    proc = jmem(main, "check")
    assert proc.returncode == 1 and phrase in out(proc) and NAME in out(proc), out(proc)
    figure(f"hostile entry: {case}", "refused by write --from-file, guard, distill, check")


NAME_OPTIONS = ["--agent", "--topic", "--key", "--supersedes", "--retracts", "--applies-to"]


@pytest.mark.parametrize("option", NAME_OPTIONS)
@pytest.mark.parametrize("value", ["../x", "../../../../tmp/evil", "a/b", ".."])
def test_traversal_in_every_name_option(main: Path, option: str, value: str) -> None:
    args = ["write", "--agent", "api", "--topic", "t", "--title", "A title", option, value]
    proc = jmem(main, *args)
    assert proc.returncode == 1, out(proc)
    assert "not a valid" in proc.stderr and option.lstrip("-").replace("-", "_") in proc.stderr
    assert journal_names(main) == set()
    assert not (main / MEM / "api" / "journal").parent.joinpath("..", "x").exists()


def test_traversal_in_wake_and_hook_agent(main: Path) -> None:
    proc = jmem(main, "wake", "--agent", "../../../etc")
    assert proc.returncode == 1 and "no memory for agent" in proc.stderr
    hook = jmem(main, "wake", "--hook", "claude", stdin='{"hook_event_name": "SubagentStart", '
                '"agent_type": "../../etc", "session_id": "s"}')
    assert (hook.returncode, hook.stdout) == (0, "")  # nothing reaches the model
    assert "no memory for agent '../../etc'" in hook.stderr


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_secret_in_write_body_is_refused(main: Path, kind: str) -> None:
    text, phrase = SECRETS[kind]
    proc = jmem(main, "write", "--agent", "api", "--topic", "t", "--title", "Where keys are",
                stdin=text)
    assert proc.returncode == 1 and phrase in proc.stderr, out(proc)
    assert journal_names(main) == set()


def test_10_mb_body_through_stdin_and_body_file(main: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("y" * TEN_MB)
    for args, stdin in ((["--body-file", str(big)], None), ([], "z" * TEN_MB)):
        proc = jmem(main, "write", "--agent", "api", "--topic", "t", "--title", "Big", *args,
                    stdin=stdin)
        assert proc.returncode == 1 and "over the 8192-byte limit" in proc.stderr, out(proc)
    assert journal_names(main) == set()


@pytest.mark.parametrize("where", ["agent", "journal", "topics"])
def test_symlinked_folder_pointing_outside(main: Path, tmp_path: Path, where: str,
                                           figure: Callable[[str, object], None]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    agent_dir = main / MEM / "evil"
    if where == "agent":
        link = agent_dir
    else:
        (agent_dir / "journal").mkdir(parents=True, exist_ok=True)
        link = agent_dir / where
        if link.exists():
            link.rmdir()
    os.symlink(outside, link)
    write = jmem(main, "write", "--agent", "evil", "--topic", "t", "--title", "Through a link")
    distill = jmem(main, "distill")
    check = jmem(main, "check")
    git(main, "add", "-A", MEM)
    guard = commit(main)
    assert list(outside.iterdir()) == [], "a file was written outside the repository"
    rel = f"{MEM}/evil" + ("" if where == "agent" else f"/{where}")
    if where != "topics":
        assert write.returncode == 1 and f"{rel} is a symlink" in write.stderr, out(write)
    assert distill.returncode == 1 and f"{rel}: a symlink" in distill.stderr, out(distill)
    assert check.returncode == 1 and f"{rel}: a symlink under the memory root" in check.stdout
    assert guard.returncode != 0 and "symlink" in out(guard), out(guard)
    figure(f"symlinked {where} folder pointing outside",
           "refused by write, distill, check, guard; nothing written outside")


def test_symlinked_entry_file(main: Path, tmp_path: Path) -> None:
    target = tmp_path / "outside.md"
    target.write_text(lesson())
    os.symlink(target, main / MEM / "api" / "journal" / NAME)
    distill = jmem(main, "distill")
    check = jmem(main, "check")
    git(main, "add", "-A", MEM)
    guard = commit(main)
    assert distill.returncode == 1 and "symlink" in out(distill)
    assert check.returncode == 1 and "symlink" in check.stdout
    assert guard.returncode != 0 and "symlink" in out(guard)
    assert target.read_text() == lesson()


def test_conflict_markers_in_distilled_file_are_caught_by_check(main: Path) -> None:
    jmem(main, "write", "--agent", "api", "--topic", "t", "--title", "A fact")
    assert jmem(main, "distill").returncode == 0
    memory = main / MEM / "api" / "MEMORY.md"
    memory.write_text(memory.read_text() + "<<<<<<< HEAD\n=======\n>>>>>>> other\n")
    git(main, "add", "-A")
    guard = commit(main)
    assert guard.returncode != 0 and "MEMORY.md" in out(guard)
    git(main, "commit", "-q", "--no-verify", "-m", "bypass")
    check = jmem(main, "check")
    assert check.returncode == 1 and "unresolved conflict markers" in check.stdout
