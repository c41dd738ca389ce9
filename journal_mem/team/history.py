"""A fact's history, read from git: which commit brought each journal entry in, and what
every agent's `MEMORY.md` said at each commit that changed one.

Distilled files are committed, so git already holds who loaded which version
of a fact and when: `MEMORY.md` at commit C is what an agent woke up with
from C until the next commit that changed it. All blobs are read through one
`git cat-file --batch` process, so the cost is one git call per question,
not one per commit.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from journal_mem.gitops import gitcore
from journal_mem.journal.render import unlinked
from journal_mem.names import MEMORY_MD, NAME
from journal_mem.repo import Context

FACT_LINE = re.compile(r"^- (?P<text>.*) \[(?P<key>" + NAME + r")\]$")


_DISTILL_SUBJECT = re.compile(r"^jmem distill (\d{4}-\d{2}-\d{2})\b")


@dataclass(frozen=True)
class Commit:
    sha: str
    committed: dt.datetime
    subject: str

    @property
    def date(self) -> dt.date:
        """The distill date the commit records (`jmem distill YYYY-MM-DD: …`), else its own."""
        m = _DISTILL_SUBJECT.match(self.subject)
        return dt.date.fromisoformat(m[1]) if m else self.committed.date()


@dataclass
class Snapshot:
    """Every agent's MEMORY.md fact lines at one commit: agent -> key -> line text."""

    commit: Commit
    memory: dict[str, dict[str, str]] = field(default_factory=dict)


def fact_lines(text: str, keys: Collection[str] | None = None) -> dict[str, str]:
    """key -> the text of its line, for each fact line of a MEMORY.md; with `keys`, only
    theirs: a MEMORY.md that names none of them is not split into lines (`jmem log KEY`
    reads every agent's MEMORY.md at every distill commit)."""
    lines: list[str]
    if keys is None:
        lines = text.splitlines()
    else:
        ends = tuple(f" [{key}]" for key in keys)
        if not any(end in text for end in ends):
            return {}
        lines = [line for line in text.splitlines() if line.rstrip("\r").endswith(ends)]
    out = {}
    for line in lines:
        m = FACT_LINE.match(line.rstrip("\r"))
        if m:
            out[m["key"]] = unlinked(m["text"])
    return out


def _log(ctx: Context, args: list[str]) -> list[Commit]:
    """Commits (oldest first) from `git log ARGS`."""
    res = gitcore.run(["log", "--reverse", "-z", "--format=%H%x1f%cI%x1f%s", *args],
                       ctx.repo.main_root, clean=True, check=False)
    if not res.ok:
        return []  # no commit yet
    out = []
    for record in res.text().split("\0"):
        if record.strip():
            sha, when, subject = record.strip("\n").split("\x1f", 2)
            out.append(Commit(sha, dt.datetime.fromisoformat(when), subject))
    return out


def entry_commits(ctx: Context, only: list[str] | None = None) -> dict[str, Commit]:
    """memory-root-relative journal path -> the commit that added it (`only` these paths:
    one fact's few entries need not walk the whole journal's history)."""
    root = ctx.layout.memory_root
    specs = [f":(top,literal){root}/{rel}" for rel in only] if only is not None else [f"{root}/"]
    if not specs:
        return {}
    res = gitcore.run(["log", "--reverse", "--diff-filter=A", "--no-renames", "-z",
                        "--name-only", "--format=%x1e%H%x1f%cI%x1f%s", "--", *specs],
                       ctx.repo.main_root, clean=True, check=False)
    out: dict[str, Commit] = {}
    if not res.ok:
        return out
    for chunk in res.text().split("\x1e")[1:]:
        head, _, names = chunk.partition("\n")
        sha, when, subject = head.split("\x1f", 2)
        commit = Commit(sha, dt.datetime.fromisoformat(when), subject)
        for name in names.split("\0"):
            name = name.strip("\n")
            if name.startswith(f"{root}/") and "/journal/" in name:
                out.setdefault(name[len(root) + 1:], commit)
    return out


