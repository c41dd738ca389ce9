"""`jmem mcp` answers `initialize` and `tools/list` from the recorded handshake before the
SDK has loaded, and the SDK serves everything else: each answer once, in the SDK's
own words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO_ROOT, base_env

from journal_mem.mcpserver import handshake, record

RECORD = REPO_ROOT / "journal_mem" / "resources" / "mcp-handshake.json"


def initialize(version: str, msg_id: object = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
STATUS = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
          "params": {"name": "status", "arguments": {}}}


def talk(repo: Path, messages: list[dict[str, Any]], *, sdk_only: bool = False) -> list[
        dict[str, Any]]:
    """Every message the server sent until each request of `messages` was answered (the
    client then closes stdin, and the server exits 0)."""
    argv = [sys.executable, "-c", "from journal_mem.mcpserver.server import serve\n"
            "serve('.')"] if sdk_only else [sys.executable, "-m", "journal_mem", "mcp"]
    proc = subprocess.Popen(argv, cwd=repo, env=base_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    proc.stdin.flush()
    wanted = {m["id"] for m in messages if "id" in m}
    out: list[dict[str, Any]] = []
    try:
        while wanted - {m.get("id") for m in out}:
            line = proc.stdout.readline()
            assert line, "the server closed stdout before answering"
            out.append(json.loads(line))
    finally:
        proc.stdin.close()
        code = proc.wait(timeout=60)
    assert code == 0, proc.stderr.read() if proc.stderr else code
    return out + [json.loads(line) for line in proc.stdout.read().splitlines()]


def by_id(answers: list[dict[str, Any]]) -> dict[object, list[dict[str, Any]]]:
    out: dict[object, list[dict[str, Any]]] = {}
    for msg in answers:
        out.setdefault(msg.get("id"), []).append(msg)
    return out


def test_the_record_is_what_the_sdk_answers(repo: Path) -> None:
    """Regenerate with `python -m journal_mem.mcpserver.record >
    journal_mem/resources/mcp-handshake.json` when a tool or the SDK changes."""
    assert json.loads(RECORD.read_text()) == record.record(str(repo))


@pytest.mark.parametrize("version", ["2025-06-18", "2024-11-05", "1999-01-01"])
def test_the_handshake_is_answered_once_in_the_sdks_words(repo: Path, version: str) -> None:
    ours = by_id(talk(repo, [initialize(version), INITIALIZED, TOOLS, STATUS]))
    sdks = by_id(talk(repo, [initialize(version), INITIALIZED, TOOLS, STATUS], sdk_only=True))
    assert set(ours) == {1, 2, 3} and all(len(v) == 1 for v in ours.values()), ours
    assert ours[1] == sdks[1] and ours[2] == sdks[2]  # the same negotiated version, tools
    assert ours[3][0]["result"]["isError"] is False  # a tool call reaches the SDK
    assert json.loads(ours[3][0]["result"]["content"][0]["text"]) == json.loads(
        sdks[3][0]["result"]["content"][0]["text"])


def test_a_string_id_and_messages_sent_before_the_sdk_is_ready(repo: Path) -> None:
    """Everything the client sends at once, before the SDK has loaded, is answered."""
    answers = by_id(talk(repo, [initialize("2025-11-25", "init-1"), INITIALIZED, TOOLS,
                                {**TOOLS, "id": 4}, STATUS, {**STATUS, "id": 5}]))
    assert sorted(map(str, answers)) == ["2", "3", "4", "5", "init-1"]
    assert answers["init-1"][0]["result"]["protocolVersion"] == "2025-11-25"


def test_without_an_initialize_first_the_sdk_answers_everything(repo: Path) -> None:
    """A first message that is not `initialize` is passed on: the SDK's own answer."""
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    ours = by_id(talk(repo, [ping, initialize("2025-06-18"), INITIALIZED, TOOLS]))
    sdks = by_id(talk(repo, [ping, initialize("2025-06-18"), INITIALIZED, TOOLS],
                      sdk_only=True))
    assert ours == sdks


def test_a_broken_record_leaves_the_handshake_to_the_sdk(
        repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(handshake, "HANDSHAKE", str(tmp_path / "missing.json"))
    assert handshake.load() is None
    (tmp_path / "bad.json").write_text("{not json")
    monkeypatch.setattr(handshake, "HANDSHAKE", str(tmp_path / "bad.json"))
    assert handshake.load() is None


def test_the_outbound_pump_stops_at_the_end_mark_with_the_pipe_still_open() -> None:
    """The SDK keeps its own copy of stdout's pipe open after it returns: the pump must
    stop at the mark written after the SDK's last line, not wait for an end of file
    (which never came: each `jmem mcp` took 5 s to exit)."""
    import os
    import threading

    sdk_r, sdk_w = os.pipe()
    wire_r, wire_w = os.pipe()
    wire = handshake._Wire(wire_w)
    os.write(sdk_w, b'{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n'
             + handshake.END)
    done = threading.Event()
    pump = threading.Thread(target=lambda: (handshake._pump_out(
        os.fdopen(sdk_r, "rb"), wire, 1), done.set()), daemon=True)
    pump.start()
    assert done.wait(timeout=30), "the pump waited for an end of file"
    os.close(sdk_w)
    wire.out.close()
    with os.fdopen(wire_r, "rb") as got:
        assert got.read() == b'{"jsonrpc":"2.0","id":2,"result":{}}\n'  # id 1: answered already
