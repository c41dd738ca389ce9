"""`jmem mcp` registered in the real Codex CLI (pinned, see codexcli.py), no start-up
grace setting: its first request to the fake Responses API offers journal-mem's tools,
and the model's call of `recall` (in the `mcp__journal_mem` namespace Codex offers)
on the first turn answers from memory.

Codex sends its first model request without a server's tools when the server has not
answered its handshake in time (0.171.0 did so in 3 of 4 runs with a server that took
0.5–1.9 s); `jmem mcp` answers `initialize` and `tools/list` from its recorded
handshake before the SDK loads. Three fresh `codex exec` runs, each a cold server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from codexcli import binary, user_config
from fakeopenai import FakeOpenAI
from helpers import base_env, jmem, make_repo

RUNS = 3
FACT = "The cache server listens on port 6380"


def offered(body: dict[str, Any]) -> str:
    return json.dumps(body.get("tools", []), ensure_ascii=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[list[dict[str, Any]]]:
    """Every request of each of the RUNS fresh `codex exec` runs."""
    exe, why = binary()
    if exe is None:
        print(f"codex e2e skipped: {why}")
        pytest.skip(why)
    root = tmp_path_factory.mktemp("codexmcp")
    project = make_repo(root / "proj")
    home = root / "codex-home"
    home.mkdir()
    env = base_env(HOME=str(root), CODEX_HOME=str(home), FAKE_OPENAI_KEY="sk-test-fake",
                   NO_COLOR="1")
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"):
        env.pop(key, None)
    assert jmem(project, "init", "--agent", "main", "--no-git-hooks", "--no-claude",
                env=env).returncode == 0
    assert jmem(project, "write", "--agent", "main", "--topic", "ops", "--title", FACT,
                "--body", "Seen in the build logs.", env=env).returncode == 0
    turns = []
    with FakeOpenAI() as api:
        api.call("hello 0", "recall", {"question": "which port does the cache use"},
                 namespace="mcp__journal_mem")
        (home / "config.toml").write_text(user_config(api.base_url, project) + (
            "[mcp_servers.journal-mem]\n"
            f"command = {json.dumps(sys.executable)}\n"
            f"args = {json.dumps(['-m', 'journal_mem', 'mcp'])}\n"
            f"cwd = {json.dumps(str(project))}\n"
            f"env = {{ PYTHONPATH = {json.dumps(env['PYTHONPATH'])} }}\n"))
        for n in range(RUNS):
            before = len(api.requests)
            proc = subprocess.run([str(exe), "exec", "--json", f"hello {n}"], cwd=project,
                                  env=env, capture_output=True, text=True, timeout=180,
                                  stdin=subprocess.DEVNULL, check=False)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            bodies = [r["body"] for r in api.requests[before:]]
            (root / f"requests-{n}.json").write_text(json.dumps(bodies))
            turns.append(bodies)
    return turns


def test_every_first_request_offers_the_jmem_tools(runs: list[list[dict[str, Any]]]) -> None:
    for body in (bodies[0] for bodies in runs):
        tools = offered(body)
        assert "journal-mem" in tools or "journal_mem" in tools, tools[:2000]
        assert "write_lesson" in tools and "recall" in tools


def test_the_recall_called_on_the_first_turn_answers_from_memory(
        runs: list[list[dict[str, Any]]]) -> None:
    outputs = [i for body in runs[0][1:] for i in body.get("input", [])
               if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert any(FACT in json.dumps(o, ensure_ascii=False) for o in outputs), outputs
