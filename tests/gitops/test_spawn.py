"""`gitcore.run`: git started by posix_spawn, so that a command running git one call at a
time never imports `subprocess`, answering as `gitcore.run_all` (through `subprocess`)
does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import git

from journal_mem.gitops import gitcore


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def _same(root: Path, args: list[str], stdin: bytes = b"") -> gitcore.GitResult:
    got = gitcore.run(args, str(root), clean=True, check=False, stdin=stdin)
    want = gitcore.run_all([args], str(root), clean=True, stdin=stdin)[0]
    assert (got.returncode, got.stdout, got.stderr) == (
        want.returncode, want.stdout, want.stderr), args
    return got


def test_it_answers_as_run_all_does(repo: Path) -> None:
    """Output, errors and exit codes, and what is given on stdin, as `subprocess` has them."""
    blob = _same(repo, ["hash-object", "-w", "--stdin"], b"a lesson\n").stdout.strip()
    assert _same(repo, ["cat-file", "-p", blob.decode()]).stdout == b"a lesson\n"
    failed = _same(repo, ["rev-parse", "--verify", "no-such-commit"])
    assert failed.returncode == 128 and failed.stderr.startswith(b"fatal: ")
    (repo / ".gitignore").write_text("*.log\n")
    ignored = _same(repo, ["check-ignore", "--no-index", "-v", "-z", "--stdin"],
                    b"a.log\0b.md\0")
    assert ignored.returncode == 0 and ignored.stdout == b".gitignore\x001\x00*.log\x00a.log\x00"
    assert _same(repo, ["check-ignore", "--no-index", "-v", "-z", "--stdin"],
                 b"b.md\0").returncode == 1
    (repo / "sub").mkdir()
    assert _same(repo / "sub", ["rev-parse", "--show-prefix"]).stdout == b"sub/\n"


def test_a_checkout_it_cannot_enter_raises_as_subprocess_does(repo: Path) -> None:
    for where, error in ((repo / "gone", FileNotFoundError), (repo / ".git" / "HEAD",
                                                               NotADirectoryError)):
        with pytest.raises(error) as spawned:
            gitcore.run(["status"], str(where))
        with pytest.raises(error) as started:
            gitcore.run_all([["status"]], str(where))
        assert spawned.value.filename == started.value.filename == str(where)


def test_without_stdin_git_reads_ours(repo: Path, tmp_path: Path) -> None:
    """`stdin` None: git reads this process's stdin, as `subprocess` gives it (checked in a
    child whose stdin is a file)."""
    given = tmp_path / "given"
    given.write_bytes(b"from our stdin\n")
    code = ("import sys\nfrom journal_mem.gitops import gitcore\n"
            "res = gitcore.run(['hash-object', '--stdin'], sys.argv[1])\n"
            "sys.stdout.write(res.stdout.decode())\n")
    with given.open("rb") as fh:
        out = subprocess.run([sys.executable, "-c", code, str(repo)], stdin=fh,
                             capture_output=True, check=True).stdout
    want = gitcore.run(["hash-object", "--stdin"], str(repo), stdin=b"from our stdin\n")
    assert out == want.stdout


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_git_and_its_hooks_get_sigpipe_as_usual(repo: Path) -> None:
    """Python ignores SIGPIPE; `subprocess` sets it back to its default in a child, for a
    hook's `producer | head` to end as it would in a shell. So does `run`: of signals 1-31,
    a process git starts ignores those `subprocess` leaves it. (glibc's posix_spawn leaves
    its own two, 32 and 33, ignored: a glibc program's start sets them again.)"""
    args = ["-c", "alias.ignored=!grep SigIgn /proc/self/status", "ignored"]
    spawned = gitcore.run(args, str(repo)).stdout
    started = gitcore.run_all([args], str(repo))[0].stdout
    standard = (1 << 31) - 1
    mask = int(spawned.split()[-1], 16) & standard
    assert mask == int(started.split()[-1], 16) & standard, (spawned, started)
    assert not mask & (1 << (13 - 1)), spawned  # SIGPIPE is 13 on Linux


def test_it_reads_both_outputs_as_they_come(repo: Path) -> None:
    """A git whose stdout and stderr both pass a pipe's 64 KiB, written in turns (a shell
    alias): read one after the other, git would block on the one not read."""
    # the writer ends itself after 30 s: a reader that blocks fails the test, never hangs it
    writer = ("import signal, sys\nsignal.alarm(30)\nfor i in range(2000):\n"
              "    sys.stdout.write('o' * 199 + '\\n'); sys.stdout.flush()\n"
              "    sys.stderr.write('e' * 199 + '\\n'); sys.stderr.flush()\n")
    script = repo / "noisy.py"
    script.write_text(writer)
    alias = f"alias.noisy=!{sys.executable} {script}"
    got = gitcore.run(["-c", alias, "noisy"], str(repo))
    assert got.returncode == 0
    assert got.stdout == (b"o" * 199 + b"\n") * 2000
    assert got.stderr == (b"e" * 199 + b"\n") * 2000


def test_a_large_stdin_goes_through_run_all(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                            ) -> None:
    """Past `SMALL_STDIN` (written whole before any output is read), `run_all` gives it."""
    paths = b"".join(f"dir/file-{n}.md\0".encode() for n in range(2000))
    assert len(paths) > gitcore.SMALL_STDIN
    calls: list[list[list[str]]] = []
    real = gitcore.run_all
    monkeypatch.setattr(gitcore, "run_all", lambda lists, *a, **k: calls.append(lists) or real(
        lists, *a, **k))
    (repo / ".gitignore").write_text("dir/file-7.md\n")
    args = ["check-ignore", "--no-index", "-v", "-z", "--stdin"]
    got = gitcore.run(args, str(repo), check=False, stdin=paths)
    assert calls and got.stdout == b".gitignore\x001\x00dir/file-7.md\x00dir/file-7.md\x00"
    calls.clear()
    gitcore.run(args, str(repo), check=False, stdin=b"dir/file-7.md\0")
    assert not calls


def test_a_command_of_one_git_call_at_a_time_imports_no_subprocess(repo: Path) -> None:
    code = ("import sys\nfrom journal_mem.gitops import gitcore\n"
            "gitcore.run(['rev-parse', '--git-dir'], sys.argv[1])\n"
            "gitcore.run(['status', '--porcelain'], sys.argv[1], stdin=b'')\n"
            "print('subprocess' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    out = subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True,
                         text=True, check=True, env=env).stdout
    assert out == "False\n"
