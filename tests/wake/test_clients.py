"""Every client gets its own answer format, or nothing (wake/clients.py).

The inputs are the payloads the real clients sent (tests/e2e/payloads/codex-*.json,
gemini-*.json, captured by the e2e tests) and, for Cursor and Copilot, the shapes their
documentation gives (cursor-*.json, copilot-*.json), with paths and ids filled in.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import base_env, git, jmem

PAYLOADS = Path(__file__).parent.parent / "e2e" / "payloads"
MEM = Path(".claude/agent-memory")


def sample(name: str, key: str = "stdin") -> dict[str, Any]:
    value = json.loads((PAYLOADS / name).read_text())[key]
    assert isinstance(value, dict)
    return value


def fill(payload: dict[str, Any], repo: Path, session: str) -> str:
    """A recorded payload aimed at `repo` (its placeholders replaced)."""
    text = json.dumps(payload).replace("<tmp>/proj", str(repo)).replace("/path/to/project",
                                                                        str(repo))
    data = json.loads(text.replace('"/path"', json.dumps(str(repo))))
    for key in ("session_id", "sessionId", "conversation_id"):
        if key in data:
            data[key] = session
    if "workspace_roots" in data:
        data["workspace_roots"] = [str(repo)]
    return json.dumps(data)


def run(repo: Path, command: str, client: str, payload: str) -> tuple[dict[str, Any], str]:
    proc = jmem(repo, command, "--hook", client, stdin=payload,
                env=base_env(JMEM_DEFAULT_AGENT="api"))
    assert proc.returncode == 0, proc.stderr
    return (json.loads(proc.stdout) if proc.stdout.strip() else {}), proc.stderr


def context(answer: dict[str, Any]) -> str:
    inner = answer.get("hookSpecificOutput")
    return str(inner["additionalContext"]) if isinstance(inner, dict) else ""


def write(cwd: Path, title: str, *extra: str) -> None:
    proc = jmem(cwd, "write", "--agent", "api", "--topic", "ops", "--title", title, *extra,
                "--body", "b")
    assert proc.returncode == 0, proc.stderr


@pytest.fixture()
def memory(repo: Path) -> Path:
    (repo / MEM / "api" / "MEMORY.md").write_text(
        "# api\n- Deploys go through staging first [deploy-staging]\n")
    return repo


def age(repo: Path, session: str) -> None:
    """Make the session's last live check look old (PostToolUse checks every few seconds)."""
    state = repo / ".git" / "journal-mem" / "sessions" / f"{session}--main.json"
    os.utime(state, (1, 1))


