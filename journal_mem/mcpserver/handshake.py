"""`jmem mcp` answers the client's `initialize` and `tools/list` at once, then hands the
connection to the SDK's server (`server.py`) once the SDK has loaded.

Importing the MCP SDK takes about half a second on a quiet machine (its protocol
types alone, two protocol revisions of pydantic models) and well over a second on a
busy one; a client that does not wait (Codex's first request) then offers the model
no journal-mem tools. What the server says in the handshake never changes between
runs: its capabilities, instructions and tool list are recorded from the SDK itself
in `resources/mcp-handshake.json` (`python -m journal_mem.mcpserver.record`
regenerates it; a test checks it equals what the SDK answers). So this module, on the
standard library, answers those two requests from the record, and meanwhile:

* the SDK still receives every message, `initialize` first, and its own answer to
  `initialize` is dropped (the client has had it); its answers to `tools/list` never
  arise (those requests are answered here and not passed on);
* everything else — `notifications/initialized`, tool calls, resources — goes to the
  SDK unchanged, in order, and its answers go to the client unchanged.

A first message that is not `initialize` (a client of the per-request protocol
revision, or a broken record) is passed on as it is: the SDK answers everything.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from journal_mem import resources

# read by path, not through importlib.resources (pathlib, tempfile, zipfile: the cost
# this module exists to avoid); the package is installed as files
HANDSHAKE = os.path.join(os.path.dirname(resources.__file__), "mcp-handshake.json")
# written after the SDK's last line when it is done: the SDK keeps its own copy of the
# pipe open, so the end of its output is said, not waited for
END = b"\0journal-mem: the SDK is done\n"
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO


def load() -> dict[str, Any] | None:
    """The recorded handshake, or None when it is missing or unreadable."""
    try:
        with open(HANDSHAKE, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and {"versions", "initialize", "tools"} <= set(
        data) else None


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) else None


def _initialize_result(record: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """What the SDK answers to this `initialize`: the client's protocol revision when it is
    one the handshake reaches, else the newest such (the SDK's own rule)."""
    params = request.get("params") if isinstance(request.get("params"), dict) else {}
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    versions = record["versions"]
    return {**record["initialize"],
            "protocolVersion": asked if asked in versions else versions[-1]}


class _Wire:
    """The client's end of stdout: whole lines, one writer at a time."""

    def __init__(self, fd: int) -> None:
        self.out = os.fdopen(fd, "wb", buffering=0)
        self.lock = threading.Lock()

    def send(self, line: bytes) -> None:
        with self.lock:
            self.out.write(line if line.endswith(b"\n") else line + b"\n")

    def answer(self, msg_id: object, result: dict[str, Any]) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result},
                             ensure_ascii=False, separators=(",", ":")).encode())


def _pump_in(client: BinaryIO, sdk: BinaryIO, first: bytes, wire: _Wire,
             tools: dict[str, Any] | None) -> None:
    """The client's messages to the SDK, `tools/list` answered here instead."""
    try:
        sdk.write(first)
        sdk.flush()
        for line in client:
            msg = _message(line) if b"tools/list" in line else None
            if tools is not None and msg is not None and msg.get("method") == "tools/list" \
                    and "id" in msg:
                wire.answer(msg["id"], tools)
                continue
            sdk.write(line)
            sdk.flush()
    except (OSError, ValueError):
        pass
    finally:
        try:
            sdk.close()
        except OSError:
            pass


def _pump_out(sdk: BinaryIO, wire: _Wire, answered: object) -> None:
    """The SDK's messages to the client, but its answer to the `initialize` given."""
    dropped = answered is None
    for line in sdk:
        if line == END:
            break
        if not dropped:
            msg = _message(line)
            if msg is not None and msg.get("id") == answered and "method" not in msg:
                dropped = True
                continue
        wire.send(line)


def serve(cwd: str) -> None:
    """Answer the handshake, load the SDK and serve on stdin/stdout until the client
    closes stdin."""
    client = os.fdopen(os.dup(0), "rb")
    wire = _Wire(os.dup(1))
    first = client.readline()
    record, request = load(), _message(first)
    answered: object = None
    tools: dict[str, Any] | None = None
    if record is not None and request is not None and request.get("method") == "initialize" \
            and "id" in request:
        answered = request["id"]
        wire.answer(answered, _initialize_result(record, request))
        tools = {"tools": record["tools"]}
    to_sdk_r, to_sdk_w = os.pipe()
    from_sdk_r, from_sdk_w = os.pipe()
    end = os.dup(from_sdk_w)
    os.dup2(to_sdk_r, 0)
    os.dup2(from_sdk_w, 1)
    os.close(to_sdk_r)
    os.close(from_sdk_w)
    inbound = threading.Thread(target=_pump_in, daemon=True, args=(
        client, os.fdopen(to_sdk_w, "wb"), first, wire, tools))
    outbound = threading.Thread(target=_pump_out, daemon=True, args=(
        os.fdopen(from_sdk_r, "rb"), wire, answered))
    inbound.start()
    outbound.start()
    from journal_mem.mcpserver.server import serve as serve_sdk  # the SDK: ~0.5 s

    try:
        serve_sdk(cwd)
    finally:
        sys.stdout.flush()
        os.write(end, END)  # after everything the SDK wrote: the pump stops there
        os.close(end)
        outbound.join(timeout=5)


def fast_main(args: list[str]) -> int | None:
    """`jmem mcp` before click loads; None for anything else (its --help, a typo)."""
    if args:
        return None
    serve(os.getcwd())
    return 0
