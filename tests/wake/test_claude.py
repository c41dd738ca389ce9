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


def agent_file(root: Path, file: str, name: str, memory: str = "project") -> None:
    path = root / ".claude" / "agents" / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: d\nmemory: {memory}\n---\n\nYou are it.\n")


def test_stale_worktree_subagent_gets_only_the_lines_its_native_copy_lacks(
        repo: Path, worktree: Path, tmp_path: Path) -> None:
    memory(repo, "api", "# api\n- Same fact [same]\n- Changed fact, new text [changed]\n"
                        "- Fresh fact from main [fresh]\n")
    memory(worktree, "api", "# api\n- Same fact [same]\n- Changed fact, old text [changed]\n"
                            "- Dropped fact [dropped]\n")
    agent_file(worktree, "code-review.md", "api", memory='"project"')  # name != file name
    stdin = hook_input(worktree, "SubagentStart", agent_type="api", agent_id="a")
    inner, _ = wake_hook(worktree, stdin, HOME=str(tmp_path))
    text = str(inner["additionalContext"])
    assert "Same fact" not in text  # Claude Code loads the worktree's copy itself
    assert text.count("- Fresh fact from main [fresh]") == 1
    assert text.count("- Changed fact, new text [changed]") == 1
    assert "old text" not in text
    assert "do not rely on: dropped" in text
    off, _ = wake_hook(worktree, stdin, HOME=str(tmp_path), CLAUDE_CODE_DISABLE_AUTO_MEMORY="1")
    assert str(off["additionalContext"]).count("- Same fact [same]") == 1  # nothing native


def test_main_checkout_native_agent_gets_no_memory_lines_twice(repo: Path,
                                                                tmp_path: Path) -> None:
    memory(repo, "api", "- Same fact [same]\n")
    agent_file(repo, "reviewer-file.md", "api")
    for event, extra in (("SubagentStart", {"agent_id": "a"}), ("SessionStart", {})):
        inner, _ = wake_hook(repo, hook_input(repo, event, agent_type="api", **extra),
                             HOME=str(tmp_path))  # SessionStart + agent_type: claude --agent
        assert "Same fact" not in str(inner["additionalContext"])
    session, _ = wake_hook(repo, hook_input(repo, "SessionStart"), HOME=str(tmp_path),
                           JMEM_DEFAULT_AGENT="api")
    assert "- Same fact [same]" in str(session["additionalContext"])  # plain main session
    settings = repo / ".claude" / "settings.local.json"
    settings.write_text('{"autoMemoryEnabled": false}')
    inner, _ = wake_hook(repo, hook_input(repo, "SubagentStart", agent_type="api",
                                          agent_id="b"), HOME=str(tmp_path))
    assert "- Same fact [same]" in str(inner["additionalContext"])


def test_pack_is_cut_in_utf16_units_below_the_cap(repo: Path) -> None:
    lines = [f"- Fact {i} 🚀🚀🚀🚀 about the build and the deploy pipeline [fact-{i}]"
             for i in range(400)]
    memory(repo, "api", "\n".join(lines) + "\n")
    inner, _ = wake_hook(repo, hook_input(repo, "SubagentStart", agent_type="api",
                                          agent_id="a"))
    text = str(inner["additionalContext"])
    units = len(text.encode("utf-16-le")) // 2
    assert 9_000 < units <= 9_500 < len(text) + 2_000
    assert "- Fact 0 🚀" in text and "cut" in text.splitlines()[-1]


@pytest.mark.parametrize("stdin", ["not json", "[1, 2]", "", b"\xff"])
def test_malformed_stdin_tells_the_user_not_the_model(repo: Path, stdin: str | bytes) -> None:
    proc = jmem(repo, "wake", "--hook", "claude", stdin=stdin)
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert set(out) == {"systemMessage"}
    assert str(out["systemMessage"]).startswith("journal-mem warning: ")
    assert "journal-mem warning: " in proc.stderr


def test_no_repository_tells_the_user_and_exits_zero(tmp_path: Path) -> None:
    proc = jmem(tmp_path, "wake", "--hook", "claude",
                stdin=hook_input(tmp_path, "SessionStart"))
    assert proc.returncode == 0
    assert "not inside a git work tree" in json.loads(proc.stdout)["systemMessage"]
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize("agent", ["Explore", "general-purpose", "Plan", "statusline-setup",
                                   "plugin:name"])
