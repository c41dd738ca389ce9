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


def stop(cwd: Path, session: str = "s-1", **extra: object) -> dict[str, str] | None:
    proc = jmem(cwd, "remind", "--hook", "claude", stdin=hook(cwd, "SubagentStop", session,
                                                                **extra))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def test_blocks_exactly_once_when_no_lesson_was_written(repo: Path, worktree: Path) -> None:
    start(worktree)
    first = stop(worktree)
    assert first is not None and first["decision"] == "block"
    assert "jmem write --agent api --topic" in first["reason"]
    assert set(first) == {"decision", "reason"}
    assert stop(worktree) is None
    start(worktree, "s-2")  # a new session is asked again
    assert stop(worktree, "s-2") is not None


def test_no_block_when_a_lesson_was_written_since_the_start(repo: Path, worktree: Path) -> None:
    old = jmem(worktree, "write", "--agent", "api", "--topic", "t", "--title", "Before")
    assert old.returncode == 0
    start(worktree)
    assert jmem(worktree, "write", "--agent", "api", "--topic", "t", "--title", "Learned",
                "--outbox").returncode == 0
    assert stop(worktree) is None


def test_a_lesson_from_before_the_session_does_not_count(repo: Path) -> None:
    assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Old").returncode == 0
    start(repo)
    assert stop(repo) is not None


def test_never_blocks_when_stop_hook_active_or_start_unknown(repo: Path) -> None:
    start(repo)
    assert stop(repo, stop_hook_active=True) is None
    assert stop(repo, "never-woke") is None
    assert stop(repo) is not None  # stop_hook_active did not use up the one reminder


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
