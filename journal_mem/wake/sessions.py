"""The session log and each session's state: what a Claude Code session was given.

`<git-common-dir>/journal-mem/logs/sessions.jsonl`, one JSON object a line
(time, event, source, session id, agent id, agent, keys injected), appended
with a single `O_APPEND` write so that parallel sessions never interleave a
line. It answers "what did that session know" (`jmem status --sessions`).

`<git-common-dir>/journal-mem/sessions/<session>--<agent id>.json` is the
running total of one session (or subagent): when it started (the reminder's
clock, kept across resume and compaction), the digests of the lines it holds
(injected by jmem or loaded natively by Claude Code), and the modification
times of the files that could change them. The live check (UserPromptSubmit
and the tool events) reads only this file and stats those paths, so "nothing
changed" costs a few system calls. Standard library only (hot path).

Claude Code runs the hooks of parallel tool calls at the same moment, so every
read-modify-write of a state happens under `SessionLock`, a lock (`fsutil.try_lock`) on the
session's own `.lock` file beside it: a hook that finds something changed
takes the lock, reads the state again and decides on what it reads there, so
the second of two racing hooks sees that the first delivered the change.
"""

from __future__ import annotations

import os
import time

from journal_mem import hashes, jsonc
from journal_mem.fsutil import O_BINARY, O_CLOEXEC, append_json_line, replace_atomic, try_lock

# `typing`, `datetime` and `hashlib` cost ~6 ms together, `re` (with the `enum` it
# imports) ~6 ms alone: the live check at every prompt needs none of them, so they are
# imported where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from types import ModuleType

LOG = os.path.join("logs", "sessions.jsonl")
REMINDED = "reminded"
STATES = "sessions"
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def state_path(state_dir: str, session_id: str, agent_id: str) -> str:
    """Where the state of one session (agent_id "" = the main session) is kept."""
    name = f"{session_id}--{agent_id or 'main'}"
    if len(name) > 150 or not set(name) <= _SAFE or name.startswith("."):
        name = _digest(session_id, agent_id)[:40]
    return os.path.join(state_dir, STATES, name + ".json")


def lock_path(path: str) -> str:
    """The lock file of the session whose state is `path` (never deleted: deleting a lock
    file races with a process about to take it)."""
    return path.removesuffix(".json") + ".lock"


class SessionLock:
    """`with SessionLock(path, wait) as held:` an exclusive lock on a session's lock file;
    `held` is False when another hook still held it after `wait` seconds (0: do not wait).

    The lock is released when its holder dies, so a killed hook never
    leaves a session locked. The descriptor is close-on-exec: no child inherits it.
    """

    __slots__ = ("fd", "path", "wait")

    def __init__(self, path: str, wait: float) -> None:
        self.path, self.wait, self.fd = lock_path(path), wait, -1

    def __enter__(self) -> bool:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | O_CLOEXEC | O_BINARY, 0o644)
        deadline = time.monotonic() + self.wait
        try:
            while not try_lock(fd):
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.005)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        return True

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing releases the lock
            self.fd = -1


# A tool call that records a lesson, in any client: `jmem write` in a shell (also
# `journal-mem write`, `python -m journal_mem write`, with `-C PATH`), or an MCP tool
# call of journal-mem's `write_lesson` (Claude Code names it `mcp__SERVER__write_lesson`).
# Patterns a hook uses on some events only are compiled on first use (re's own cache):
# compiling one costs ~0.1 ms of every hook start.
_LESSON_CMD = r"\b(?:jmem|journal-mem|journal_mem)(?:\s+-C\s+\S+)?\s+write\b"


def records_lesson(tool: str, tool_input: object) -> bool:
    """True when this tool call records a lesson (the reminder counts only the session's
    own lessons: `wrote` in its state)."""
    if tool == "write_lesson" or tool.endswith("__write_lesson"):
        return True
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list):  # Codex's exec: an argv
        command = " ".join(str(part) for part in command)
    return (isinstance(command, str) and "write" in command
            and regex().search(_LESSON_CMD, command) is not None)


_ENTRY_FILE = r"\d{4}-\d{2}-\d{2}-[A-Za-z0-9._-]+\.md"


def entry_names(text: str) -> list[str]:
    """The journal entry file names a tool's output names (`jmem write` prints the path)."""
    names: list[str] = regex().findall(_ENTRY_FILE, text) if ".md" in text else []
    return sorted(set(names))


def regex() -> ModuleType:
    """The `re` module, imported on first use: a hook that matches no pattern (the live
    check after a `Read`, most of them) never loads it."""
    import re

    return re


