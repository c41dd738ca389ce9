"""`jmem mcp` until an MCP client has its answers to `initialize` and `tools/list`.

    python bench/bench_mcp.py [RUNS]

(`rows` gives the same figures to `bench/run_all.py`.) Each run spawns the server,
sends `initialize`, `notifications/initialized` and `tools/list` the way a client
does, and stops the clock when both answers are in (then a `tools/call` of `status`
is timed too: the first call pays for the SDK's load). The baseline, in the same run,
is the SDK's own server without the recorded handshake (`mcpserver.server.serve`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import Row, Timing, bench_env, git, jmem_argv, table, time_command

HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "status", "arguments": {}}}
SDK_ONLY = "import sys\nfrom journal_mem.mcpserver.server import serve\nserve('.')\n"


def session(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(ms until initialize and tools/list are answered, ms until the first tool call is)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=bench_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE).encode())
    proc.stdin.flush()
    seen: set[int] = set()
    while not {1, 2} <= seen:
        seen.add(json.loads(proc.stdout.readline())["id"])
    listed = (time.perf_counter() - start) * 1000
    proc.stdin.write((json.dumps(CALL) + "\n").encode())
    proc.stdin.flush()
    while json.loads(proc.stdout.readline()).get("id") != 3:
        pass
    called = (time.perf_counter() - start) * 1000
    proc.stdin.close()
    proc.wait(timeout=30)
    return listed, called


def timings(argv: list[str], cwd: Path, runs: int) -> tuple[Timing, Timing]:
    session(argv, cwd)  # warm-up
    both = [session(argv, cwd) for _ in range(runs)]
    return Timing(tuple(b[0] for b in both)), Timing(tuple(b[1] for b in both))


def rows(runs: int = 10) -> list[Row]:
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="jmem-bench-mcp-")))
    try:
        repo = root / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        time_command([*jmem_argv(), "init", "--agent", "api", "--no-claude",
                      "--no-git-hooks"], repo, runs=1, warmup=False)
        listed, called = timings([*jmem_argv(), "mcp"], repo, runs)
        sdk_listed, sdk_called = timings([sys.executable, "-c", SDK_ONLY], repo, runs)
        return [
            Row("jmem mcp: initialize and tools/list answered", listed,
                "the SDK's server alone", sdk_listed, "≤ 500 ms", listed.median <= 500),
            Row("jmem mcp: the first tool call answered (the SDK loaded)", called,
                "the SDK's server alone", sdk_called, "–", None),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10)))
