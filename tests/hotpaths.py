"""The hot paths, run for real: which modules each one imports.

A hot path is a command that git or an agent client runs on every commit, every
session start and every tool call. `loaded(tmp)` runs each of them in a real
repository, as a child process, and records the package and third-party
modules it imported: the transitive import closure as it really is, function
level imports included, not a hand-kept list.
"""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
import time
from itertools import product
from pathlib import Path

from helpers import base_env, git, jmem, make_repo

# `marshal` is loaded at every start: the probe adds no module to what it records
PROBE = (
    "import marshal, sys\n"
    "from journal_mem.main import main\n"
    "try:\n"
    "    code = main(sys.argv[3:])\n"
    "finally:\n"
    "    with open(sys.argv[1], 'wb') as fh:\n"
    "        marshal.dump(sorted(sys.modules), fh)\n"
    "raise SystemExit(code)\n"
)

SESSION = {"session_id": "s-1", "transcript_path": "", "hook_event_name": "SessionStart",
           "source": "startup"}


def _paths(main: Path) -> dict[str, tuple[list[str], dict[str, object] | None]]:
    """name → (argv, stdin JSON) of every hot path."""
    cwd = str(main)
    return {
        "guard, nothing staged": (["guard", "--hook", "pre-commit"], None),
        "post-commit distill check": (["distill", "--if-due", "--background"], None),
        "SessionStart": (["wake", "--hook", "claude"], {**SESSION, "cwd": cwd}),
        "SubagentStart": (["wake", "--hook", "claude"],
                          {**SESSION, "cwd": cwd, "hook_event_name": "SubagentStart",
                           "agent_type": "api", "agent_id": "a-1"}),
        "UserPromptSubmit": (["wake", "--hook", "claude"],
                             {**SESSION, "cwd": cwd, "hook_event_name": "UserPromptSubmit",
                              "prompt": "go"}),
        "PostToolUse": (["wake", "--hook", "claude"],
                        {**SESSION, "cwd": cwd, "hook_event_name": "PostToolUse",
                         "tool_name": "Read", "tool_input": {}, "tool_response": {}}),
        "Codex PostToolUse, a commit": (["wake", "--hook", "codex"],
                                        {**SESSION, "cwd": cwd, "hook_event_name": "PostToolUse",
                                         "turn_id": "t-1", "tool_name": "Bash",
                                         "tool_input": {"command": "git commit -m x"}}),
        "Gemini AfterAgent": (["remind", "--hook", "gemini"],
                              {**SESSION, "cwd": cwd, "hook_event_name": "AfterAgent",
                               "timestamp": "2026-12-01T00:00:00Z", "prompt": "go",
                               "prompt_response": "ok", "stop_hook_active": False}),
        "hook pre-work": (["hook", "pre-work"], {"agent": "api", "goal": "hot path lesson"}),
        "recall, a warm index": (["recall", "hot", "path", "lesson", "--agent", "api"], None),
        "write": (["write", "--agent", "api", "--topic", "testing", "--title",
                   "A lesson on the hot path", "--body", "Written by every agent."], None),
        "Stop": (["remind", "--hook", "claude"],
                 {**SESSION, "cwd": cwd, "hook_event_name": "Stop",
                  "stop_hook_active": False}),
    }


def repository(tmp: Path) -> Path:
    """A repository set up by `jmem init`, with a few lessons, two of them distilled."""
    main = make_repo(tmp / "hot")
    assert jmem(main, "init", "--agent", "api", "--no-git-hooks", "--no-claude",
                "--no-import").returncode == 0
    for n in range(3):
        proc = jmem(main, "write", "--agent", "api", "--topic", "testing",
                    "--title", f"Hot path lesson number {n}", stdin="body\n")
        assert proc.returncode == 0, proc.stderr
        if n == 1:
            assert jmem(main, "distill").returncode == 0
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "memory")
    # as the next agent finds it, seconds later: a folder or state changed within 2 s is
    # listed again by every hook (`listing._RACY_NS`), as it may still be changing
    memory = main / ".claude" / "agent-memory"
    aged = time.time() - 10
    for path in [memory / "distill-state.json", *memory.glob("*/journal")]:
        os.utime(path, (aged, aged))
    assert jmem(main, "recall", "hot", "path").returncode == 0  # builds the recall index
    return main


def loaded(tmp: Path) -> dict[str, set[str]]:
    """"<hot path> (cold|warm)" → the modules it imported, with the journal's cache
    removed first (cold) and then as the next hook finds it (warm)."""
    main = repository(tmp)
    out: dict[str, set[str]] = {}
    cache = main / ".git" / "journal-mem" / "cache"
    for (name, (argv, stdin)), cold in product(_paths(main).items(), (True, False)):
        if cold:  # the first hook after a lesson was written parses it (config stays valid)
            for stale in cache.glob("*"):
                if not stale.name.startswith("config-snapshot"):
                    shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
        dump = tmp / "modules.marshal"
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, str(dump), "jmem", *argv], cwd=main,
            env=base_env(), input=json.dumps(stdin) if stdin else "", text=True,
            capture_output=True, check=False)
        assert dump.is_file(), f"{name}: {proc.stderr}"
        out[f"{name} ({'cold' if cold else 'warm'})"] = recorded(dump)
    return out


def recorded(dump: Path) -> set[str]:
    """The modules a process run with `PROBE` wrote to `dump`."""
    return set(marshal.loads(dump.read_bytes()))


def started(tmp: Path) -> set[str]:
    """The modules an interpreter has loaded when it starts, as `loaded` runs it (a
    development install's `.pth` finder imports `re`, for one): what no hot path adds."""
    dump = tmp / "started.marshal"
    subprocess.run([sys.executable, "-c", "import marshal, sys\n"
                    "with open(sys.argv[1], 'wb') as fh: marshal.dump(sorted(sys.modules), fh)",
                    str(dump)], env=base_env(), check=True)
    return recorded(dump)
