"""The real Codex CLI in a linked worktree runs journal-mem's hooks once its user
appends what `jmem codex-trust` printed there (Codex 0.171.0 looks for the records
of the main checkout's `.codex/hooks.json`, not the worktree's copy)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from codexcli import binary, user_config
from fakeopenai import FakeOpenAI
from helpers import add_worktree, base_env, git, jmem, make_repo
from hookshim import shim

PENDING = "Pending lesson seen from the worktree"


def test_codex_in_a_worktree_gets_its_pack(tmp_path: Path) -> None:
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    project = make_repo(tmp_path / "proj")
    home = tmp_path / "codex-home"
    home.mkdir()
    shim(tmp_path / "bin", tmp_path / "hook-times.txt")
    env = base_env(PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
                   HOME=str(tmp_path), CODEX_HOME=str(home), FAKE_OPENAI_KEY="sk-test-fake",
                   NO_COLOR="1")
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"):
        env.pop(key, None)
    proc = jmem(project, "init", "--agent", "main", "--codex", "--no-git-hooks", "--no-claude",
                env=env)
    assert proc.returncode == 0, proc.stderr
    proc = jmem(project, "write", "--agent", "main", "--topic", "ops", "--title", PENDING,
                "--body", "Why it holds.", env=env)
    assert proc.returncode == 0, proc.stderr
    git(project, "add", "-A")
    git(project, "commit", "-qm", "journal-mem")
    wt = add_worktree(project, tmp_path / "wt")
    with FakeOpenAI() as api:
        config = home / "config.toml"
        config.write_text(user_config(api.base_url, wt))  # the user trusts where they work
        trust = jmem(wt, "codex-trust", env=env)  # run where they work, as the docs say
        assert trust.returncode == 0, trust.stderr
        with config.open("a") as fh:
            fh.write(trust.stdout)
        proc = subprocess.run([str(exe), "exec", "--json", "say hello"], cwd=wt, env=env,
                              capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        sent = [json.dumps(r["body"].get("input", []), ensure_ascii=False)
                for r in api.requests]
    assert sent, "codex sent no request"
    assert any(PENDING in s for s in sent), "the SessionStart hook did not run in the worktree"
