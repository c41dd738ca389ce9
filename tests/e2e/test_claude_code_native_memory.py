"""End to end with the real Claude Code CLI: native memory written by a subagent in a
linked worktree lands in the main checkout's journal while the session runs.

A repository with agent `reviewer` (`memory: project`, set up by `jmem init
--claude-agent reviewer`, which also writes the hooks into `.claude/settings.json`)
and a linked worktree. In the worktree a session delegates to the reviewer, whose
model (the fake API) answers with a Write tool call of a Claude Code memory file
into the worktree's `.claude/agent-memory/reviewer/` and, in the same batch, a Write
of its `MEMORY.md` index with the file's line, as Claude Code's own prompt tells it
to. The PostToolUse hook files both: the memory file is one lesson, and its index
line is that file's line, never a fact of its own. before the session ends, the lesson is in
the main checkout's journal, the worktree holds no memory change, and the model was
told where its memory went. A next session's reviewer gets the fact exactly once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claudecode import binary, described
from fakeapi import FakeApi
from helpers import REPO_ROOT, add_worktree, base_env, git, jmem, make_repo

MEM = Path(".claude/agent-memory")
MARK = "NM-E2E-7731"
MEMORY_FILE = ("---\nname: retry-budget\ndescription: Retries share one budget of three per "
               f"request ({MARK})\nmetadata:\n  type: feedback\n---\n\nEvery outbound call "
               "shares one retry budget of three.\n\n**Why:** nested retries multiplied to "
               "27 calls.\n\n**How to apply:** pass the budget down, never start a new one.\n")


INDEX = (f"# Memory\n\n- [Retries share one budget ({MARK})](feedback_retry_budget.md) — "
         "nested retries multiplied to 27 calls\n")


def _is_subagent(request: dict[str, Any]) -> bool:
    return "cc_is_subagent=true" in json.dumps(request.get("system", ""))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("claude-native")
    main = make_repo(root / "main")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "jmem"  # the hooks run `jmem` from PATH: this checkout's code
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={REPO_ROOT} exec {sys.executable} "
                    "-m journal_mem \"$@\"\n")
    shim.chmod(0o755)
    (root / "home").mkdir()
    env = base_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", HOME=str(root / "home"),
                   ANTHROPIC_API_KEY="sk-test-fake", DISABLE_TELEMETRY="1",
                   DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   DISABLE_AUTOUPDATER="1")
    env.pop("CLAUDE_CODE_DISABLE_AUTO_MEMORY", None)
    proc = jmem(main, "init", "--agent", "reviewer", "--claude-agent", "reviewer",
                "--no-git-hooks", env=env)
    assert proc.returncode == 0, proc.stderr
    git(main, "add", "-A")
    git(main, "commit", "-qm", "journal-mem")
    wt = add_worktree(main, root / "wt")
    target = wt / MEM / "reviewer" / "feedback_retry_budget.md"
    out: dict[str, Any] = {"main": main, "wt": wt, "target": target}

    def claude(api: FakeApi, prompt: str) -> list[dict[str, Any]]:
        first = len(api.requests)
        env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{api.port}"
        proc = subprocess.run([str(exe), "-p", prompt, "--output-format", "json",
                               "--permission-mode", "acceptEdits"], cwd=wt, env=env,
                              capture_output=True, text=True, timeout=240, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return api.requests[first:]

    with FakeApi() as api:
        api.delegate("DELEGATE", "reviewer", prompt="Review, then MEMWRITE what you learned.")
        api.parallel("MEMWRITE", ("Write", {"file_path": str(target), "content": MEMORY_FILE}),
                     ("Write", {"file_path": str(target.parent / "MEMORY.md"),
                                "content": INDEX}))
        out["first"] = claude(api, "please DELEGATE")
        out["journal_after_first"] = _journal_texts(main)
        out["wt_status"] = git(wt, "status", "--porcelain").stdout
        api.calls.pop("MEMWRITE")
        api.delegate("AGAIN", "reviewer", prompt="Say what you remember.")
        out["second"] = claude(api, "AGAIN please")
    print(f"\nclaude code {described()}")
    return out


def _journal_texts(main: Path) -> list[str]:
    folder = main / MEM / "reviewer" / "journal"
    return [p.read_text() for p in sorted(folder.glob("*.md"))]


def test_the_subagent_wrote_its_memory_with_the_write_tool(world: dict[str, Any]) -> None:
    writes = [b for r in world["first"] for m in r.get("messages", [])
              for b in (m.get("content") if isinstance(m.get("content"), list) else [])
              if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Write"]
    assert writes and writes[0]["input"]["file_path"] == str(world["target"])


def test_the_lesson_is_in_the_main_journal_and_the_worktree_is_clean(
        world: dict[str, Any]) -> None:
    filed = [t for t in world["journal_after_first"] if MARK in t]
    assert len(filed) == 1
    assert "key: retry-budget" in filed[0] and "type: procedural" in filed[0]
    assert "Every outbound call shares one retry budget of three." in filed[0]
    assert world["wt_status"] == ""
    assert not world["target"].exists()
    # the index line Claude Code wrote for the file is the file's line, not a second fact
    assert not [t for t in world["journal_after_first"] if "feedback_retry_budget.md)" in t]
    assert not [t for t in world["journal_after_first"] if "\\[" in t]


def test_the_model_was_told_where_its_memory_went(world: dict[str, Any]) -> None:
    later = [json.dumps(r, ensure_ascii=False) for r in world["first"] if _is_subagent(r)]
    told = [t for t in later if "journal-mem filed the memory you wrote" in t]
    assert told, "no PostToolUse context reached the subagent"
    assert "reviewer/journal/" in told[-1]


def test_the_next_session_gets_the_fact_exactly_once(world: dict[str, Any]) -> None:
    subs = [json.dumps(r, ensure_ascii=False) for r in world["second"] if _is_subagent(r)]
    assert subs, "the reviewer never ran in the second session"
    assert subs[0].count(MARK) == 1
