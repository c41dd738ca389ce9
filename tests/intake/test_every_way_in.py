"""The same change to memory, driven through every way in, gives the same live facts.

Ways: `jmem write`, the MCP `write_lesson` tool (the real server, through the SDK's
client), the capture of a native Write in the main checkout and in a linked worktree,
`jmem rescue`, and the distiller's adoption of a hand edit. The fact being changed was
written by a teammate whose clock runs three hours ahead: every way must win by cause
(`knew`), not by clock."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers import add_worktree, base_env, git, jmem, journal_files
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from journal_mem.journal.entry import parse

MEM = Path(".claude/agent-memory")
TITLE, BODY = "The queue acks after the write", "Acking first lost messages on a crash."
NEW_TITLE = "The queue acks after the write is fsynced"


def _write(repo: Path, *args: str) -> str:
    proc = jmem(repo, "write", "--agent", "api", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["key"])


def _setup(repo: Path) -> tuple[str, list[str]]:
    """api holds four facts; the one to change was dated three hours ahead."""
    assert jmem(repo, "init", "--agent", "api", "--no-claude").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    key = _write(repo, "--topic", "queue", "--title", TITLE, "--body", BODY,
                 "--importance", "high")
    others = [_write(repo, "--topic", "build", "--title", f"Build rule number {n} holds")
              for n in range(3)]
    path = next(p for p in journal_files(repo, "api") if key[:8] in p.read_text())
    text = path.read_text()
    created = next(x for x in text.splitlines() if x.startswith("created:"))
    ahead = dt.datetime.now(dt.UTC) + dt.timedelta(hours=3)
    path.write_text(text.replace(created, f"created: {ahead.isoformat()}"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lessons", "--no-verify")
    assert jmem(repo, "distill").returncode == 0
    return key, others


def _mcp(repo: Path, arguments: dict[str, Any]) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "journal_mem", "mcp"],
                                   env=base_env(), cwd=str(repo))

    async def main() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("write_lesson", arguments)
                assert not result.is_error, result
    anyio.run(main)


def _edit(repo: Path, tmp: Path, where: str, change: Callable[[str], str]) -> None:
    """Edit api's MEMORY.md in the main checkout or a worktree, and file it as `where`."""
    wt = repo if where in ("capture-main", "distill") else add_worktree(repo, tmp / "wt")
    memory = wt / MEM / "api" / "MEMORY.md"
    memory.write_text(change(memory.read_text()))
    if where.startswith("capture"):
        payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(wt),
                   "tool_name": "Write", "tool_input": {"file_path": str(memory)}}
        proc = jmem(wt, "wake", "--hook", "claude", stdin=json.dumps(payload))
        assert proc.returncode == 0 and "journal-mem filed" in proc.stdout, proc.stdout
    elif where == "rescue":
        proc = jmem(wt, "rescue")
        assert proc.returncode == 0, proc.stdout + proc.stderr


def _live(repo: Path) -> dict[str, tuple[str, str]]:
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = jmem(repo, "export")
    return {f["key"]: (f["title"], f.get("body", "")) for f in json.loads(proc.stdout)["facts"]}


def _line_of(text: str, key: str) -> str:
    return next(x for x in text.splitlines() if f"[{key}]" in x)


EDITS = ["capture-main", "capture-worktree", "rescue", "distill"]


@pytest.mark.parametrize("way", ["write", "mcp", *EDITS])
def test_a_retraction_is_the_same_by_every_way(repo: Path, tmp_path: Path, way: str) -> None:
    key, others = _setup(repo)
    if way == "write":
        _write(repo, "--topic", "queue", "--title", "Acks moved to the consumer",
               "--retracts", key)
    elif way == "mcp":
        _mcp(repo, {"agent": "api", "topic": "queue", "title": "Acks moved to the consumer",
                    "retracts": [key]})
    else:
        _edit(repo, tmp_path, way, lambda text: text.replace(_line_of(text, key) + "\n", ""))
    live = _live(repo)
    assert key not in live
    assert {k: live[k] for k in others} == {k: (f"Build rule number {n} holds", "")
                                            for n, k in enumerate(others)}
    entries = [parse(p.read_bytes(), folder_agent="api") for p in journal_files(repo, "api")]
    [gone] = [e for e in entries if key in e.retracts]
    assert gone.knew, "the retraction won by clock, not by cause"


@pytest.mark.parametrize("way", ["write", "mcp", *EDITS])
def test_a_correction_is_the_same_by_every_way(repo: Path, tmp_path: Path, way: str) -> None:
    key, others = _setup(repo)
    if way == "write":
        _write(repo, "--topic", "queue", "--title", NEW_TITLE, "--body", BODY, "--key", key)
    elif way == "mcp":
        _mcp(repo, {"agent": "api", "topic": "queue", "title": NEW_TITLE, "body": BODY,
                    "key": key})
    else:
        _edit(repo, tmp_path, way, lambda text: text.replace(TITLE, NEW_TITLE))
    live = _live(repo)
    assert live[key] == (NEW_TITLE, BODY)
    assert sorted(live) == sorted([key, *others])
