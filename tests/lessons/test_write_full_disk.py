"""`jmem write` when the disk is full: a clear refusal (exit 1), nothing partial left.

Two ways to run out of room, each for real: a small tmpfs mounted in a
private mount namespace (`unshare -rm`; skipped where user namespaces are
not allowed) and filled up, which gives the true ENOSPC; and a child process
whose RLIMIT_FSIZE is below the entry's size, which makes every write past
the limit fail with EFBIG (a file size limit, not a full disk, but the same
path through the code: the write fails midway through the entry).
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT, base_env, jmem, journal_files

WRITE = ["write", "--agent", "api", "--topic", "testing", "--title", "A lesson that does not fit",
         "--body", "x" * 2000]


def _no_temp_files(main: Path) -> bool:
    folder = main / ".claude" / "agent-memory" / "api" / "journal"
    return not [p for p in folder.iterdir() if p.name != ".gitkeep"]


def test_file_size_limit(repo: Path) -> None:
    assert jmem(repo, "status").returncode == 0  # the config snapshot is cached: reads only

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    proc = subprocess.run([sys.executable, "-m", "journal_mem", *WRITE], cwd=repo,
                          env=base_env(), capture_output=True, text=True, preexec_fn=limit,
                          check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no room to write the lesson" in proc.stderr and "nothing written" in proc.stderr
    assert "Traceback" not in proc.stderr and "unexpected error" not in proc.stderr
    assert journal_files(repo, "api") == [] and _no_temp_files(repo)
    outbox = repo / ".git" / "journal-mem" / "outbox" / "api"
    assert not outbox.exists() or list(outbox.iterdir()) == []


SCRIPT = r"""
set -e
mount -t tmpfs -o size=256k tmpfs "$DISK"
cd "$DISK"
git init -q -b main repo
cd repo
"$PY" -m journal_mem init --agent api --no-claude --no-git-hooks >/dev/null
"$PY" -m journal_mem status >/dev/null
dd if=/dev/zero of="$DISK/filler" bs=4k 2>/dev/null || true
set +e
"$PY" -m journal_mem "$@" 2>"$DISK/../stderr"
echo "exit=$?"
ls -A .claude/agent-memory/api/journal .git/journal-mem/outbox/api 2>/dev/null
"""


def test_full_tmpfs(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no unshare")
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("user namespaces are not allowed here")
    disk = tmp_path / "disk"
    disk.mkdir()
    env = base_env(DISK=str(disk), PY=sys.executable, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", SCRIPT, "sh", *WRITE], env=env,
                          capture_output=True, text=True, check=False)
    stderr = (tmp_path / "stderr").read_text()
    assert "exit=1" in proc.stdout, proc.stdout + proc.stderr + stderr
    assert "no room to write the lesson (No space left on device" in stderr, stderr
    assert "Traceback" not in stderr and "unexpected error" not in stderr
    listed = proc.stdout.split("exit=1", 1)[1].split()
    assert [name for name in listed if name.endswith(".md") or name.startswith(".tmp")] == []
