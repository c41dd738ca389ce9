"""What a Claude Code session already has in its context, so that each fact reaches it once.

Three sources: the MEMORY.md Claude Code loads natively (a subagent, or a
`claude --agent` session, whose definition says `memory: project`; in a
linked worktree that copy is as old as its branch), the session's own state
file (what jmem injected before: resume, live corrections), and, for a
session that resumes under a new id (a fork), the earlier packs still in its
transcript. The wake-up pack then leaves out every line held (by digest) and
names the keys held that are no longer true
(docs/DESIGN.md, "Claude Code hooks"). Standard library only (the wake-up hook).
"""

from __future__ import annotations

import os
import re

from journal_mem import jsonc
from journal_mem.hashes import blake2b
from journal_mem.layout import MEMORY_MD, Layout
from journal_mem.names import NAME

# A fact line's key is the bracketed name that ends a `- ` line: the header's
# "KEY is in [brackets]" and brackets inside a title are not keys.
KEY_RE = re.compile(r"^- .* \[(" + NAME + r")\]$")
PACK_HEAD = "# journal-mem: memory of agent "  # the first line of every pack jmem injects
TRANSCRIPT_MAX = 64 * 1024 * 1024  # a bigger transcript is not searched


class Held:
    """What a session already has in its context: line digests and the keys they carry."""

    __slots__ = ("digests", "keys")

    def __init__(self, digests: set[str] | None = None, keys: set[str] | None = None) -> None:
        self.digests = digests or set()
        self.keys = keys or set()

    @classmethod
    def of_text(cls, text: str) -> Held:
        """What a session holds once `text` (a MEMORY.md, a pack) is in its context."""
        lines = [raw for raw in text.split("\n") if raw.strip()]
        return cls({digest(raw) for raw in lines},
                   {k for raw in lines for k in KEY_RE.findall(raw)})


def digest(text: str) -> str:
    """A short stable name for one line of text (what the session state remembers)."""
    return blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def native_copy(layout: Layout, agent: str, event: str, agent_type: str) -> str | None:
    """The MEMORY.md text Claude Code loads into this session itself, or None.

    Claude Code loads `.claude/agent-memory/<name>/MEMORY.md` of the session's
    own checkout (in a linked worktree: its copy, as old as its branch) into a
    subagent, or a `claude --agent NAME` main session, whose definition (found
    by its frontmatter `name`) says `memory: project` — unless auto memory is off.
    """
    from journal_mem.wake import native

    if event != "SubagentStart" and not (event == "SessionStart" and agent_type):
        return None
    project = layout.repo.worktree_root
    if native.agent_memory_scope(project, agent) != "project" or \
            not native.auto_memory_enabled(project):
        return None
    try:
        with open(os.path.join(project, native.NATIVE_ROOT, agent, MEMORY_MD),
                  encoding="utf-8", errors="replace") as fh:
            return native.native_part(fh.read())
    except OSError:
        return None


def in_transcript(path: str, agent: str) -> Held | None:
    """The packs for `agent` already in a session's transcript (JSONL); None when it
    holds none (or cannot be read): a session resumed under a new id, as a fork is."""
    head = (PACK_HEAD + agent).encode()
    try:
        if not path or os.path.getsize(path) > TRANSCRIPT_MAX:
            return None
        with open(path, "rb") as fh:
            lines = [line for line in fh if head in line]
    except OSError:
        return None
    texts: list[str] = []
    for line in lines:
        try:
            _strings(jsonc.loads(line.decode("utf-8", "surrogatepass")), PACK_HEAD + agent,
                     texts)
        except ValueError:  # UnicodeDecodeError too
            continue
    if not texts:
        return None
    return Held.of_text("\n".join(texts))


def _strings(value: object, needle: str, out: list[str]) -> None:
    """Every string inside `value` (nested JSON) that holds `needle`."""
    if isinstance(value, str):
        if needle in value:
            out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, needle, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, needle, out)


def resumed_session() -> str | None:
    """The session id a `claude --resume ID` (or `-r ID`) process names on its command
    line, found among this hook's ancestors (Linux /proc; None elsewhere).

    A fork (`--resume ID --fork-session`) starts under a new id, and its
    SessionStart input does not name the session it copies; the copied
    transcript is written only after the first prompt's hooks ran.
    """
    pid = os.getppid()
    for _ in range(4):  # the hook's shell, then Claude Code
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().decode("utf-8", "replace").split("\0")
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
        for i, arg in enumerate(argv[:-1]):
            if arg in ("--resume", "-r") and argv[i + 1] and not argv[i + 1].startswith("-"):
                return argv[i + 1]
            if arg.startswith("--resume="):
                return arg.partition("=")[2] or None
        if pid <= 1:
            return None
    return None
