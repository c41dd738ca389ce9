"""The project uses itself: its own journal and distilled memory pass `jmem check`."""

from __future__ import annotations

import pytest
from helpers import REPO_ROOT, base_env, jmem


def test_own_memory_passes_check() -> None:
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout of journal-mem")
    proc = jmem(REPO_ROOT, "check", env=base_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (REPO_ROOT / ".claude" / "agent-memory" / "dev" / "MEMORY.md").is_file()