def _blobs(ctx: Context, specs: list[str]) -> list[bytes | None]:
    """The contents of `rev:path` specs, in order (None where missing), one git process."""
    if not specs:
        return []
    res = gitcore.run(["cat-file", "--batch"], ctx.repo.main_root, clean=True,
                       stdin="".join(f"{s}\n" for s in specs).encode())
    out: list[bytes | None] = []
    data, pos = res.stdout, 0
    for _ in specs:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split()
        if len(header) == 3:
            size = int(header[2])
            out.append(data[nl + 1:nl + 1 + size])
            pos = nl + 1 + size + 1
        else:  # "<spec> missing"
            out.append(None)
            pos = nl + 1
    return out


def memory_history(ctx: Context, agents: list[str],
                   keys: Collection[str] | None = None) -> list[Snapshot]:
    """What each agent's MEMORY.md said at every commit that changed one, oldest first
    (the lines of `keys` only, when given: `fact_lines`).

    `git log --raw` names the new blob of every changed MEMORY.md; each distinct
    blob is read once, and a snapshot carries the unchanged agents over.
    """
    root = ctx.layout.memory_root
    paths = {f"{root}/{a}/{MEMORY_MD}": a for a in agents}
    res = gitcore.run(["log", "--reverse", "--raw", "--no-abbrev", "--no-renames", "-z",
                        "--format=%x1e%H%x1f%cI%x1f%s", "--", *paths],
                       ctx.repo.main_root, clean=True, check=False)
    if not res.ok:
        return []
    changes: list[tuple[Commit, dict[str, str | None]]] = []
    for chunk in res.text().split("\x1e")[1:]:
        head, _, raw = chunk.partition("\n")
        sha, when, subject = head.split("\x1f", 2)
        fields = [f for f in raw.strip("\n").split("\0")]
        changed: dict[str, str | None] = {}
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.lstrip(":").split()
            if path in paths and len(parts) >= 5:
                changed[paths[path]] = None if parts[4] == "D" else parts[3]
        changes.append((Commit(sha, dt.datetime.fromisoformat(when), subject), changed))
    wanted = sorted({b for _, ch in changes for b in ch.values() if b})
    texts = {b: fact_lines((blob or b"").decode("utf-8", "replace"), keys)
             for b, blob in zip(wanted, _blobs(ctx, wanted), strict=True)}
    out, current = [], dict[str, dict[str, str]]()
    for commit, changed in changes:
        for agent, blob in changed.items():
            if blob is None:
                current.pop(agent, None)
            else:
                current[agent] = texts[blob]
        out.append(Snapshot(commit, dict(current)))
    return out


@dataclass
class Span:
    """One agent loading one version of a fact from `start` until `end` (None: still)."""

    agent: str
    text: str
    start: Commit
    end: Commit | None = None


def version(lines: dict[str, str], keys: list[str]) -> str | None:
    """The line text of the first of `keys` (a fact and its successors) present."""
    for key in keys:
        if key in lines:
            return f"{lines[key]} [{key}]"
    return None


def spans(history: list[Snapshot], keys: list[str]) -> list[Span]:
    """Every agent's versions of a fact (`keys`: it and its successors) over time."""
    open_: dict[str, Span] = {}
    done: list[Span] = []
    for snap in history:
        for agent in sorted(set(open_) | set(snap.memory)):
            text = version(snap.memory.get(agent, {}), keys)
            current = open_.get(agent)
            if current is not None and current.text == text:
                continue
            if current is not None:
                current.end = snap.commit
                done.append(current)
                del open_[agent]
            if text is not None:
                open_[agent] = Span(agent, text, snap.commit)
    done += open_.values()
    return sorted(done, key=lambda s: (s.agent, s.start.date, s.start.committed))
