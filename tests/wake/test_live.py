"""Resume, compaction and live corrections: a running session gets each change once."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import base_env, jmem

MEM = Path(".claude/agent-memory")


def hook(cwd: Path, event: str, session: str = "s-1", **extra: object) -> dict[str, object]:
    """Run the wake hook for `event`; the answer (empty dict when it printed nothing)."""
    data: dict[str, object] = {"session_id": session, "cwd": str(cwd), "hook_event_name": event}
    data.update(extra)
    proc = jmem(cwd, "wake", "--hook", "claude", stdin=json.dumps(data),
                env=base_env(JMEM_DEFAULT_AGENT="api"))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def context(answer: dict[str, object]) -> str:
    inner = answer.get("hookSpecificOutput")
    return str(inner["additionalContext"]) if isinstance(inner, dict) else ""


def setup(repo: Path) -> None:
    path = repo / MEM / "api" / "MEMORY.md"
    path.write_text("# api\n- Deploys go through staging first [deploy-staging]\n")


def write(cwd: Path, title: str, *extra: str) -> None:
    proc = jmem(cwd, "write", "--agent", "api", "--topic", "ops", "--title", title, *extra,
                "--body", "b")
    assert proc.returncode == 0, proc.stderr


def test_correction_from_another_worktree_reaches_the_next_prompt_once(
        repo: Path, worktree: Path) -> None:
    setup(repo)
    first = context(hook(repo, "SessionStart", source="startup"))
    assert "[deploy-staging]" in first
    assert hook(repo, "UserPromptSubmit", prompt="hi") == {}  # nothing changed
    write(worktree, "Deploys go straight to production now", "--supersedes", "deploy-staging",
          "--outbox")
    update = context(hook(repo, "UserPromptSubmit", prompt="go on"))
    assert "do not rely on: deploy-staging" in update
    assert update.count("Deploys go straight to production now") == 1
    assert "Deploys go through staging first" not in update and "Record a lesson" not in update
    assert hook(repo, "UserPromptSubmit", prompt="again") == {}  # told once


def test_a_change_reaches_the_next_tool_hook_at_once(repo: Path) -> None:
    """Codex and Gemini have no PostToolBatch: a correction written during a burst of
    tool calls reaches the session at the very next call, once."""
    setup(repo)
    hook(repo, "SessionStart", source="startup")
    assert hook(repo, "PostToolUse", tool_name="Bash") == {}
    write(repo, "A new lesson")
    assert "A new lesson" in context(hook(repo, "PostToolUse", tool_name="Bash"))
    assert hook(repo, "PostToolUse", tool_name="Bash") == {}  # told once


def test_resume_brings_only_what_changed_and_compaction_restores_the_pack(repo: Path) -> None:
    setup(repo)
    hook(repo, "SessionStart", source="startup")
    assert "[deploy-staging]" not in context(hook(repo, "SessionStart", source="resume"))
    write(repo, "Lesson while away")
    resumed = context(hook(repo, "SessionStart", source="resume"))
    assert "Lesson while away" in resumed and "[deploy-staging]" not in resumed
    compacted = context(hook(repo, "SessionStart", source="compact"))
    assert "[deploy-staging]" in compacted and "Lesson while away" in compacted
    fresh = context(hook(repo, "SessionStart", source="startup", session="s-2"))
    assert "[deploy-staging]" in fresh


def test_a_session_that_never_woke_gets_nothing_live(repo: Path) -> None:
    setup(repo)
    write(repo, "Some lesson")
    assert hook(repo, "UserPromptSubmit", session="unknown") == {}


def test_the_sessions_own_lesson_is_not_sent_back_to_it(repo: Path) -> None:
    """Its `jmem write` (a PostToolUse whose output names the entry) makes the lesson the
    session's own: the live check tells it a teammate's lesson, never its own."""
    setup(repo)
    hook(repo, "SessionStart", source="startup")
    proc = jmem(repo, "write", "--agent", "api", "--topic", "ops", "--title",
                "My own lesson from this session", "--body", "b")
    assert proc.returncode == 0, proc.stderr
    write(repo, "A teammate's lesson meanwhile")
    told = context(hook(repo, "PostToolUse", tool_name="Bash",
                        tool_input={"command": "jmem write --agent api --topic ops --title "
                                               "'My own lesson from this session'"},
                        tool_response={"stdout": proc.stdout, "stderr": "",
                                       "interrupted": False}))
    assert "A teammate's lesson meanwhile" in told
    assert "My own lesson from this session" not in told
