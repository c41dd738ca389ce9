"""A Claude Code hook for the end-to-end tests: it records what the CLI gave it.

    python3 capture_hook.py LOG [HOLD [CONTEXT]]

appends one JSON line to LOG: `{"event", "start", "end", "pid", "payload"}`, where
`payload` is the hook's stdin as Claude Code sent it and start/end are wall-clock
seconds around a sleep of HOLD seconds (default 0) — overlapping intervals of one
event mean the CLI ran those hooks at the same time. With CONTEXT = 1 it answers
with `hookSpecificOutput.additionalContext` `"CAPTURED <event> <tool_name>"`, so a
test can see how that context reaches the model. It uses the standard library
only and always exits 0.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(argv: list[str]) -> int:
    log = argv[1]
    hold = float(argv[2]) if len(argv) > 2 else 0.0
    context = len(argv) > 3 and argv[3] == "1"
    start = time.time()
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {"unparsed": raw}
    event = str(payload.get("hook_event_name", "?"))
    time.sleep(hold)
    line = json.dumps({"event": event, "start": start, "end": time.time(),
                       "pid": os.getpid(), "payload": payload}) + "\n"
    # one write of one line to a file opened for appending: concurrent hooks do not mix
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    if context:
        tool = payload.get("tool_name") or payload.get("agent_type") or ""
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": f"CAPTURED {event} {tool}".strip()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
