"""Many hooks of one session at the same moment: each change reaches it exactly once.

Claude Code runs the PostToolUse hooks of parallel tool calls at the same time (four
`Read` calls in one message: four hook processes started within ~70 ms), then
PostToolBatch once after the last of them. These tests start real hook processes
together, the way the client does, on the payloads it sent (tests/e2e/payloads/).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import REPO_ROOT, base_env, jmem

from journal_mem.wake import sessions

MEM = Path(".claude/agent-memory")
PAYLOADS = REPO_ROOT / "tests" / "e2e" / "payloads"
ENV = {"JMEM_DEFAULT_AGENT": "api"}


def payload(name: str, cwd: Path, **extra: object) -> dict[str, object]:
    """A captured payload, moved to `cwd` (the session and tool ids are kept)."""
    data: dict[str, object] = json.loads((PAYLOADS / name).read_text())
    data.update(cwd=str(cwd), **extra)
    return data


def together(cwd: Path, inputs: list[dict[str, object]]) -> list[str]:
    """Run one wake hook per input, all started before any is waited for; their contexts."""
    env = base_env(PYTHONPATH=str(REPO_ROOT), **ENV)
    procs = [subprocess.Popen([sys.executable, "-m", "journal_mem", "wake", "--hook", "claude"],
                              cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in inputs]
    for proc, data in zip(procs, inputs, strict=True):  # written once all have started
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(data).encode())
        proc.stdin.close()
    out = []
    for proc in procs:
        assert proc.stdout is not None and proc.stderr is not None
        stdout, stderr = proc.stdout.read(), proc.stderr.read()
        assert proc.wait(timeout=60) == 0, stderr
        answer = json.loads(stdout) if stdout.strip() else {}
        out.append(str(answer.get("hookSpecificOutput", {}).get("additionalContext", "")))
    return out


def start(repo: Path) -> dict[str, object]:
    (repo / MEM / "api" / "MEMORY.md").write_text("# api\n- Deploys go through staging first "
                                                  "[deploy-staging]\n")
    data = payload("session_start_resume.json", repo, source="startup")
    proc = jmem(repo, "wake", "--hook", "claude", stdin=json.dumps(data), env=base_env(**ENV))
    assert proc.returncode == 0 and "[deploy-staging]" in proc.stdout, proc.stderr
    return data


def correct(repo: Path, title: str) -> None:
    proc = jmem(repo, "write", "--agent", "api", "--topic", "ops", "--title", title,
                "--supersedes", "deploy-staging", "--body", "b")
    assert proc.returncode == 0, proc.stderr


def state_file(repo: Path, data: dict[str, object]) -> Path:
    return repo / ".git" / "journal-mem" / "sessions" / f"{data['session_id']}--main.json"


def age(path: Path) -> None:
    """As if the session's last check were long ago (no PostToolUse throttle)."""
    os.utime(path, (1, 1))


def reads(repo: Path, count: int) -> list[dict[str, object]]:
    return [payload("post_tool_use_read.json", repo, tool_use_id=f"toolu_{i}",
                    tool_input={"file_path": str(repo / f"{i}.txt")}) for i in range(count)]


def injections(repo: Path) -> list[dict[str, object]]:
    log = repo / ".git" / "journal-mem" / "logs" / "sessions.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_four_parallel_post_tool_use_hooks_deliver_a_correction_once(repo: Path) -> None:
    data = start(repo)
    correct(repo, "Deploys go straight to production now")
    age(state_file(repo, data))
    contexts = together(repo, reads(repo, 4))
    assert "".join(contexts).count("Deploys go straight to production now") == 1, contexts
    assert "".join(contexts).count("do not rely on: deploy-staging") == 1
    live = [r for r in injections(repo) if r["event"] != "SessionStart"]
    assert len(live) == 1 and live[0]["event"] == "PostToolUse", live


def test_sixteen_parallel_hooks_and_the_batch_deliver_once(repo: Path) -> None:
    data = start(repo)
    correct(repo, "Deploys go straight to production now")
    age(state_file(repo, data))
    batch = payload("post_tool_batch.json", repo)
    contexts = together(repo, [*reads(repo, 16), batch])  # the batch too, at the same moment
    assert "".join(contexts).count("Deploys go straight to production now") == 1, contexts
    assert len([r for r in injections(repo) if r["event"] != "SessionStart"]) == 1
    assert together(repo, [batch]) == [""]  # told once


