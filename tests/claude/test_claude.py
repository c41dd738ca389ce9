"""Claude Code: hook output shapes, never failing a session, settings.json merge, agents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import base_env, git, jmem

from journal_mem.names import default_key

MEM = Path(".claude/agent-memory")
HOOK_KEYS = {"hookEventName", "additionalContext"}


def hook_input(cwd: Path, event: str, **extra: object) -> str:
    data: dict[str, object] = {"session_id": "sess-1", "transcript_path": "/tmp/t.jsonl",
                               "cwd": str(cwd), "hook_event_name": event}
    data.update(extra)
    return json.dumps(data)


def wake_hook(cwd: Path, stdin: str | bytes, **env: str) -> tuple[dict[str, object], str]:
    """Run the hook; check the shape of its answer; return (hookSpecificOutput, stderr)."""
    proc = jmem(cwd, "wake", "--hook", "claude", stdin=stdin, env=base_env(**env))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"hookSpecificOutput"}
    inner = out["hookSpecificOutput"]
    assert set(inner) == HOOK_KEYS
    assert isinstance(inner["additionalContext"], str)
    assert len(inner["additionalContext"]) <= 10_000
    return inner, proc.stderr


def memory(root: Path, agent: str, text: str) -> None:
    path = root / MEM / agent / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("event", ["SessionStart", "SubagentStart"])
def test_hook_output_shape_for_each_event(repo: Path, event: str) -> None:
    jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Pending one", "--body", "b")
    extra = {"source": "startup"} if event == "SessionStart" else \
        {"agent_id": "agent-7", "agent_type": "api"}
    env = {"JMEM_DEFAULT_AGENT": "api"} if event == "SessionStart" else {}
    inner, _ = wake_hook(repo, hook_input(repo, event, **extra), **env)
    assert inner["hookEventName"] == event
    assert "Pending one" in str(inner["additionalContext"])


def test_worktree_gets_main_memory_only_when_its_copy_differs(repo: Path,
                                                              worktree: Path) -> None:
    memory(repo, "api", "- Same fact [same]\n")
    memory(worktree, "api", "- Same fact [same]\n")
    stdin = hook_input(worktree, "SubagentStart", agent_type="api", agent_id="a")
    inner, _ = wake_hook(worktree, stdin)
    assert "- Same fact [same]" in str(inner["additionalContext"])  # no memory: project agent
    definition = worktree / ".claude" / "agents" / "api.md"
    definition.parent.mkdir(parents=True)
    definition.write_text("---\nname: api\nmemory: project\n---\n\nYou are api.\n")
    inner, _ = wake_hook(worktree, stdin)
    assert "Same fact" not in str(inner["additionalContext"])  # Claude Code loads it natively
    session, _ = wake_hook(worktree, hook_input(worktree, "SessionStart"),
                           JMEM_DEFAULT_AGENT="api")
    assert "- Same fact [same]" in str(session["additionalContext"])  # main session: no native
    memory(repo, "api", "- Same fact [same]\n- Fresh fact from main [fresh]\n")
    inner, _ = wake_hook(worktree, stdin)
    assert "- Fresh fact from main [fresh]" in str(inner["additionalContext"])


@pytest.mark.parametrize("stdin", ["not json", "[1, 2]", "", b"\xff"])
def test_malformed_stdin_warns_and_exits_zero(repo: Path, stdin: str | bytes) -> None:
    inner, err = wake_hook(repo, stdin)
    assert str(inner["additionalContext"]).startswith("journal-mem warning: ")
    assert "journal-mem warning: " in err


def test_no_repository_warns_and_exits_zero(tmp_path: Path) -> None:
    inner, err = wake_hook(tmp_path, hook_input(tmp_path, "SessionStart"))
    assert "not inside a git work tree" in str(inner["additionalContext"])
    assert err.count("\n") == 1


def test_unknown_agent_warns_and_exits_zero(repo: Path) -> None:
    inner, err = wake_hook(repo, hook_input(repo, "SubagentStart", agent_type="Explore",
                                            agent_id="x"))
    assert "no memory for agent 'Explore'" in str(inner["additionalContext"])
    assert "known: api, web" in err


def test_switched_off_hooks_say_so_in_one_line(repo: Path) -> None:
    stdin = hook_input(repo, "SubagentStart", agent_type="api")
    for env in ({"JMEM_DISABLE": "1"}, {"JMEM_HOOKS_WAKE": "false"}):
        proc = jmem(repo, "wake", "--hook", "claude", stdin=stdin, env=base_env(**env))
        assert (proc.returncode, proc.stdout) == (0, "")
        assert proc.stderr.count("\n") == 1 and "off" in proc.stderr
    empty = jmem(repo, "wake", "--hook", "claude", stdin=stdin, env=base_env(JMEM_DISABLE=""))
    assert json.loads(empty.stdout)["hookSpecificOutput"]  # empty value means unset
    config = repo / ".claude" / "journal-mem.toml"
    config.write_text(config.read_text().replace("# wake = true", "wake = false"))
    proc = jmem(repo, "wake", "--hook", "claude", stdin=stdin)
    assert proc.stdout == "" and "hooks.wake = false" in proc.stderr


def test_session_log_records_what_was_injected(repo: Path) -> None:
    jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Logged lesson")
    wake_hook(repo, hook_input(repo, "SubagentStart", agent_type="api", agent_id="a9"))
    log = repo / ".git" / "journal-mem" / "logs" / "sessions.jsonl"
    record = json.loads(log.read_text().splitlines()[-1])
    assert (record["session_id"], record["agent_id"], record["agent"]) == ("sess-1", "a9", "api")
    assert record["keys"] == [default_key("Logged lesson")]
    assert record["time"]


def test_hook_fast_path_imports_neither_click_nor_pydantic(repo: Path) -> None:
    code = ("import sys; from journal_mem.main import main; rc = main(['wake', '--hook', "
            "'claude']); bad = [m for m in ('click', 'pydantic', 'yaml', 'subprocess') "
            "if m in sys.modules]; print(bad, file=sys.stderr); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, env=base_env(),
                          input=hook_input(repo, "SubagentStart", agent_type="api"),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"] == "SubagentStart"


FOREIGN = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup",
                          "hooks": [{"type": "command", "command": "echo hello"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
    },
}


def test_settings_merge_keeps_foreign_hooks_and_is_idempotent(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.write_text(json.dumps(FOREIGN, indent=4))
    assert jmem(repo, "init").returncode == 0
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["permissions"] == FOREIGN["permissions"]
    assert data["hooks"]["PreToolUse"] == FOREIGN["hooks"]["PreToolUse"]
    start = data["hooks"]["SessionStart"]
    assert start[0] == FOREIGN["hooks"]["SessionStart"][0]  # in place, first
    assert start[1] == {"hooks": [{"type": "command", "command": "jmem wake --hook claude"}]}
    for event, command in (("SubagentStart", "wake"), ("Stop", "remind"),
                           ("SubagentStop", "remind")):
        assert data["hooks"][event] == [
            {"hooks": [{"type": "command", "command": f"jmem {command} --hook claude"}]}]
    before = settings.read_bytes()
    proc = jmem(repo, "init")
    assert proc.returncode == 0
    assert settings.read_bytes() == before


def test_invalid_settings_json_is_left_alone_and_reported(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.write_text("{ not json")
    proc = jmem(repo, "init")
    assert proc.returncode == 1
    assert "settings.json: not valid JSON" in proc.stderr
    assert settings.read_text() == "{ not json"


def test_init_from_worktree_writes_main_settings_and_claude_agent(repo: Path,
                                                                  worktree: Path) -> None:
    proc = jmem(worktree, "init", "--claude-agent", "reviewer")
    assert proc.returncode == 0, proc.stderr
    agent = repo / ".claude" / "agents" / "reviewer.md"
    text = agent.read_text()
    assert text.startswith("---\nname: reviewer\n") and "\nmemory: project\n" in text
    assert "jmem write --agent reviewer" in text
    assert (repo / MEM / "reviewer" / "journal").is_dir()
    assert (repo / ".claude" / "settings.json").exists()
    assert not (worktree / ".claude" / "settings.json").exists()
    agent.write_text("mine\n")
    again = jmem(worktree, "init", "--claude-agent", "reviewer")
    assert again.returncode == 0 and "kept the existing" in again.stderr
    assert agent.read_text() == "mine\n"
    assert jmem(repo, "init", "--claude-agent", "Bad Name").returncode == 1


def test_no_claude_leaves_settings_alone(repo: Path) -> None:
    assert jmem(repo, "init", "--no-claude").returncode == 0
    assert not (repo / ".claude" / "settings.json").exists()
    git(repo, "status")
    assert os.path.isdir(repo / MEM)
