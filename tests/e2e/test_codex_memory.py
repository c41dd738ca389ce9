"""journal-mem's own hooks under the real Codex CLI (pinned, see codexcli.py) against a
fake Responses API on 127.0.0.1: what reached the model is asserted in the requests.

One scenario for the module: `jmem init --codex` in a repository whose agent `main`
has a MEMORY.md and a pending lesson; `$CODEX_HOME/config.toml` gets the fake
provider and, appended as a user would, what `jmem codex-trust` printed (nothing else
trusts the hooks). `codex exec` runs a prompt the fake model answers with a shell call
that commits; a correction of one fact is then written by another agent; `codex exec
resume --last` runs the next turn. The hooks run `jmem` from PATH, a shim that runs
this checkout's code and logs how long each hook took.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from codexcli import VERSION, binary, user_config
from fakeopenai import FakeOpenAI
from helpers import base_env, git, jmem, make_repo
from hookshim import shim, timings

MEM = Path(".claude/agent-memory")
FACTS = ["Main fact 🐍 [mn-one]", "Builds run on the blue runners [mn-blue]",
         "Release notes go in CHANGES.md [mn-notes]"]
PENDING = "Pending main lesson"
CORRECTION = "Main fact corrected by the reviewer"


class Run:
    def __init__(self, root: Path, exe: Path) -> None:
        self.root, self.exe = root, exe
        self.project = make_repo(root / "proj")
        self.home = root / "codex-home"
        self.home.mkdir()
        self.log = root / "hook-times.txt"
        shim(root / "bin", self.log)
        self.env = base_env(PATH=f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}",
                            HOME=str(root), CODEX_HOME=str(self.home),
                            FAKE_OPENAI_KEY="sk-test-fake", NO_COLOR="1")
        for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"):
            self.env.pop(key, None)
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.times: dict[str, float] = {}

    def setup(self, api: FakeOpenAI) -> None:
        proc = jmem(self.project, "init", "--agent", "main", "--codex", "--no-git-hooks",
                    "--no-claude", env=self.env)
        assert proc.returncode == 0, proc.stderr
        assert "jmem codex-trust" in proc.stderr  # it says how to trust, and does not
        (self.project / MEM / "main" / "MEMORY.md").write_text(
            "# main\n" + "".join(f"- {fact}\n" for fact in FACTS))
        proc = jmem(self.project, "write", "--agent", "main", "--topic", "ops", "--title",
                    PENDING, "--body", "Why it holds.", env=self.env)
        assert proc.returncode == 0, proc.stderr
        git(self.project, "add", "-A")
        git(self.project, "commit", "-qm", "journal-mem")
        config = self.home / "config.toml"
        config.write_text(user_config(api.base_url, self.project))
        trust = jmem(self.project, "codex-trust", env=self.env)
        assert trust.returncode == 0, trust.stderr
        assert "[projects." not in trust.stdout  # the config trusts the project already
        with config.open("a") as fh:
            fh.write(trust.stdout)
        assert jmem(self.project, "codex-trust", env=self.env).stdout == ""  # all there

    def codex(self, phase: str, api: FakeOpenAI, *args: str) -> None:
        before = len(api.requests)
        start = time.monotonic()
        proc = subprocess.run([str(self.exe), *args], cwd=self.project, env=self.env,
                              capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL, check=False)
        self.times[phase] = time.monotonic() - start
        assert proc.returncode == 0, f"codex {phase}: {proc.stdout}\n{proc.stderr}"
        self.requests[phase] = [r["body"] for r in api.requests[before:]]
        (self.root / f"requests-{phase}.json").write_text(json.dumps(self.requests[phase]))

    def scenario(self) -> None:
        with FakeOpenAI() as api:
            api.shell("RUN-THE-SHELL", "git commit --allow-empty -qm work")
            self.setup(api)
            self.codex("exec", api, "exec", "--json", "please RUN-THE-SHELL now")
            proc = jmem(self.project, "write", "--agent", "reviewer", "--topic", "ops",
                        "--title", CORRECTION, "--applies-to", "main", "--supersedes",
                        "mn-one", "--body", "It changed.", env=self.env)
            assert proc.returncode == 0, proc.stderr
            self.codex("resume", api, "exec", "resume", "--last", "--json", "and again")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    exe, why = binary()
    if exe is None:
        print(f"codex e2e skipped: {why}")
        pytest.skip(why)
    result = Run(tmp_path_factory.mktemp("codexmem"), exe)
    result.scenario()
    return result


def text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("input", []), ensure_ascii=False)


def test_the_session_gets_its_pack_once_as_a_developer_message(run: Run) -> None:
    first = run.requests["exec"][0]
    packs = [i for i in first["input"] if "# journal-mem: memory of agent main" in
             json.dumps(i, ensure_ascii=False)]
    assert len(packs) == 1 and packs[0]["role"] == "developer", packs
    for fact in [*FACTS, PENDING]:
        assert text(first).count(fact.split(" [")[0]) == 1, fact


def test_the_reminder_comes_once_after_work_as_codex_reads_it(run: Run) -> None:
    """The shell call committed: at Stop the session is asked for its lesson (a block
    whose reason comes back as a user turn), and only once."""
    requests = run.requests["exec"]
    assert len(requests) == 3, len(requests)  # the prompt, after the tool, after the Stop
    last = requests[-1]["input"]
    asked = [i for i in last if "<hook_prompt " in json.dumps(i)]
    assert len(asked) == 1 and asked[0]["role"] == "user"
    assert asked[0]["content"][0]["text"].startswith("<hook_prompt ")
    assert "journal-mem: before you finish, record what you LEARNED" in json.dumps(asked)
    assert "jmem write --agent main" in json.dumps(asked)


def test_codex_reads_the_agents_md_block(run: Run) -> None:
    first = run.requests["exec"][0]["input"]
    told = [i for i in first if "# AGENTS.md instructions" in json.dumps(i)]
    assert len(told) == 1 and "journal-mem begin" in json.dumps(told)
    assert "jmem write --agent AGENT" in json.dumps(told)
    assert len(run.requests["resume"]) == 1  # the resumed turn is not asked again


def test_a_correction_reaches_the_next_turn_once_and_the_pack_is_not_repeated(
        run: Run) -> None:
    body = text(run.requests["resume"][0])
    assert body.count(CORRECTION) == 1
    assert "do not rely on: mn-one" in body
    # the first pack comes back from the transcript; nothing of it is sent again
    assert body.count("# journal-mem: memory of agent main\\n") == 1
    for fact in [*FACTS[1:], PENDING]:
        assert body.count(fact.split(" [")[0]) == 1, fact
    times = timings(run.log)
    print(f"codex {VERSION}: exec {run.times['exec']:.1f}s, resume {run.times['resume']:.1f}s;"
          f" hook ms: {times}")
    assert set(times) >= {"wake --hook codex", "remind --hook codex"}
