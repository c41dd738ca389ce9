"""Benchmark: the hooks of one batch of parallel tool calls, as Claude Code runs them.

Claude Code starts the PostToolUse hooks of parallel tool calls at the same time (four
`Read` calls: four processes within ~70 ms), then PostToolBatch once after the last
one ended. Each sample here does the same with whole `jmem wake --hook claude`
processes for one session: N PostToolUse hooks started together, then the batch hook;
the time is from the first start to the batch hook's end. Two cases: nothing changed
(the usual one), and a correction written just before the batch (one hook delivers it
under the session's lock, the others find it delivered or the lock taken). The first
batch of a session is timed (the tool hooks still check); after it the session is
known to run batch hooks and the tool hooks stop at the state file. Goal: at most 2×
the same batch of bare `python -c pass` processes, measured in the same run.

    python bench/bench_batch.py [RUNS]
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
from runner import Row, Timing, bench_env, git, jmem_argv, table

MEM = os.path.join(".claude", "agent-memory")
SIZES = (4, 16)


def make_repo(root: str) -> str:
    main = os.path.join(root, "main")
    os.makedirs(main)
    git(main, "init", "-q", "-b", "main")
    subprocess.run([*jmem_argv(), "init", "--no-git-hooks", "--no-claude", "--agent=api"],
                   cwd=main, env=bench_env(), check=True, capture_output=True)
    lines = [f"- Fact {i} about builds and deploys [fact-{i}]" for i in range(100)]
    Path(main, MEM, "api", "MEMORY.md").write_text("# api\n" + "\n".join(lines) + "\n")
    return main


def batch(cwd: str, argv: list[str], inputs: list[bytes], last: bytes | None,
          env: dict[str, str]) -> tuple[float, list[bytes]]:
    """Start one process per input at once, wait for all, then run `last`; (ms, outputs)."""
    start = time.perf_counter()
    procs = [subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
             for _ in inputs]
    outs = [proc.communicate(data)[0] for proc, data in zip(procs, inputs, strict=True)]
    if last is not None:
        outs.append(subprocess.run(argv, cwd=cwd, env=env, input=last, capture_output=True,
                                   check=True).stdout)
    return (time.perf_counter() - start) * 1000, outs


def rows(runs: int = 10) -> list[Row]:
    """Batches of 4 and 16 tool hooks plus the batch hook, against bare interpreters."""
    root = tempfile.mkdtemp(prefix="jmem-bench-batch-")
    env = {**bench_env(), "JMEM_DEFAULT_AGENT": "api"}
    hook = [*jmem_argv(), "wake", "--hook", "claude"]
    out: list[Row] = []
    try:
        main = make_repo(root)
        for size in SIZES:
            bare = Timing(tuple(batch(main, [sys.executable, "-c", "pass"], [b""] * size, b"",
                                      env)[0] for _ in range(runs)))
            for changed in (False, True):
                samples = []
                for run in range(runs + 1):  # one warm-up
                    session = f"bench-{size}-{changed}-{run}"
                    data = {"session_id": session, "cwd": main}
                    subprocess.run(hook, cwd=main, env=env, check=True, capture_output=True,
                                   input=json.dumps({**data, "hook_event_name": "SessionStart",
                                                     "source": "startup"}).encode())
                    state = os.path.join(main, ".git", "journal-mem", "sessions",
                                         f"{session}--main.json")
                    os.utime(state, (1, 1))  # its last check long ago: no throttle
                    if changed:
                        subprocess.run([*jmem_argv(), "write", "--agent", "api", "--topic",
                                        "ops", "--title", f"Correction {session}",
                                        "--supersedes", "fact-1", "--body", "b"],
                                       cwd=main, env=env, check=True, capture_output=True)
                    tools = [json.dumps({**data, "hook_event_name": "PostToolUse",
                                         "tool_name": "Read", "tool_use_id": f"t{i}"}).encode()
                             for i in range(size)]
                    last = json.dumps({**data, "hook_event_name": "PostToolBatch",
                                       "tool_calls": []}).encode()
                    took, outs = batch(main, hook, tools, last, env)
                    # the hooks that delivered it (one delivery names the title again in
                    # each "possibly outdated by" mark it puts on the earlier corrections)
                    told = sum(f"Correction {session}".encode() in o for o in outs)
                    if told != int(changed):
                        raise RuntimeError(f"batch of {size}: the correction came {told} times")
                    if run:
                        samples.append(took)
                timing = Timing(tuple(samples))
                what = "a correction pending" if changed else "nothing changed"
                out.append(Row(f"{size} parallel PostToolUse + PostToolBatch, {what}", timing,
                               f"{size} + 1 × python -c pass", bare, "≤ 2×",
                               timing.median <= 2 * bare.median))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10),
                "Hooks of a batch of parallel tool calls"))