def test_after_a_batch_the_tool_hooks_leave_delivery_to_the_batch(repo: Path) -> None:
    data = start(repo)
    batch = payload("post_tool_batch.json", repo)
    assert together(repo, [batch]) == [""]  # nothing changed; the session runs batch hooks
    assert json.loads(state_file(repo, data).read_text())["batches"] is True
    correct(repo, "Deploys go straight to production now")
    age(state_file(repo, data))
    assert together(repo, reads(repo, 4)) == [""] * 4  # not even one of them
    failure = payload("post_tool_use_failure.json", repo)
    assert together(repo, [failure]) == [""]
    [delivered] = together(repo, [batch])
    assert delivered.count("Deploys go straight to production now") == 1
    assert [r["event"] for r in injections(repo)] == ["SessionStart", "PostToolBatch"]


def test_a_failed_tool_call_delivers_a_correction_like_a_successful_one(repo: Path) -> None:
    data = start(repo)  # a client without PostToolBatch hooks: the tool hooks deliver
    correct(repo, "Deploys go straight to production now")
    age(state_file(repo, data))
    failure = payload("post_tool_use_failure.json", repo)
    [delivered] = together(repo, [failure])
    assert "do not rely on: deploy-staging" in delivered
    [record] = [r for r in injections(repo) if r["event"] == "PostToolUseFailure"]
    assert record["keys"]


def test_a_wake_up_prompt_gets_corrections_like_a_persons(repo: Path) -> None:
    start(repo)
    correct(repo, "Deploys go straight to production now")
    woken = payload("user_prompt_submit_task_notification.json", repo, source="loop_wakeup")
    [delivered] = together(repo, [woken])
    assert "do not rely on: deploy-staging" in delivered
    [record] = [r for r in injections(repo) if r["event"] == "UserPromptSubmit"]
    assert record["source"] == "loop_wakeup"  # `status --sessions` tells it from a person


def test_a_tool_hook_finding_the_session_locked_leaves_the_change_to_the_holder(
        repo: Path) -> None:
    data = start(repo)
    correct(repo, "Deploys go straight to production now")
    age(state_file(repo, data))
    with sessions.SessionLock(str(state_file(repo, data)), 0) as held:
        assert held
        assert together(repo, reads(repo, 2)) == ["", ""]
    [delivered] = together(repo, reads(repo, 1))
    assert "do not rely on: deploy-staging" in delivered


def test_a_prompt_hook_waits_for_the_lock_and_then_delivers(repo: Path) -> None:
    data = start(repo)
    correct(repo, "Deploys go straight to production now")
    lock = sessions.SessionLock(str(state_file(repo, data)), 0)
    assert lock.__enter__()
    threading.Timer(1.0, lock.__exit__).start()  # another hook, done in a second
    began = time.monotonic()
    [delivered] = together(repo, [payload("user_prompt_submit.json", repo)])
    assert time.monotonic() - began >= 1.0
    assert "do not rely on: deploy-staging" in delivered


def test_a_start_waits_for_a_slow_hook_of_its_session_and_its_record_stands(
        repo: Path) -> None:
    data = start(repo)
    path = state_file(repo, data)
    before = json.loads(path.read_text())
    lock = sessions.SessionLock(str(path), 0)
    assert lock.__enter__()

    def holder_done() -> None:  # a hook of the session, slow under load: it records what
        path.write_text(json.dumps({**before, "held": [], "keys": []}))  # it read, and ends
        lock.__exit__()

    threading.Timer(4.0, holder_done).start()  # longer than the old 3 s wait
    began = time.monotonic()
    [pack] = together(repo, [payload("session_start_resume.json", repo, source="compact")])
    assert time.monotonic() - began >= 4.0
    assert "[deploy-staging]" in pack
    # recorded after the holder's state, not under it: a resume now finds nothing new
    assert together(repo, [payload("session_start_resume.json", repo, source="resume")]) == [""]


def test_a_start_that_never_gets_the_lock_gives_the_pack_and_records_nothing(
        repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from journal_mem.repo import light_context
    from journal_mem.wake import hooks

    data = start(repo)
    path = state_file(repo, data)
    path.write_text(json.dumps({**json.loads(path.read_text()), "held": [], "keys": []}))
    recorded = path.read_bytes()  # as the hook holding the lock will have left it
    monkeypatch.setattr(hooks, "WAIT", 0.2)
    monkeypatch.setenv("JMEM_DEFAULT_AGENT", "api")
    ctx = light_context(str(repo))
    compact = payload("session_start_resume.json", repo, source="compact")
    with sessions.SessionLock(str(path), 0) as held:
        assert held
        text = hooks.session_start(ctx.layout, ctx.policy, compact, "api", "SessionStart",
                                   10_000, True)
    assert "[deploy-staging]" in text
    assert path.read_bytes() == recorded  # the holder's to write
    assert "not recorded" in capsys.readouterr().err
