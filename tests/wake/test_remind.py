"""`jmem remind --hook claude`: block once per session when no lesson was recorded."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import base_env, jmem


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


def test_no_reminder_when_a_lesson_was_written_since_the_start(repo: Path, worktree: Path,
                                                                tmp_path: Path) -> None:
    old = jmem(worktree, "write", "--agent", "api", "--topic", "t", "--title", "Before")
    assert old.returncode == 0
    start(worktree)
    path = transcript(tmp_path / "t.jsonl", EDIT)
    assert jmem(worktree, "write", "--agent", "api", "--topic", "t", "--title", "Learned",
                "--outbox").returncode == 0
    assert stop(worktree, agent_transcript_path=path) is None


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


def test_resume_and_compaction_keep_the_clock(repo: Path, tmp_path: Path) -> None:
    start(repo)
    assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Learned").returncode \
        == 0
    for source in ("compact", "resume"):
        proc = jmem(repo, "wake", "--hook", "claude",
                    stdin=hook(repo, "SessionStart", source=source, agent_id="a-1"))
        assert proc.returncode == 0
    # the lesson was written after the session started, before the compaction
    assert stop(repo, agent_transcript_path=transcript(tmp_path / "t.jsonl", EDIT)) is None


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