def note_lesson(state_dir: str, session_id: str, agent_id: str,
                files: list[str] | None = None) -> None:
    """Mark the session (and, for a subagent, its parent session) as having recorded a
    lesson, under each state's lock; `files`, the entries it wrote, are its own (never
    sent back to it as news). A session that never woke has no state to mark."""
    for who in dict.fromkeys((agent_id, "")):
        path = state_path(state_dir, session_id, who)
        if not os.path.isfile(path):  # never woke: nothing to mark, no lock file to leave
            continue
        with SessionLock(path, 3.0) as held:
            state = load_state(path) if held else None
            if state is None:
                continue
            own = state.get("own")
            names = sorted({*(own if isinstance(own, list) else ()), *(files or ())})
            if state.get("wrote") is not True or names != own:
                state["wrote"] = True
                state["own"] = names
                save_state(path, state)


def load_state(path: str) -> dict[str, object] | None:
    """A session's state, or None when it has none (never woke with jmem) or it is unreadable."""
    try:
        with open(path, "rb") as fh:
            return _load(fh.read())
    except (FileNotFoundError, NotADirectoryError):
        return None


def save_state(path: str, state: dict[str, object]) -> None:
    """Write a session's state atomically (temp file in the same folder, then rename)."""
    replace_atomic(path, jsonc.dumps(state, ensure_ascii=False, sort_keys=True).encode("utf-8"))


def mtimes(paths: list[str]) -> dict[str, int]:
    """Modification time (ns) of each path; 0 for a missing one."""
    out = {}
    for path in paths:
        try:
            out[path] = os.stat(path).st_mtime_ns
        except OSError:
            out[path] = 0
    return out


def unchanged(state: dict[str, object]) -> bool:
    """True when no watched path of the state changed since it was recorded."""
    watch = state.get("watch")
    if not isinstance(watch, dict) or not watch:
        return False
    return mtimes(list(watch)) == watch


def log_path(state_dir: str) -> str:
    return os.path.join(state_dir, LOG)


def now() -> dt.datetime:
    """The current time, UTC, to the millisecond (as entries stamp `created`)."""
    import datetime as dt

    t = dt.datetime.now(dt.UTC)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def stamp() -> str:
    """`now().isoformat(timespec="milliseconds")`, without `datetime` (~2 ms of a hook)."""
    seconds, ns = divmod(time.time_ns(), 1_000_000_000)
    return (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
            + f".{ns // 1_000_000:03d}+00:00")


def append(state_dir: str, record: dict[str, object]) -> None:
    """Append one record to the session log."""
    append_json_line(log_path(state_dir), record)


def read(state_dir: str, limit: int | None = None) -> list[dict[str, object]]:
    """The last `limit` records (all when None), oldest first; bad lines are skipped."""
    try:
        with open(log_path(state_dir), "rb") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return []
    out = [r for r in (_load(x) for x in lines) if r is not None]
    return out if limit is None else out[-limit:]


def _digest(session_id: str, agent_id: str) -> str:
    """A file name for a session that cannot be its own (the hash module loads on
    first use: a session with a plain id never needs it before its reminder)."""
    return hashes.sha256(f"{session_id}\0{agent_id}".encode()).hexdigest()


def _reminder_marker(state_dir: str, session_id: str, agent_id: str) -> str:
    return os.path.join(state_dir, REMINDED, _digest(session_id, agent_id)[:32])


def first_reminder(state_dir: str, session_id: str, agent_id: str) -> bool:
    """True the first time it is asked for this session; False ever after.

    An exclusive create is the memory, so two Stop hooks racing block once.
    """
    marker = _reminder_marker(state_dir, session_id, agent_id)
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    try:
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return False
    return True


def reminded(state_dir: str, session_id: str, agent_id: str) -> bool:
    """True when this session was reminded already (`first_reminder` said True once)."""
    return os.path.exists(_reminder_marker(state_dir, session_id, agent_id))


def _load(raw: bytes) -> dict[str, object] | None:
    if not raw.strip():
        return None
    try:
        record = jsonc.loads(raw.decode("utf-8", "surrogatepass"))  # as json.loads(raw)
    except ValueError:  # UnicodeDecodeError too
        return None
    return record if isinstance(record, dict) else None


def parse_time(text: object) -> dt.datetime | None:
    """A time written by `now().isoformat()` (None when it is not one)."""
    import datetime as dt

    if not isinstance(text, str):
        return None
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
