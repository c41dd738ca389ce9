"""journal-mem's own hooks under the real Gemini CLI (pinned, see geminicli.py) against a
fake Gemini API on 127.0.0.1: what reached the model is asserted in the requests.

One scenario for the module: `jmem init --gemini` in a repository whose agent `main`
has a MEMORY.md and a pending lesson (one with `<` and `>` in its title, which the CLI
escapes). `gemini --yolo -p` runs a prompt the fake model answers with a shell call
that commits; a correction of one fact is then written by another agent; `gemini
--resume latest -p` runs the next turn. The hooks run `jmem` from PATH (a shim timing
each hook).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from fakegemini import FakeGemini
from geminicli import VERSION, command, environment, user_settings
from helpers import base_env, git, jmem, make_repo
from hookshim import shim, timings

MEM = Path(".claude/agent-memory")
FACTS = ["Main fact 🐍 [mn-one]", "Builds run on the blue runners [mn-blue]",
         "Release notes go in CHANGES.md [mn-notes]"]
PENDING = "Wrap <b>warnings</b> in bold"
CORRECTION = "Main fact corrected by the reviewer"


class Run:
    def __init__(self, root: Path, cli: list[str]) -> None:
        self.root, self.cli = root, cli
        self.project = make_repo(root / "proj")
        self.home = root / "home"
        (self.home / ".gemini").mkdir(parents=True)
        (self.home / ".gemini" / "settings.json").write_text(user_settings())
        self.log = root / "hook-times.txt"
        shim(root / "bin", self.log)
        self.path = f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}"
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.times: dict[str, float] = {}

    def jmem(self, *args: str) -> None:
        proc = jmem(self.project, *args, env=base_env(PATH=self.path))
        assert proc.returncode == 0, proc.stderr

    def setup(self) -> None:
        self.jmem("init", "--agent", "main", "--gemini", "--no-git-hooks", "--no-claude")
        (self.project / MEM / "main" / "MEMORY.md").write_text(
            "# main\n" + "".join(f"- {fact}\n" for fact in FACTS))
        self.jmem("write", "--agent", "main", "--topic", "docs", "--title", PENDING,
                  "--body", "Readers skim.")
        git(self.project, "add", "-A")
        git(self.project, "commit", "-qm", "journal-mem")

    def gemini(self, phase: str, api: FakeGemini, *args: str) -> None:
        before = len(api.requests)
        env = base_env(**environment(api.base_url, self.home), PATH=self.path)
        for key in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA",
                    "GOOGLE_CLOUD_PROJECT", "GOOGLE_VERTEX_BASE_URL"):
            env.pop(key, None)
        start = time.monotonic()
        proc = subprocess.run([*self.cli, *args], cwd=self.project, env=env,
                              capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL, check=False)
        self.times[phase] = time.monotonic() - start
        assert proc.returncode == 0, f"gemini {phase}: {proc.stdout}\n{proc.stderr}"
        self.requests[phase] = [r["body"] for r in api.requests[before:]
                                if ":streamGenerateContent" in r["path"]
                                and r["body"].get("tools")]
        (self.root / f"requests-{phase}.json").write_text(json.dumps(self.requests[phase]))

    def scenario(self) -> None:
        self.setup()
        with FakeGemini() as api:
            api.shell("RUN-THE-SHELL", "git commit --allow-empty -qm work")
            self.gemini("prompt", api, "--yolo", "-p", "please RUN-THE-SHELL now")
            self.jmem("write", "--agent", "reviewer", "--topic", "ops", "--title", CORRECTION,
                      "--applies-to", "main", "--supersedes", "mn-one", "--body", "It changed.")
            self.gemini("resume", api, "--yolo", "--resume", "latest", "-p", "and again")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    cli, why = command()
    if cli is None:
        print(f"gemini e2e skipped: {why}")
        pytest.skip(why)
    result = Run(tmp_path_factory.mktemp("geminimem"), cli)
    result.scenario()
    return result


def text(body: dict[str, Any]) -> str:
    return json.dumps(body["contents"], ensure_ascii=False)


def test_the_session_gets_its_pack_once_escaped_but_whole(run: Run) -> None:
    first = text(run.requests["prompt"][0])
    assert first.count("# journal-mem: memory of agent main") == 1
    for fact in FACTS:
        assert first.count(fact.split(" [")[0]) == 1, fact
    # the CLI escapes `<` and `>`: only the lesson's own brackets are touched
    assert first.count("Wrap &lt;b&gt;warnings&lt;/b&gt; in bold") == 1
    context = first[first.index("<hook_context>"):first.index("</hook_context>")]
    assert context.count("&lt;") == 2 and context.count("&gt;") == 2


def test_the_reminder_comes_once_after_work_as_the_next_turn(run: Run) -> None:
    calls = run.requests["prompt"]
    asked = [c for c in calls if "journal-mem: before you finish, record what you LEARNED"
             in json.dumps(c["contents"][-1])]
    assert len(asked) == 1, len(asked)
    assert "jmem write --agent main" in json.dumps(asked[0]["contents"][-1])
    resumed = run.requests["resume"]
    assert all(json.dumps(c["contents"]).count("record what you LEARNED") <= 1
               for c in resumed)  # only the old one, from the history


def test_the_resumed_turn_gets_the_pack_again_with_the_correction_once(run: Run) -> None:
    """Gemini CLI resumes without the first prompt, which carried the pack: the resumed
    session is given the whole pack again, the correction in it, each fact once."""
    body = text(run.requests["resume"][0])
    assert body.count(CORRECTION) == 1
    assert "mn-one" in body
    assert body.count("# journal-mem: memory of agent main") == 1
    for fact in FACTS[1:]:
        assert body.count(fact.split(" [")[0]) == 1, fact
    times = timings(run.log)
    print(f"gemini cli {VERSION}: prompt {run.times['prompt']:.1f}s, "
          f"resume {run.times['resume']:.1f}s; hook ms: {times}")
    assert set(times) >= {"wake --hook gemini", "remind --hook gemini"}
