"""The recorded MCP handshake (`resources/mcp-handshake.json`, read by `handshake.py`):
what the SDK's own server answers to `initialize` and `tools/list`.

    python -m journal_mem.mcpserver.record > journal_mem/resources/mcp-handshake.json

after changing a tool or the SDK; `tests/mcpserver/test_handshake.py` fails until then.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS


def record(cwd: str) -> dict[str, Any]:
    """What the SDK's server answers to `initialize` and `tools/list`, asked in a child
    process exactly as a client asks: the content of `resources/mcp-handshake.json`."""
    version = HANDSHAKE_PROTOCOL_VERSIONS[-1]
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": version, "capabilities": {},
                         "clientInfo": {"name": "record", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    code = "import sys\nfrom journal_mem.mcpserver.server import serve\nserve(sys.argv[1])\n"
    proc = subprocess.Popen([sys.executable, "-c", code, cwd], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode())
    proc.stdin.flush()
    answers: dict[object, Any] = {}
    while len(answers) < 2:  # stdin stays open: the SDK drops what it has not answered
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the SDK's server ended before it answered")
        msg = json.loads(line)
        if "id" in msg:
            answers[msg["id"]] = msg["result"]
    proc.stdin.close()
    proc.wait()
    initialize = dict(answers[1])
    initialize.pop("protocolVersion")
    return {"versions": list(HANDSHAKE_PROTOCOL_VERSIONS), "initialize": initialize,
            "tools": answers[2]["tools"]}


if __name__ == "__main__":
    print(json.dumps(record(os.getcwd()), indent=2, ensure_ascii=False, sort_keys=True))
