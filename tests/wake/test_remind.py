"""`jmem remind --hook claude`: block once per session when no lesson was recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import base_env, jmem

MEM = Path(".claude/agent-memory")


def hook(cwd: Path, event: str, session: str = "s-1", **extra: object) -> str:
    data: dict[str, object] = {"session_id": session, "cwd": str(cwd),
                               "hook_event_name": event, "agent_type": "api", "agent_id": "a-1"}
    data.update(extra)
    return json.dumps(data)


def start(cwd: Path, session: str = "s-1") -> None:
    proc = jmem(cwd, "wake", "--hook", "claude", stdin=hook(cwd, "SubagentStart", session))
    assert proc.returncode == 0 and "hookSpecificOutput" in proc.stdout, proc.stderr


EDIT = {"type": "assistant", "message": {"content": [
    {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "a.py"}}]}}
READ = {"type": "assistant", "message": {"content": [
    {"type": "tool_use", "id": "t0", "name": "Read", "input": {"file_path": "a.py"}}]}}


def transcript(path: Path, *records: dict[str, object]) -> str:
    with path.open("a") as fh:
        for record in records:
            fh.write(json.dumps(record, separators=(",", ":")) + "\n")
    return str(path)


def stop(cwd: Path, session: str = "s-1", **extra: object) -> dict[str, object] | None:
    proc = jmem(cwd, "remind", "--hook", "claude", stdin=hook(cwd, "SubagentStop", session,
                                                                **extra))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def reminded(out: dict[str, object] | None) -> str:
    """The reminder text, checking it comes as context (not `decision: block`)."""
    assert out is not None and set(out) == {"hookSpecificOutput"}
    inner = out["hookSpecificOutput"]
    assert isinstance(inner, dict) and inner["hookEventName"] == "SubagentStop"
    return str(inner["additionalContext"])


def test_reminds_once_as_context_only_after_work(repo: Path, worktree: Path,
                                                 tmp_path: Path) -> None:
    start(worktree)
    path = transcript(tmp_path / "t.jsonl", READ)
    assert stop(worktree, agent_transcript_path=path) is None  # a plain chat: no reminder
    transcript(tmp_path / "t.jsonl", EDIT)
    text = reminded(stop(worktree, agent_transcript_path=path))
    assert "jmem write --agent api --topic" in text
    assert stop(worktree, agent_transcript_path=path) is None  # once per session
    start(worktree, "s-2")  # a new session is asked again
    assert stop(worktree, "s-2", agent_transcript_path=path) is not None


def test_a_commit_counts_as_work(repo: Path, tmp_path: Path) -> None:
    start(repo)
    bash = {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "name": "Bash", "input": {"command": "git commit -qm fix"}}]}}
    path = transcript(tmp_path / "t.jsonl", bash)
    assert "jmem write" in reminded(stop(repo, agent_transcript_path=path))


def call(tool_id: str, name: str, **tool_input: object) -> dict[str, object]:
    """A transcript line: the model calls a tool."""
    return {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}}


def result(tool_id: str, error: bool = False) -> dict[str, object]:
    """A transcript line: the tool's answer (Claude Code marks a failure `is_error`)."""
    return {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": tool_id, "is_error": error,
         "content": "Exit code 1" if error else "ok"}]}}


def write_call(worktree: Path, tool_id: str = "w1") -> dict[str, object]:
    return call(tool_id, "Bash", command=f"cd {worktree} && jmem write --agent api --topic t "
                                         "--title 'Learned' <<'EOF'\nwhy\nEOF")


@pytest.mark.parametrize("lesson", [
    "jmem write", "python -m journal_mem -C /repo write", "mcp", "native memory file"])
def test_each_way_the_session_records_a_lesson_answers_its_reminder(
        repo: Path, worktree: Path, tmp_path: Path, lesson: str) -> None:
    start(worktree)
    if lesson == "mcp":
        made = call("w1", "mcp__journal-mem__write_lesson", agent="api", topic="t",
                    title="Learned")
    elif lesson == "native memory file":
        made = call("w1", "Write", file_path=str(worktree / MEM / "api" / "learned.md"),
                    content="---\nname: learned\n---\nwhy")
    else:
        made = call("w1", "Bash", command=f"{lesson} --agent api --topic t --title Learned")
    path = transcript(tmp_path / "t.jsonl", EDIT, made)
    transcript(tmp_path / "t.jsonl", result("w1"))
    assert stop(worktree, agent_transcript_path=path) is None


def test_a_lesson_written_by_another_session_of_the_same_agent_does_not_count(
        repo: Path, worktree: Path, tmp_path: Path) -> None:
    """A teammate's correction or a parallel session's lesson, same agent name, written
    while this session runs: this session still did work and recorded nothing."""
    start(worktree)
    assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title",
                "Written by another session", "--outbox").returncode == 0
    path = transcript(tmp_path / "t.jsonl", EDIT)
    assert reminded(stop(worktree, agent_transcript_path=path))


