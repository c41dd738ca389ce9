"""What Claude Code 2.1.332 sends around forks, background subagents and compaction, and
what journal-mem makes of it: a fork inherits what its parent was told (no second pack,
no second reminder), a session is not reminded while delegated work runs, the client's
own helpers are not agents. Inputs are the payloads the real CLI sent (tests/e2e/payloads/).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import REPO_ROOT, base_env, jmem

MEM = Path(".claude/agent-memory")
PAYLOADS = REPO_ROOT / "tests" / "e2e" / "payloads"
ENV = base_env(JMEM_DEFAULT_AGENT="api")
EDIT = {"type": "assistant", "message": {"content": [
    {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "a.py"}}]}}


def payload(name: str, cwd: Path, **extra: object) -> dict[str, object]:
    data: dict[str, object] = json.loads((PAYLOADS / name).read_text())
    data.update(cwd=str(cwd), **extra)
    return data


def run(cwd: Path, command: str, data: dict[str, object]) -> str:
    """Run `jmem wake|remind --hook claude` on `data`; the context it gave ("" = none)."""
    proc = jmem(cwd, command, "--hook", "claude", stdin=json.dumps(data), env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr, proc.stderr
    answer = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return str(answer.get("hookSpecificOutput", {}).get("additionalContext", ""))


def worked(path: Path, *extra: dict[str, object]) -> str:
    """A transcript that shows an edit (work worth a lesson), and `extra` records."""
    with path.open("a") as fh:
        for record in (EDIT, *extra):
            fh.write(json.dumps(record) + "\n")
    return str(path)


def start(repo: Path) -> dict[str, object]:
    (repo / MEM / "api" / "MEMORY.md").write_text("# api\n- Deploys go through staging first "
                                                  "[deploy-staging]\n")
    data = payload("session_start_resume.json", repo, source="startup")
    assert "[deploy-staging]" in run(repo, "wake", data)
    return data


def log(repo: Path) -> list[dict[str, object]]:
    path = repo / ".git" / "journal-mem" / "logs" / "sessions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_no_reminder_while_a_background_subagent_runs_then_one_at_the_end(
        repo: Path, tmp_path: Path) -> None:
    start(repo)
    path = worked(tmp_path / "main.jsonl")
    paused = payload("stop_background_tasks.json", repo, transcript_path=path)
    assert paused["background_tasks"]  # as sent: the subagent still running
    assert run(repo, "remind", paused) == ""
    assert run(repo, "remind", paused) == ""  # and not at a second pause either
    done = payload("stop.json", repo, transcript_path=path)
    assert done["background_tasks"] == []
    assert "record what you LEARNED" in run(repo, "remind", done)
    assert run(repo, "remind", done) == ""  # once


def test_a_background_shell_does_not_hold_the_reminder_back(repo: Path,
                                                            tmp_path: Path) -> None:
    start(repo)
    server = {"id": "b1", "type": "shell", "status": "running", "description": "dev server",
              "command": "npm run dev"}
    data = payload("stop_background_tasks.json", repo, background_tasks=[server],
                   transcript_path=worked(tmp_path / "main.jsonl"))
    assert "record what you LEARNED" in run(repo, "remind", data)  # it may never end


def test_a_subagent_that_lists_itself_as_running_is_at_its_end(repo: Path,
                                                               tmp_path: Path) -> None:
    (repo / MEM / "api" / "MEMORY.md").write_text("# api\n- A fact [a-fact]\n")
    begin = payload("subagent_start.json", repo, agent_type="api")
    assert "[a-fact]" in run(repo, "wake", begin)
    end = payload("subagent_stop_background.json", repo, agent_type="api",
                  agent_id=begin["agent_id"],
                  agent_transcript_path=worked(tmp_path / "agent.jsonl"))
    assert [t["id"] for t in end["background_tasks"]] == [begin["agent_id"]]
    assert "record what you LEARNED" in run(repo, "remind", end)


def test_a_fork_subagent_gets_no_pack_and_shares_its_parents_reminder(
        repo: Path, tmp_path: Path) -> None:
    parent = start(repo)
    fork = payload("subagent_start_fork.json", repo, session_id=parent["session_id"])
    assert run(repo, "wake", fork) == ""  # the parent's pack is in its conversation
    [record] = [r for r in log(repo) if r["event"] == "SubagentStart"]
    assert record["agent"] == "api" and record["keys"] == []
    # its live checks bring only what the parent did not hold either
    tool = payload("post_tool_use_read.json", repo, session_id=parent["session_id"],
                   agent_id=fork["agent_id"], agent_type="fork")
    state = repo / ".git" / "journal-mem" / "sessions" / \
        f"{parent['session_id']}--{fork['agent_id']}.json"
    assert json.loads(state.read_text())["agent"] == "api"
    (repo / MEM / "api" / "MEMORY.md").write_text("# api\n- Deploys go through staging first "
                                                  "[deploy-staging]\n- New fact [new-fact]\n")
    subprocess.run(["touch", "-d", "2000-01-01", str(state)], check=True)
    news = run(repo, "wake", tool)
    assert "[new-fact]" in news and "[deploy-staging]" not in news
    # the fork ends with work: reminded, as its parent; the parent is not reminded again
    stop = payload("subagent_stop_background.json", repo, session_id=parent["session_id"],
                   agent_id=fork["agent_id"], agent_type="fork",
                   agent_transcript_path=worked(tmp_path / "fork.jsonl"))
    assert "jmem write --agent api" in run(repo, "remind", stop)
    end = payload("stop.json", repo, transcript_path=worked(tmp_path / "main.jsonl"))
    assert run(repo, "remind", end) == ""


def test_a_fork_of_a_session_without_memory_gets_nothing(repo: Path) -> None:
    fork = payload("subagent_start_fork.json", repo)
    assert run(repo, "wake", fork) == ""
    assert not list((repo / ".git" / "journal-mem").glob("sessions/*.json"))


def test_a_session_holding_the_reminder_in_its_transcript_is_not_reminded_again(
        repo: Path, tmp_path: Path) -> None:
    start(repo)
    told = {"type": "attachment", "attachment": {
        "type": "hook_additional_context", "hookEvent": "Stop",
        "content": ["journal-mem: before you finish, record what you LEARNED in this session "
                    "(not what you did) as one lesson"]}}
    path = worked(tmp_path / "copied.jsonl", told)  # what a fork's copied transcript holds
    assert run(repo, "remind", payload("stop.json", repo, transcript_path=path)) == ""


def test_reading_the_reminders_words_in_a_file_is_not_being_reminded(repo: Path,
                                                                     tmp_path: Path) -> None:
    start(repo)
    source = {"type": "user", "message": {"content": [{
        "type": "tool_result", "tool_use_id": "t2",
        "content": "f\"journal-mem: before you finish, record what you LEARNED in this session"}]}}
    path = worked(tmp_path / "main.jsonl", source)  # a session reading remind.py
    assert "jmem write" in run(repo, "remind", payload("stop.json", repo, transcript_path=path))


def test_a_session_forked_with_fork_session_takes_its_parents_reminder(
        repo: Path, tmp_path: Path) -> None:
    parent = start(repo)
    path = worked(tmp_path / "parent.jsonl")
    assert run(repo, "remind", payload("stop.json", repo, transcript_path=path))
    forked = payload("session_start_resume.json", repo,
                     session_id="00000000-0000-4000-8000-0000000000ff")
    # `claude --resume PARENT --fork-session`: the hook finds PARENT on that command line
    argv = ["sh", "-c", '"$0" -m journal_mem wake --hook claude; :', sys.executable,
            "--resume", str(parent["session_id"]), "--fork-session"]
    proc = subprocess.run(argv, cwd=repo, env={**ENV, "PYTHONPATH": str(REPO_ROOT)},
                          input=json.dumps(forked), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    copy = worked(tmp_path / "fork.jsonl")  # the parent's edit, copied
    stop = payload("stop.json", repo, session_id=forked["session_id"], transcript_path=copy)
    assert run(repo, "remind", stop) == ""


def test_the_compaction_helpers_subagent_stop_is_not_an_agent(repo: Path,
                                                              tmp_path: Path) -> None:
    start(repo)  # the main session of the default agent has memory and did work
    helper = payload("subagent_stop_background.json", repo, agent_type="", agent_id="",
                     background_tasks=[], transcript_path=worked(tmp_path / "main.jsonl"),
                     agent_transcript_path="")
    assert run(repo, "remind", helper) == ""
    end = payload("stop.json", repo, transcript_path=str(tmp_path / "main.jsonl"))
    assert "record what you LEARNED" in run(repo, "remind", end)  # the reminder is intact
