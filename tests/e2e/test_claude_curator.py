"""The real Claude Code CLI as the curator of `jmem consolidate --propose` (wiring only).

`claude -p … --output-format json` runs against the fake Messages API; the plan
reaches it on stdin, the fake model answers with proposals built from the plan
it was sent, and jmem reads them out of the CLI's JSON wrapper and files them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from claudecode import binary
from fakeapi import FakeApi, newest_user_text
from helpers import base_env, jmem

from fixtures import paraphrase_eval as ev
from fixtures import paraphrases

SMALL = SimpleNamespace(CLUSTERS=paraphrases.CLUSTERS[:3], DISTRACTORS=[], SINGLETONS=[])
PROMPT = "You are the memory curator. Answer with the JSON list of proposals only."


class CuratorApi(FakeApi):
    """Answers a prompt that holds a plan with one merge per duplicates item."""

    def answer(self, body: dict[str, Any], number: int = 0) -> list[dict[str, Any]]:
        text = newest_user_text(body)
        ids = re.findall(r'"id": "(duplicates-[0-9a-f]+)"', text)
        if not ids:
            return super().answer(body, number)
        keys = re.findall(r'"keys": \[([^\]]*)\]', text)
        proposals = [{"item": i, "title": f"Merged lesson {n}", "topic": "testing",
                      "body": "One wording for all of them.",
                      "supersedes": json.loads(f"[{k}]")}
                     for n, (i, k) in enumerate(zip(ids, keys, strict=False))]
        return [{"type": "text", "text": "```json\n" + json.dumps(proposals) + "\n```"}]


def test_claude_code_is_the_proposer(tmp_path: Path) -> None:
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    repo = ev.build(tmp_path / "team", SMALL)
    (tmp_path / "home").mkdir()
    command = shlex.join([str(exe), "-p", PROMPT, "--output-format", "json"])
    with CuratorApi() as api:
        env = base_env(HOME=str(tmp_path / "home"), ANTHROPIC_API_KEY="sk-test-fake",
                       ANTHROPIC_BASE_URL=f"http://127.0.0.1:{api.port}",
                       DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                       PATH=os.environ["PATH"])
        plan = json.loads(jmem(repo, "consolidate", "--json", env=env).stdout)
        dups = [i for i in plan if i["kind"] == "duplicates"]
        assert dups
        proc = jmem(repo, "consolidate", "--propose", command, "--json", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = [newest_user_text(r) for r in api.requests]
    assert any(PROMPT in t and dups[0]["id"] in t for t in seen)  # the plan came on stdin
    written = json.loads(proc.stdout)["written"]
    assert len(written) == len(dups)
    assert all(w["path"].startswith(".claude/agent-memory/curator/journal/") for w in written)
    assert all(str(exe) in w["source"] for w in written)
    assert {k for w in written for k in w["supersedes"]} == {k for d in dups for k in d["keys"]}


def test_the_plugin_gives_claude_code_the_curator_and_its_command(tmp_path: Path) -> None:
    """Installed from the package, the plugin's `memory-curator` agent is offered to the
    model, and `/journal-mem:consolidate` expands to the command's prompt."""
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    from journal_mem.setup.plugin import folder

    repo = ev.build(tmp_path / "team", SMALL)
    (tmp_path / "home").mkdir()
    with FakeApi() as api:
        env = base_env(HOME=str(tmp_path / "home"), ANTHROPIC_API_KEY="sk-test-fake",
                       ANTHROPIC_BASE_URL=f"http://127.0.0.1:{api.port}",
                       DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                       PATH=os.environ["PATH"])
        for args in (["marketplace", "add", folder()], ["install", "journal-mem@journal-mem"]):
            proc = subprocess.run([str(exe), "plugin", *args], env=env, capture_output=True,
                                  text=True, timeout=120, check=False)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        proc = subprocess.run([str(exe), "-p", "/journal-mem:consolidate dry run"], cwd=repo,
                              env=env, capture_output=True, text=True, timeout=180, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    sent = json.dumps(api.requests)
    # the agent is offered as a plugin agent, with its description
    assert "- journal-mem:memory-curator: Consolidates the team's memory." in sent
    assert any("Consolidate this repository's agent memory" in newest_user_text(r)
               for r in api.requests)