def test_a_failed_write_does_not_count_and_a_late_answer_does(repo: Path, worktree: Path,
                                                               tmp_path: Path) -> None:
    start(worktree)
    path = transcript(tmp_path / "t.jsonl", EDIT, write_call(worktree, "w1"), result("w1", True))
    assert reminded(stop(worktree, agent_transcript_path=path))
    start(worktree, "s-2")
    path2 = transcript(tmp_path / "t2.jsonl", READ, write_call(worktree, "w2"))
    assert stop(worktree, "s-2", agent_transcript_path=path2) is None  # no work yet
    transcript(tmp_path / "t2.jsonl", result("w2"), EDIT)  # the answer, read the next time
    assert stop(worktree, "s-2", agent_transcript_path=path2) is None


def test_a_subagents_lesson_answers_its_parent_session(repo: Path, worktree: Path,
                                                       tmp_path: Path) -> None:
    start(worktree)  # the subagent a-1 of session s-1
    main = jmem(worktree, "wake", "--hook", "claude",
                stdin=hook(worktree, "SessionStart", agent_id="", agent_type="",
                           source="startup"))
    assert main.returncode == 0
    sub = transcript(tmp_path / "sub.jsonl", EDIT, write_call(worktree), result("w1"))
    assert stop(worktree, agent_transcript_path=sub) is None
    parent = transcript(tmp_path / "main.jsonl", EDIT)
    out = jmem(worktree, "remind", "--hook", "claude",
               stdin=hook(worktree, "Stop", agent_id="", agent_type="",
                          transcript_path=parent))
    assert out.returncode == 0 and out.stdout.strip() == "", out.stdout


def test_a_lesson_from_before_the_session_does_not_count(repo: Path, tmp_path: Path) -> None:
    assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Old").returncode == 0
    start(repo)
    assert stop(repo, agent_transcript_path=transcript(tmp_path / "t.jsonl", EDIT)) is not None


def test_never_when_stop_hook_active_or_start_unknown(repo: Path, tmp_path: Path) -> None:
    start(repo)
    path = transcript(tmp_path / "t.jsonl", EDIT)
    assert stop(repo, stop_hook_active=True, agent_transcript_path=path) is None
    assert stop(repo, "never-woke", agent_transcript_path=path) is None
    assert stop(repo, agent_transcript_path=path) is not None  # the one reminder is left


def test_resume_and_compaction_keep_what_the_session_did(repo: Path, tmp_path: Path) -> None:
    start(repo)
    path = transcript(tmp_path / "t.jsonl", READ, write_call(repo), result("w1"))
    assert stop(repo, agent_transcript_path=path) is None  # read: no work yet, one lesson
    for source in ("compact", "resume"):
        proc = jmem(repo, "wake", "--hook", "claude",
                    stdin=hook(repo, "SessionStart", source=source, agent_id="a-1"))
        assert proc.returncode == 0
    # the lesson was recorded before the compaction, in the transcript read before it
    fresh = transcript(tmp_path / "after.jsonl", EDIT)
    assert stop(repo, agent_transcript_path=fresh) is None


def test_errors_and_switches_never_block(repo: Path, tmp_path: Path) -> None:
    for stdin in ("garbage", hook(tmp_path, "Stop")):
        proc = jmem(tmp_path, "remind", "--hook", "claude", stdin=stdin)
        assert (proc.returncode, proc.stdout) == (0, "")
        assert proc.stderr.startswith("journal-mem warning: ")
    start(repo)
    for env in ({"JMEM_DISABLE": "1"}, {"JMEM_HOOKS_REMIND": "off"}):
        proc = jmem(repo, "remind", "--hook", "claude", stdin=hook(repo, "SubagentStop"),
                    env=base_env(**env))
        assert (proc.returncode, proc.stdout) == (0, "")
        assert "reminder is off" in proc.stderr


def test_a_session_stamp_reads_back_as_the_time_it_was_made() -> None:
    """`sessions.stamp` writes what `now().isoformat(timespec="milliseconds")` writes
    (the reminder reads a session's start back with `parse_time`), without `datetime`."""
    import datetime as dt
    import re

    from journal_mem.wake import sessions

    before = sessions.now()
    text = sessions.stamp()
    after = dt.datetime.now(dt.UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", text), text
    assert text == sessions.parse_time(text).isoformat(timespec="milliseconds")  # type: ignore[union-attr]
    assert before <= sessions.parse_time(text) <= after  # type: ignore[operator]


def test_a_stop_hook_that_cannot_get_the_lock_leaves_the_state_to_its_holder(
        repo: Path, worktree: Path, tmp_path: Path) -> None:
    from journal_mem.wake import sessions

    start(worktree)
    [path] = (repo / ".git" / "journal-mem" / "sessions").glob("s-1--a-1.json")
    before = path.read_bytes()
    log = transcript(tmp_path / "t.jsonl", READ, EDIT)
    with sessions.SessionLock(str(path), 0) as held:  # a live hook of the subagent, stuck
        assert held
        stop(worktree, agent_transcript_path=log)
        assert path.read_bytes() == before  # its scan of the transcript is not recorded
    stop(worktree, agent_transcript_path=log)
    assert json.loads(path.read_text())["worked"] is True  # recorded once it had the lock
