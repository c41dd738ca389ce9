"""`jmem status`: pending, outbox, last distill, lock, budgets, hooks, sessions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import base_env, git, jmem


def test_status_reports_pending_outbox_and_missing_hooks(repo: Path, worktree: Path) -> None:
    jmem(worktree, "write", "--agent", "api", "--topic", "t", "--title", "One")
    jmem(worktree, "write", "--agent", "web", "--topic", "t", "--title", "Two", "--outbox")
    proc = jmem(worktree, "status")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"main checkout: {repo}" in out
    assert "pending lessons: api 1, web 0 (a distill starts at 10)" in out
    assert "outbox: 1 waiting\n  outbox/web/" in out
    assert "last distill: never" in out
    assert "lock: free" in out
    assert "git hooks: pre-commit missing" in out
    assert ("Claude Code hooks: missing SessionStart, SubagentStart, UserPromptSubmit, "
            "PostToolUse, PostToolUseFailure, PostToolBatch, Stop, SubagentStop") in out


def test_status_json_after_claude_init_and_a_distill_state(repo: Path) -> None:
    assert jmem(repo, "init").returncode == 0
    mem = repo / ".claude" / "agent-memory"
    text = "# api\n- A fact [a-fact]\n"
    (mem / "api" / "MEMORY.md").write_text(text)
    (mem / "distill-state.json").write_text('{"schema": 1, "date": "2026-03-04", "folded": []}')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "distill")  # a stand-in for the distiller
    state = repo / ".git" / "journal-mem"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from journal_mem.journal.lock import DistillLock;"
         "lock = DistillLock(sys.argv[1]).__enter__(); print('held', flush=True); time.sleep(60)",
         str(state)], stdout=subprocess.PIPE, text=True, env=base_env())
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        data = json.loads(jmem(repo, "status", "--json").stdout)
    finally:
        holder.kill()
        holder.wait()
    assert json.loads(jmem(repo, "status", "--json").stdout)["lock"] == ""
    assert data["claude_hooks"]["missing"] == []
    assert data["last_distill"]["date"] == "2026-03-04"
    assert data["last_distill"]["commit"]
    assert data["lock"].startswith(f"pid {holder.pid} on ")
    assert data["budgets"]["api"] == {"lines": 2, "max_lines": 200, "bytes": len(text),
                                      "max_bytes": 25000, "evicted": 0}
    assert data["budgets"]["web"] is None


def test_status_sessions_lists_what_each_session_was_given(repo: Path) -> None:
    assert "no session" in jmem(repo, "status", "--sessions").stdout
    jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Seen lesson")
    stdin = json.dumps({"session_id": "abc", "cwd": str(repo), "agent_type": "api",
                        "hook_event_name": "SubagentStart", "agent_id": "x1"})
    assert jmem(repo, "wake", "--hook", "claude", stdin=stdin).returncode == 0
    out = jmem(repo, "status", "--sessions").stdout
    assert "abc  api (x1)  1 keys: seen-lesson" in out
    records = json.loads(jmem(repo, "status", "--sessions", "5", "--json").stdout)
    assert records[-1]["keys"] == ["seen-lesson"]


def test_status_shows_facts_evicted_by_the_last_distill(repo: Path) -> None:
    assert jmem(repo, "init", "--agent", "api", "--no-git-hooks", "--no-claude").returncode == 0
    toml = repo / ".claude" / "journal-mem.toml"
    toml.write_text(toml.read_text().replace("# topic_lines = 200", "topic_lines = 10"))
    for i in range(12):
        proc = jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", f"Fact {i}",
                    "--key", f"fact-{i}", "--body", "Three lines in a topic file.")
        assert proc.returncode == 0, proc.stderr
    assert jmem(repo, "distill").returncode == 0
    data = json.loads(jmem(repo, "status", "--json").stdout)
    assert data["budgets"]["api"]["evicted"] == 2  # 5 parts of 2 facts hold 10
    assert "api/MEMORY.md: " in (out := jmem(repo, "status").stdout)
    assert "2 facts evicted (no room in the topic files" in out
    wake = jmem(repo, "wake", "--agent", "api").stdout
    assert "2 only in the journal" in wake


def test_status_says_when_claude_code_cannot_run_the_hooks(repo: Path, tmp_path: Path) -> None:
    assert jmem(repo, "init").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hooks")
    old = tmp_path / "old"
    git(repo, "worktree", "add", "-q", "-b", "old", str(old), "HEAD~1")  # before init
    home = tmp_path / "home"
    home.mkdir()
    env = base_env(PATH="/usr/bin:/bin", HOME=str(home))  # no jmem on this PATH
    proc = subprocess.run([sys.executable, "-m", "journal_mem", "status"], cwd=old, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "`jmem` is not on PATH" in proc.stdout and "status 127" in proc.stdout
    assert "this worktree's .claude/settings.json lacks SessionStart" in proc.stdout
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"journal-mem@journal-mem": True}}))
    proc = subprocess.run([sys.executable, "-m", "journal_mem", "status"], cwd=old, env=env,
                          capture_output=True, text=True, check=False)
    assert "Claude Code plugin: installed" in proc.stdout and "warning" not in proc.stdout


def test_status_says_when_a_hook_is_not_the_shim_this_jmem_writes(repo: Path) -> None:
    """A shim an older jmem wrote (it starts python on every commit) is ours but not
    current: status says so and how to rewrite it; `init` makes it current again."""
    assert jmem(repo, "init", "--no-claude").returncode == 0
    hooks = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-path",
                     "hooks").stdout.strip())
    shim = hooks / "pre-commit"
    text = shim.read_text()
    start = text.index("# Nearly every commit")
    shim.write_text(text[:start] + text[text.index("exec "):])  # the older shim's shape
    data = json.loads(jmem(repo, "status", "--json").stdout)
    assert data["git_hooks"]["pre-commit"] == ("installed, not as this jmem writes it "
                                               "(`jmem init` rewrites it)")
    assert data["git_hooks"]["post-commit"] == "installed"
    assert jmem(repo, "init", "--no-claude").returncode == 0
    assert json.loads(jmem(repo, "status", "--json").stdout)["git_hooks"]["pre-commit"] == \
        "installed"


def test_status_reports_the_codex_and_gemini_hooks_a_checkout_has(repo: Path) -> None:
    """Only the clients whose hook file the checkout has; each with what it lacks."""
    assert json.loads(jmem(repo, "status", "--json").stdout)["client_hooks"] == {}
    assert jmem(repo, "init", "--codex", "--gemini", "--no-git-hooks").returncode == 0
    assert json.loads(jmem(repo, "status", "--json").stdout)["client_hooks"] == {
        "codex": [], "gemini": []}
    hooks_file = repo / ".codex" / "hooks.json"
    hooks = json.loads(hooks_file.read_text())
    del hooks["hooks"]["Stop"]
    hooks_file.write_text(json.dumps(hooks))
    report = jmem(repo, "status")
    assert json.loads(jmem(repo, "status", "--json").stdout)["client_hooks"]["codex"] == ["Stop"]
    assert ("Codex hooks: missing Stop (run jmem init --codex); not trusted in your Codex "
            "config yet") in report.stdout
    assert "Gemini CLI hooks: all installed" in report.stdout
