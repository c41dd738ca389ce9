"""`gitcore.spawn_run`: git started by posix_spawn, for the hot paths that must not
import `subprocess` (`write`'s `check-ignore`), against `gitcore.run`, which uses it."""

from __future__ import annotations

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
    got = gitcore.spawn_run(args, str(root), stdin)
    want = gitcore.run(args, str(root), clean=True, check=False, stdin=stdin)
    assert (got.returncode, got.stdout, got.stderr) == (
        want.returncode, want.stdout, want.stderr), args
    return got


def test_it_answers_as_run_does(repo: Path) -> None:
    """Output, errors and exit codes, and what is given on stdin, as `run` has them."""
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
    got = gitcore.spawn_run(["-c", alias, "noisy"], str(repo))
    assert got.returncode == 0
    assert got.stdout == (b"o" * 199 + b"\n") * 2000
    assert got.stderr == (b"e" * 199 + b"\n") * 2000


def test_a_large_stdin_goes_through_run(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `SMALL_STDIN` (written whole before any output is read), `run` gives it."""
    paths = b"".join(f"dir/file-{n}.md\0".encode() for n in range(2000))
    assert len(paths) > gitcore.SMALL_STDIN
    calls: list[list[str]] = []
    real = gitcore.run
    monkeypatch.setattr(gitcore, "run", lambda args, *a, **k: calls.append(args) or real(
        args, *a, **k))
    (repo / ".gitignore").write_text("dir/file-7.md\n")
    got = gitcore.spawn_run(["check-ignore", "--no-index", "-v", "-z", "--stdin"], str(repo),
                            paths)
    assert calls and got.stdout == b".gitignore\x001\x00dir/file-7.md\x00dir/file-7.md\x00"
    calls.clear()
    gitcore.spawn_run(["check-ignore", "--no-index", "-v", "-z", "--stdin"], str(repo),
                      b"dir/file-7.md\0")
    assert not calls