def test_codex_gets_the_pack_once_corrections_live_and_the_reminder_as_a_block(
        memory: Path) -> None:
    repo = memory
    start = sample("codex-SessionStart.json")
    answer, _ = run(repo, "wake", "codex", fill(start, repo, "cx-1"))
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert context(answer).count("[deploy-staging]") == 1
    prompt = fill(sample("codex-UserPromptSubmit.json"), repo, "cx-1")
    assert run(repo, "wake", "codex", prompt)[0] == {}
    write(repo, "Deploys go straight to production", "--supersedes", "deploy-staging")
    update, _ = run(repo, "wake", "codex", prompt)
    assert update["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "Deploys go straight to production" in context(update)
    assert "do not rely on: deploy-staging" in context(update)
    assert run(repo, "wake", "codex", prompt)[0] == {}  # told once
    # resumed: Codex replays the old context itself, so only what changed comes
    resume = dict(start, source="resume")
    assert "[deploy-staging]" not in context(run(repo, "wake", "codex",
                                                 fill(resume, repo, "cx-1"))[0])

    # the lessons above were written during cx-1: it is not reminded; a new session is
    assert run(repo, "remind", "codex", fill(sample("codex-Stop.json"), repo, "cx-1")) \
        == ({}, "")
    run(repo, "wake", "codex", fill(start, repo, "cx-9"))
    stop = fill(sample("codex-Stop.json"), repo, "cx-9")
    assert run(repo, "remind", "codex", stop)[0] == {}  # no work done yet
    tool = sample("codex-PostToolUse.json")
    tool["tool_input"] = {"command": "git commit -qm 'fix the deploy'"}
    age(repo, "cx-9")
    run(repo, "wake", "codex", fill(tool, repo, "cx-9"))
    reminder, _ = run(repo, "remind", "codex", stop)
    assert set(reminder) == {"decision", "reason"} and reminder["decision"] == "block"
    assert "jmem write --agent api" in reminder["reason"]
    assert run(repo, "remind", "codex", stop)[0] == {}  # once per session
    active = json.loads(stop)
    active["stop_hook_active"] = True
    assert run(repo, "remind", "codex", json.dumps(active))[0] == {}


def test_codex_post_tool_use_brings_a_new_lesson(memory: Path) -> None:
    repo = memory
    run(repo, "wake", "codex", fill(sample("codex-SessionStart.json"), repo, "cx-2"))
    write(repo, "A lesson written meanwhile")
    age(repo, "cx-2")
    answer, _ = run(repo, "wake", "codex", fill(sample("codex-PostToolUse.json"), repo, "cx-2"))
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "A lesson written meanwhile" in context(answer)


def test_gemini_events_are_answered_under_their_own_names(memory: Path) -> None:
    repo = memory
    answer, _ = run(repo, "wake", "gemini", fill(sample("gemini-SessionStart.json"), repo,
                                                 "gm-1"))
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "[deploy-staging]" in context(answer)
    before = fill(sample("gemini-BeforeAgent.json"), repo, "gm-1")
    assert run(repo, "wake", "gemini", before)[0] == {}
    write(repo, "Use <b>bold</b> & a -> b in docs")
    live, _ = run(repo, "wake", "gemini", before)
    assert live["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert "Use <b>bold</b> & a -> b in docs" in context(live)
    write(repo, "Another lesson")
    age(repo, "gm-1")
    tool = sample("gemini-AfterTool.json")
    after, _ = run(repo, "wake", "gemini", fill(tool, repo, "gm-1"))
    assert after["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert "Another lesson" in context(after)
    # the events jmem does not serve get nothing
    for other in ("BeforeModel", "AfterModel", "BeforeTool", "PreCompress", "SessionEnd"):
        assert run(repo, "wake", "gemini", fill(sample(f"gemini-{other}.json"), repo,
                                                "gm-1")) == ({}, "")
    run(repo, "wake", "gemini", fill(sample("gemini-SessionStart.json"), repo, "gm-9"))
    end = fill(sample("gemini-AfterAgent.json"), repo, "gm-9")
    assert run(repo, "remind", "gemini", end)[0] == {}  # no work
    tool["tool_input"] = {"command": "git add -A && git commit -m docs"}
    age(repo, "gm-9")
    run(repo, "wake", "gemini", fill(tool, repo, "gm-9"))
    reminder, _ = run(repo, "remind", "gemini", end)
    assert reminder["decision"] == "deny" and "jmem write --agent api" in reminder["reason"]


def test_a_resumed_gemini_session_gets_the_whole_pack_again(memory: Path) -> None:
    """Gemini CLI resumes without the first prompt, which carried the pack."""
    repo = memory
    start = sample("gemini-SessionStart.json")
    run(repo, "wake", "gemini", fill(start, repo, "gm-2"))
    again, _ = run(repo, "wake", "gemini", fill(dict(start, source="resume"), repo, "gm-2"))
    assert context(again).count("[deploy-staging]") == 1


FOREIGN = [
    ("cursor-common.json", "stdin_common"),
    ("cursor-stop.json", "stdin"),
    ("copilot-sessionStart.json", "stdin_camelCase"),
    ("copilot-userPromptSubmitted.json", "stdin_camelCase"),
    ("copilot-agentStop.json", "stdin_camelCase"),
    ("copilot-toolUse.json", "postToolUse_camelCase"),
]


@pytest.mark.parametrize(("name", "key"), FOREIGN)
def test_cursor_and_copilots_own_hook_payloads_get_nothing_from_the_claude_hooks(
        memory: Path, name: str, key: str) -> None:
    """Cursor can run `.claude/settings.json`'s hooks, and Copilot's camelCase shape is
    its `.github/hooks` one: a Claude-shaped answer would be misread, so they get none
    (and nothing is recorded as given)."""
    repo = memory
    payload = fill(sample(name, key), repo, "fx-1")
    for command in ("wake", "remind"):
        answer, err = run(repo, command, "claude", payload)
        assert answer == {}
        client = "Cursor" if name.startswith("cursor") else "GitHub Copilot CLI (.github/hooks)"
        assert f"a {client} hook payload: nothing answered" in err
    assert not (repo / ".git" / "journal-mem" / "sessions").exists()


def test_copilot_running_the_claude_hooks_is_answered_only_at_stop(memory: Path) -> None:
    """Copilot CLI (payloads from the real CLI) ignores what its start, prompt and tool
    hooks print: they print nothing, the session is still tracked, and the reminder
    comes at Stop as the block Copilot reads (its reason is the next prompt), once."""
    repo = memory
    start = fill(sample("copilot-cli.json", "SessionStart"), repo, "cp-1")
    assert run(repo, "wake", "claude", start) == ({}, "")
    assert (repo / ".git" / "journal-mem" / "sessions" / "cp-1--main.json").is_file()
    prompt = fill(sample("copilot-cli.json", "UserPromptSubmit"), repo, "cp-1")
    write(repo, "Deploys go straight to production", "--supersedes", "deploy-staging")
    assert run(repo, "wake", "claude", prompt) == ({}, "")  # printed to nobody: kept
    stop = fill(sample("copilot-cli.json", "Stop"), repo, "cp-1")
    told, _ = run(repo, "remind", "claude", stop)  # the change, at the turn's end
    assert set(told) == {"decision", "reason"} and told["decision"] == "block"
    assert "do not rely on: deploy-staging" in told["reason"]
    assert "jmem write --agent api" not in told["reason"]  # no work yet
    assert run(repo, "remind", "claude", stop)[0] == {}
    for tool in ("PostToolUse_Write", "PostToolUse_Bash"):
        edit = sample("copilot-cli.json", tool)
        assert run(repo, "wake", "claude", fill(edit, repo, "cp-1")) == ({}, "")
    reminder, _ = run(repo, "remind", "claude", stop)  # the Write was work
    assert reminder["decision"] == "block" and "jmem write --agent api" in reminder["reason"]
    assert run(repo, "remind", "claude", stop)[0] == {}  # once per session
    log = (repo / ".git" / "journal-mem" / "logs" / "sessions.jsonl").read_text().splitlines()
    starts = [json.loads(line) for line in log if '"SessionStart"' in line]
    assert starts and all(s["keys"] == [] and s["chars"] == 0 for s in starts)  # not given


def test_a_claude_code_payload_still_gets_claude_code_answers(memory: Path) -> None:
    repo = memory
    data = json.loads((PAYLOADS / "user_prompt_submit.json").read_text())
    data.update(cwd=str(repo), session_id="cc-1")
    start = dict(data, hook_event_name="SessionStart", source="startup")
    answer, _ = run(repo, "wake", "claude", json.dumps(start))
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "[deploy-staging]" in context(answer)


def test_a_broken_payload_is_a_warning_in_no_client_format(repo: Path) -> None:
    for client in ("codex", "gemini"):
        proc = jmem(repo, "wake", "--hook", client, stdin="not json")
        assert proc.returncode == 0 and proc.stdout == ""
        assert "memory not loaded" in proc.stderr
    git(repo, "status")


# each client's (declared --hook, start, tool, end-of-turn samples)
TURNS = {"codex": ("codex", ("codex-SessionStart.json", "stdin"),
                   ("codex-PostToolUse.json", "stdin"), ("codex-Stop.json", "stdin")),
         "gemini": ("gemini", ("gemini-SessionStart.json", "stdin"),
                    ("gemini-AfterTool.json", "stdin"), ("gemini-AfterAgent.json", "stdin")),
         "copilot": ("claude", ("copilot-cli.json", "SessionStart"),
                     ("copilot-cli.json", "PostToolUse_Bash"), ("copilot-cli.json", "Stop"))}


@pytest.mark.parametrize("client", ["codex", "gemini", "copilot"])
def test_only_the_sessions_own_lesson_answers_its_reminder(memory: Path, client: str) -> None:
    """Codex, Gemini and Copilot have their tool hooks mark the session: a `jmem write`
    it ran answers its reminder; the same agent's lesson from another session does not."""
    repo = memory
    hook, *names = TURNS[client]
    tool = sample(*names[1])
    for session in ("own", "other"):
        run(repo, "wake", hook, fill(sample(*names[0]), repo, session))
        tool["tool_input"] = {"command": "git commit -qm 'fix the deploy'"}
        age(repo, session)
        run(repo, "wake", hook, fill(tool, repo, session))
    write(repo, "Written by a third session of the same agent")
    tool["tool_input"] = {"command": "jmem write --agent api --topic ops --title 'Learned'"}
    age(repo, "own")
    run(repo, "wake", hook, fill(tool, repo, "own"))
    own, _ = run(repo, "remind", hook, fill(sample(*names[2]), repo, "own"))
    assert "jmem write --agent api" not in own.get("reason", "")
    other, _ = run(repo, "remind", hook, fill(sample(*names[2]), repo, "other"))
    assert "jmem write --agent api" in other["reason"]


def test_a_failed_jmem_write_in_gemini_does_not_answer_the_reminder(memory: Path) -> None:
    """Gemini says a shell command's exit code only in its text ("Exit Code: N"): a
    `jmem write` that exited 1 recorded nothing, so the reminder still asks; one that
    says "Exit Code: 0" answers it."""
    repo = memory
    hook, *names = TURNS["gemini"]
    tool = sample(*names[1])
    for session, code in (("failed", "1"), ("passed", "0")):
        run(repo, "wake", hook, fill(sample(*names[0]), repo, session))
        tool["tool_input"] = {"command": "git commit -qm 'fix the deploy'"}  # work done
        age(repo, session)
        run(repo, "wake", hook, fill(tool, repo, session))
        tool["tool_input"] = {"command": "jmem write --agent api --topic ops --title 'Learned'"}
        tool["tool_response"] = {"llmContent": f"<untrusted_context>\nOutput: jmem: no\n"
                                               f"Exit Code: {code}\n</untrusted_context>"}
        age(repo, session)
        run(repo, "wake", hook, fill(tool, repo, session))
    failed, _ = run(repo, "remind", hook, fill(sample(*names[2]), repo, "failed"))
    assert "jmem write --agent api" in failed["reason"]
    passed, _ = run(repo, "remind", hook, fill(sample(*names[2]), repo, "passed"))
    assert "jmem write --agent api" not in passed.get("reason", "")


@pytest.mark.parametrize("client", ["codex", "gemini", "copilot"])
def test_a_correction_after_the_turns_last_tool_call_comes_with_its_end(
        memory: Path, client: str) -> None:
    """Codex's Stop, Gemini's AfterAgent and Copilot's Stop are the turn's last hooks: a
    correction not yet given continues the turn with it (once), and comes with the
    reminder."""
    repo = memory
    hook, *names = TURNS[client]
    run(repo, "wake", hook, fill(sample(*names[0]), repo, "c-1"))
    end = fill(sample(*names[2]), repo, "c-1")
    assert run(repo, "remind", hook, end)[0] == {}  # nothing changed, no work
    write(repo, "Deploys go straight to production", "--supersedes", "deploy-staging")
    told, _ = run(repo, "remind", hook, end)
    assert told["decision"] == STOP[client]
    assert "Deploys go straight to production" in told["reason"]
    assert "do not rely on: deploy-staging" in told["reason"]
    assert "jmem write --agent api" not in told["reason"]  # no work: no reminder
    assert run(repo, "remind", hook, end)[0] == {}  # given once
    tool = sample(*names[1])
    tool["tool_input"] = {"command": "git commit -qm 'fix the deploy'"}
    run(repo, "wake", hook, fill(tool, repo, "c-1"))
    write(repo, "Staging is gone for good")
    both, _ = run(repo, "remind", hook, end)
    assert "Staging is gone for good" in both["reason"]
    assert "jmem write --agent api" in both["reason"]


STOP = {"codex": "block", "gemini": "deny", "copilot": "block"}


def test_a_tool_hooks_work_mark_survives_a_parallel_hook_saving_the_state(
        memory: Path) -> None:
    """Codex and Gemini fire one tool hook per parallel call at once: the hook that
    delivers a change saves the state it read under the session's lock, so a work mark
    written beside it without the lock was undone (the reminder then never came)."""
    import subprocess
    import sys

    from journal_mem.wake import sessions

    repo = memory
    run(repo, "wake", "gemini", fill(sample("gemini-SessionStart.json"), repo, "race"))
    path = str(repo / ".git" / "journal-mem" / "sessions" / "race--main.json")
    tool = sample("gemini-AfterTool.json")
    tool["tool_input"] = {"command": "git commit -qm 'fix the deploy'"}
    with sessions.SessionLock(path, 3.0) as held:  # a parallel hook delivering a change
        assert held
        stale = sessions.load_state(path)
        assert stale is not None and stale.get("worked") is not True
        hook = subprocess.Popen([sys.executable, "-m", "journal_mem", "wake", "--hook",
                                 "gemini"], cwd=repo, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=base_env(JMEM_DEFAULT_AGENT="api"))
        assert hook.stdin is not None
        hook.stdin.write(fill(tool, repo, "race").encode())
        hook.stdin.close()
        time.sleep(0.8)  # the commit's hook runs meanwhile
        sessions.save_state(path, stale)  # what the delivering hook read, saved
    assert hook.wait(timeout=30) == 0
    state = sessions.load_state(path)
    assert state is not None and state.get("worked") is True
