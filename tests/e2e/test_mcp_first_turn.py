"""`jmem mcp` registered in the real Claude Code and Gemini CLI (pinned), called on the
session's first turn, from a linked worktree: the recall answers from memory.

Codex (`test_codex_mcp.py`), Copilot (`test_copilot.py`) and Qwen Code
(`test_qwen.py`) have theirs next to their other tests. Claude Code 2.1.332 defers
MCP tools: the first request names them, the model loads one with `ToolSearch`
(`select:NAME`) and calls it in the next; Gemini CLI 0.61.0 offers them in its first
request as functions named `mcp_<server>_<tool>`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claudecode import binary
from fakeapi import FakeApi
from fakegemini import FakeGemini
from geminicli import command, environment, user_settings
from helpers import REPO_ROOT, add_worktree, base_env, git, jmem, make_repo

FACT = "The cache server listens on port 6380"
QUESTION = {"question": "which port does the cache server use"}


def team(root: Path) -> tuple[Path, dict[str, str]]:
    """A repository whose agent `main` holds FACT, and a linked worktree of it."""
    main = make_repo(root / "main")
    env = base_env(HOME=str(root / "home"))
    (root / "home").mkdir()
    for args in (("init", "--agent", "main", "--no-git-hooks", "--no-claude"),
                 ("write", "--agent", "main", "--topic", "ops", "--title", FACT, "--key",
                  "mn-port", "--body", "Seen in the build logs.")):
        proc = jmem(main, *args, env=env)
        assert proc.returncode == 0, proc.stderr
    git(main, "add", "-A")
    git(main, "commit", "-qm", "journal-mem")
    return add_worktree(main, root / "wt"), env


def server(cwd: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "journal_mem", "mcp"], "cwd": str(cwd),
            "env": {"PYTHONPATH": str(REPO_ROOT)}}


def results(messages: list[dict[str, Any]]) -> str:
    return json.dumps([b for m in messages if isinstance(m.get("content"), list)
                       for b in m["content"] if isinstance(b, dict)
                       and b.get("type") == "tool_result"], ensure_ascii=False)


def test_claude_code_loads_and_calls_the_recall_tool_on_its_first_turn(
        tmp_path: Path) -> None:
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    wt, env = team(tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"journal-mem": server(wt)}}))
    env.update(ANTHROPIC_API_KEY="sk-test-fake", DISABLE_TELEMETRY="1",
               DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
               DISABLE_AUTOUPDATER="1")
    with FakeApi() as api:
        api.calls["ASK-MEMORY"] = ("ToolSearch", {"query": "select:mcp__journal-mem__recall"})
        api.on_result["mcp__journal-mem__recall"] = ("mcp__journal-mem__recall", QUESTION)
        env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{api.port}"
        proc = subprocess.run([str(exe), "-p", "ASK-MEMORY please", "--output-format", "json",
                               "--mcp-config", str(config), "--strict-mcp-config",
                               "--allowedTools", "mcp__journal-mem"], cwd=wt, env=env,
                              capture_output=True, text=True, timeout=240, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        requests = list(api.requests)
    assert "mcp__journal-mem__recall" in json.dumps(requests[0])  # named at once
    assert len(requests) == 3, len(requests)  # ToolSearch, the recall, the answer
    assert "mcp__journal-mem__recall" in {t["name"] for t in requests[1]["tools"]}
    assert FACT in results(requests[2]["messages"])


def test_gemini_cli_calls_the_recall_tool_on_its_first_turn(tmp_path: Path) -> None:
    cli, why = command()
    if cli is None:
        pytest.skip(why)
    wt, env = team(tmp_path)
    home = tmp_path / "home"
    settings = json.loads(user_settings())
    settings["mcpServers"] = {"journal-mem": server(wt)}
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    with FakeGemini() as api:
        env.update(environment(api.base_url, home))
        for key in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA",
                    "GOOGLE_CLOUD_PROJECT", "GOOGLE_VERTEX_BASE_URL"):
            env.pop(key, None)
        api.call("ASK-MEMORY", "mcp_journal-mem_recall", QUESTION)
        proc = subprocess.run([*cli, "--yolo", "-p", "ASK-MEMORY please"], cwd=wt, env=env,
                              capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        calls = [r["body"] for r in api.requests if r["body"].get("tools")]
    offered = {d.get("name") for t in calls[0]["tools"] for d in t.get("functionDeclarations")
               or []}
    assert {"mcp_journal-mem_recall", "mcp_journal-mem_write_lesson"} <= offered, offered
    said = json.dumps([c["contents"] for c in calls], ensure_ascii=False)
    assert len(calls) >= 2 and "functionResponse" in said and FACT in said