def test_agent_without_memory_gets_nothing(repo: Path, agent: str) -> None:
    proc = jmem(repo, "wake", "--hook", "claude",
                stdin=hook_input(repo, "SubagentStart", agent_type=agent, agent_id="x"))
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "no memory for agent" in proc.stderr


def test_main_session_without_memory_gets_only_team_wide_lessons(repo: Path) -> None:
    stdin = hook_input(repo, "SessionStart", source="startup")
    proc = jmem(repo, "wake", "--hook", "claude", stdin=stdin)
    assert (proc.returncode, proc.stdout) == (0, "")  # default agent "main" has no memory
    jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "For everyone",
         "--applies-to", "all", "--body", "b")
    inner, _ = wake_hook(repo, hook_input(repo, "SessionStart", source="startup",
                                          session_id="s2"))
    text = str(inner["additionalContext"])
    assert "For everyone" in text and "warning" not in text


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
    assert start[1] == {"hooks": [{"type": "command", "command": "jmem wake --hook claude",
                                   "timeout": 15,
                                   "statusMessage": "journal-mem: loading memory"}]}
    for event, command in (("SubagentStart", "wake"), ("Stop", "remind"),
                           ("SubagentStop", "remind"), ("UserPromptSubmit", "wake")):
        [group] = data["hooks"][event]
        assert group["hooks"][0]["command"] == f"jmem {command} --hook claude"
        assert 0 < group["hooks"][0]["timeout"] <= 15
    assert data["hooks"]["SubagentStart"][0]["matcher"] == "^(api|fork|web)$"
    assert "matcher" not in data["hooks"]["Stop"][0]
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


def test_init_recognises_our_hooks_in_exec_form_and_updates_the_matcher(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "jmem",
                                     "args": ["wake", "--hook", "claude"]}]}],
        "Stop": [{"hooks": [{"type": "command",
                             "command": "/opt/venv/bin/python -m journal_mem remind "
                                        "--hook claude"}]}],
        "SubagentStart": [{"matcher": "^(api)$", "hooks": [
            {"type": "command", "command": "jmem wake --hook claude", "timeout": 3}]}],
    }}))
    assert jmem(repo, "init", "--claude-agent", "reviewer").returncode == 0
    hooks = json.loads(settings.read_text())["hooks"]
    assert len(hooks["SessionStart"]) == len(hooks["Stop"]) == 1
    assert hooks["SessionStart"][0]["hooks"][0]["args"] == ["wake", "--hook", "claude"]
    assert hooks["SessionStart"][0]["hooks"][0]["timeout"] == 15
    [start] = hooks["SubagentStart"]
    assert start["matcher"] == "^(api|fork|reviewer|web)$"
    assert start["hooks"][0]["timeout"] == 3  # a user's own choice stays
    before = settings.read_bytes()
    assert jmem(repo, "init").returncode == 0
    assert settings.read_bytes() == before
    status = jmem(repo, "status")
    assert "Claude Code hooks: all installed" in status.stdout


def test_context_is_cut_in_utf16_units_at_a_line_end() -> None:
    from journal_mem.wake import claude as protocol

    text = "".join(f"line {i} 🦀🦀🦀\n" for i in range(2000))  # 12 chars, 15 units a line
    out = json.loads(protocol.context_output("SessionStart", text))
    sent = out["hookSpecificOutput"]["additionalContext"]
    assert protocol.utf16_len(sent) <= protocol.PACK_LIMIT < protocol.CONTEXT_LIMIT
    assert len(sent) > protocol.PACK_LIMIT * 0.7 and sent.endswith("🦀\n")
    assert protocol.utf16_len("🦀a") == 3


@pytest.mark.parametrize("text", ["", "plain ASCII text", "a — dash", "“quoted”", "🦀a",
                                  "\ud800 a lone surrogate", "é" * 3 + "𝄞" * 2])
def test_utf16_len_counts_what_the_utf16_codec_counts(text: str) -> None:
    from journal_mem.wake import claude as protocol

    assert protocol.utf16_len(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2
