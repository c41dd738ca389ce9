"""The session log: what each Claude Code session was given when it woke up.

`<git-common-dir>/journal-mem/logs/sessions.jsonl`, one JSON object a line
(time, event, session id, agent id, agent, keys injected), appended with a
single `O_APPEND` write so that parallel sessions never interleave a line.
It answers "what did that session know" (`jmem status --sessions`) and gives
`remind` the time its session started. Standard library only (hot path).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os

LOG = os.path.join("logs", "sessions.jsonl")
REMINDED = "reminded"
TAIL_CHUNK = 65536


def log_path(state_dir: str) -> str:
    return os.path.join(state_dir, LOG)


def now() -> dt.datetime:
    """The current time, UTC, to the millisecond (as entries stamp `created`)."""
    t = dt.datetime.now(dt.UTC)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def append(state_dir: str, record: dict[str, object]) -> None:
    """Append one record to the session log."""
    path = log_path(state_dir)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read(state_dir: str, limit: int | None = None) -> list[dict[str, object]]:
    """The last `limit` records (all when None), oldest first; bad lines are skipped."""
    try:
        with open(log_path(state_dir), "rb") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return []
    out = [r for r in (_load(x) for x in lines) if r is not None]
    return out if limit is None else out[-limit:]


def session_start(state_dir: str, session_id: str, agent_id: str) -> dt.datetime | None:
    """When this session (or subagent) woke up, from the newest matching log record.

    Reads the log backwards a chunk at a time: a long log is not read whole.
    """
    try:
        fh = open(log_path(state_dir), "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    with fh:
        end = fh.seek(0, os.SEEK_END)
        tail = b""
        while end > 0:
            start = max(0, end - TAIL_CHUNK)
            fh.seek(start)
            block = fh.read(end - start) + tail
            lines = block.split(b"\n")
            tail = lines.pop(0) if start > 0 else b""
            for raw in reversed(lines):
                record = _load(raw)
                if record and record.get("session_id") == session_id and \
                        record.get("agent_id", "") == agent_id and record.get("time"):
                    return _time(str(record["time"]))
            end = start
    return None


def first_reminder(state_dir: str, session_id: str, agent_id: str) -> bool:
    """True the first time it is asked for this session; False ever after.

    An exclusive create is the memory, so two Stop hooks racing block once.
    """
    folder = os.path.join(state_dir, REMINDED)
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha256(f"{session_id}\0{agent_id}".encode()).hexdigest()[:32]
    try:
        os.close(os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o644))
    except FileExistsError:
        return False
    return True


def _load(raw: bytes) -> dict[str, object] | None:
    if not raw.strip():
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _time(text: str) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
