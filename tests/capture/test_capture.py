"""The PostToolUse capture: a memory file written with a file tool, in any checkout, is
filed in the main checkout's journal at once, and the checkout's copy is put back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

from tests.helpers import add_worktree, base_env, git, jmem, journal_files

MEM = Path(".claude/agent-memory")


def _memory(description: str) -> str:
    return (f"---\nname: retry-budget\ndescription: {description}\nmetadata:\n  type: feedback\n"
            "---\n\nEvery call shares one retry budget of three.\n")


def _hook(cwd: Path, path: Path, tool: str = "Write") -> str:
    payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(cwd),
               "tool_name": tool, "tool_input": {"file_path": str(path), "content": "x"}}
    proc = jmem(cwd, "wake", "--hook", "claude", stdin=json.dumps(payload))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _init(repo: Path) -> None:
    assert jmem(repo, "init", "--agent", "api", "--no-claude").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")


def test_a_worktree_write_is_filed_and_an_edit_corrects_the_same_key(
        repo: Path, tmp_path: Path) -> None:
    _init(repo)
    wt = add_worktree(repo, tmp_path / "wt")
    target = wt / MEM / "api" / "feedback_retry_budget.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_memory("Retries share one budget"))
    said = json.loads(_hook(wt, target))["hookSpecificOutput"]["additionalContext"]
    assert "journal-mem filed the memory you wrote" in said and "api/journal/" in said
    assert not target.exists() and git(wt, "status", "--porcelain").stdout == ""
    target.write_text(_memory("Retries share one budget of three, never more"))
    _hook(wt, target, "Edit")
    texts = [p.read_text() for p in journal_files(repo, "api")]
    assert sum("key: retry-budget" in t for t in texts) == 2
    assert jmem(repo, "distill").returncode == 0
    memory = (repo / MEM / "api" / "MEMORY.md").read_text()
    assert "never more" in memory and memory.count("[retry-budget]") == 1


def test_a_memory_md_edit_is_filed_as_rescue_files_it(repo: Path) -> None:
    _init(repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "x")
    assert jmem(repo, "distill").returncode == 0
    index = repo / MEM / "api" / "MEMORY.md"
    index.write_text(index.read_text() + "- The staging deploy needs the VPN\n")
    _hook(repo, index, "Edit")
    titles = [p.read_text() for p in journal_files(repo, "api")]
    assert any("# The staging deploy needs the VPN" in t for t in titles)


def test_other_writes_cost_nothing_and_say_nothing(repo: Path, tmp_path: Path) -> None:
    _init(repo)
    assert _hook(repo, repo / "src" / "notes.md") == ""
    other = tmp_path / "plain"
    other.mkdir()
    git(other, "init", "-q")
    stray = other / MEM / "api" / "x.md"
    stray.parent.mkdir(parents=True)
    stray.write_text(_memory("Not a journal-mem repository"))
    assert _hook(other, stray) == "" and stray.exists()  # not set up: left alone


def test_a_native_write_is_filed_without_the_whole_journal_or_the_distiller(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The capture runs after every native memory write: it reads the entries of the keys
    it speaks about through the recall index (not the whole journal: half a second at 10k
    lessons) and loads none of the distiller's modules (a hand edit's: ~40 ms), nor
    `dataclasses` (with `inspect`, ~11 ms)."""
    from journal_mem.capture.hook import capture
    from journal_mem.intake import pipeline
    from tests.hotpaths import PROBE, recorded

    _init(repo)
    for n in range(3):
        assert jmem(repo, "write", "--agent", "api", "--topic", "ops", "--title",
                    f"Lesson {n} before the capture", stdin="body\n").returncode == 0
    wt = add_worktree(repo, tmp_path / "wt")
    target = wt / MEM / "api" / "feedback_retry_budget.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_memory("Retries share one budget"))
    payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(wt),
               "tool_name": "Write", "tool_input": {"file_path": str(target)}}
    dump = tmp_path / "modules.marshal"
    proc = subprocess.run([sys.executable, "-c", PROBE, str(dump), "jmem", "wake", "--hook",
                           "claude"], cwd=wt, env=base_env(), input=json.dumps(payload),
                          text=True, capture_output=True, check=False)
    assert proc.returncode == 0 and "filed the memory you wrote" in proc.stdout, proc.stderr
    loaded = recorded(dump)
    assert not loaded & {"journal_mem.distill.adopt", "journal_mem.distill.folding",
                         "journal_mem.journal.render", "dataclasses", "inspect"}, sorted(loaded)
    # an edit of it, in this process, never reads the whole journal
    target.write_text(_memory("Retries share one budget of three, never more"))

    def whole(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("the capture read the whole journal")

    monkeypatch.setattr(pipeline, "read_journal", whole)
    done = capture({**payload, "tool_name": "Edit"})
    assert done is not None and done[1], done
    texts = [p.read_text() for p in journal_files(repo, "api")]
    assert sum("key: retry-budget" in t for t in texts) == 2
