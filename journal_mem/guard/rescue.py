"""`jmem rescue`: move memory changes out of a linked worktree, losing nothing.

Each new lesson (staged or untracked) under the worktree's memory root is
validated and filed into the main checkout's journal through `journal.record`,
the writer `write` uses. Edits of MEMORY.md, topic files or any other
markdown file in an agent's folder (Claude Code curating its own memory)
become one new lesson per added line that holds a word, headings included
(topic `inbox`); a fact line deleted from MEMORY.md becomes a retraction of
its [key], and an edited one a lesson superseding it. The work tree's copy
is the one filed (it is newer than the staged one). Afterwards the
worktree's copy goes back to HEAD and is unstaged. A file is put back only
after everything it held was filed: if filing fails, it stays as it was.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import os
import re
from dataclasses import dataclass, field

from journal_mem.errors import InvalidEntry, JournalMemError, PolicyViolation
from journal_mem.gitops import gitcore, staged
from journal_mem.guard.rules import classify
from journal_mem.importers import native
from journal_mem.importers.markdown import Origin
from journal_mem.journal.drafts import to_entry
from journal_mem.journal.entry import TITLE_MAX, Entry, build
from journal_mem.journal.files import record
from journal_mem.journal.ignored import refuse_ignored
from journal_mem.journal.render import unlinked
from journal_mem.journal.validate import check_built, parse_valid
from journal_mem.layout import is_native
from journal_mem.names import MEMORY_MD, is_name
from journal_mem.repo import Context, open_context

INBOX = "inbox"
_MARKUP_RE = re.compile(r"^(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|>\s*)")
_WORDS_RE = re.compile(r"\w")
_HEADING_RE = re.compile(r"^#+\s*")
# `- [title](topics/t.md#anchor) [key]` (older: `- title (topics/t.md) [key]`): the
# line `render.fact_line` writes
_KEY_RE = re.compile(r"(?:\s+\(topics/[^()]*\.md\))?\s+\[([^\[\]]+)\]\s*$")


@dataclass
class RescueReport:
    """What went where; `failed` lines name what stayed in the worktree, and why."""

    lines: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass
class _Source:
    path: str  # repo-relative
    rel: str  # relative to the memory root
    data: bytes | None  # None: deleted in the worktree
    in_head: bool


def rescue(cwd: str) -> RescueReport:
    """Rescue every memory change of the linked worktree around `cwd`."""
    ctx = open_context(cwd)
    if ctx.repo.is_main:
        raise PolicyViolation(
            "jmem rescue moves memory out of a linked worktree; this is the main checkout",
            hint="lessons written here are already in the journal: commit them "
                 "(the guard checks them)")
    report = RescueReport()
    sources = _sources(ctx)
    agents = {agent for s in sources if (agent := classify(s.rel)[1]) is not None}
    refuse_ignored(ctx.layout, sorted(agents), "rescue")  # the lessons would never be committed
    if not sources:
        report.lines.append(f"nothing to rescue under {ctx.layout.memory_root}/ in this worktree")
    for source in sources:
        try:
            _rescue_one(ctx, source, report)
        except (JournalMemError, OSError) as exc:
            reason = exc.message if isinstance(exc, JournalMemError) else str(exc)
            report.failed.append(f"{source.path}: left in place: {reason}")
    return report


def _sources(ctx: Context) -> list[_Source]:
    """Every path under the memory root that differs from HEAD (index, work tree, untracked)."""
    top, root = ctx.repo.worktree_root, ctx.layout.memory_root
    has_head = gitcore.has_head(top)
    head = staged.tree_blobs(top, "HEAD", root) if has_head else {}
    index = {c.path: c for c in staged.changes(top, root, clean=True)}
    against = "HEAD" if has_head else gitcore.EMPTY_TREE
    work = {c.path for c in staged.changes(top, root, against=against, cached=False, clean=True)}
    paths = sorted(set(index) | work | set(staged.untracked(top, root, clean=True)))
    blobs = staged.read_blobs(top, [c.new_blob for c in index.values() if c.status != "D"],
                              clean=True)
    sources = []
    for path in paths:
        full = os.path.join(top, path)
        data: bytes | None = None
        if os.path.isfile(full) and not os.path.islink(full):
            with open(full, "rb") as fh:
                data = fh.read()
        elif path in index and index[path].status != "D":
            data = blobs.get(index[path].new_blob)
        sources.append(_Source(path, path[len(root) + 1 :], data, path in head))
    return sources


def rescue_path(ctx: Context, path: str) -> RescueReport:
    """File one memory file of the checkout `ctx` was opened in (repo-relative `path`,
    under the memory root) as `rescue` would, main checkout or worktree: what the
    capture hook does the moment an agent writes one."""
    top, root = ctx.repo.worktree_root, ctx.layout.memory_root
    full = os.path.join(top, path)
    data: bytes | None = None
    if os.path.isfile(full) and not os.path.islink(full):
        with open(full, "rb") as fh:
            data = fh.read()
    in_head = gitcore.has_head(top) and path in staged.tree_blobs(top, "HEAD", path)
    report = RescueReport()
    try:
        _rescue_one(ctx, _Source(path, path[len(root) + 1:], data, in_head), report)
    except (JournalMemError, OSError) as exc:
        reason = exc.message if isinstance(exc, JournalMemError) else str(exc)
        report.failed.append(f"{path}: left in place: {reason}")
    return report


def _rescue_one(ctx: Context, source: _Source, report: RescueReport) -> None:
    kind, agent = classify(source.rel)
    if source.data is not None and is_native(source.rel) and source.rel != MEMORY_MD:
        _file_native(ctx, source, report)
    elif source.data is None:
        _restore(ctx, source)
        report.lines.append(f"{source.path}: deleted here; restored from HEAD (to delete a "
                            "fact everywhere: jmem write … --retracts KEY)")
    elif kind == "entry" and agent is not None:
        _file_entry(ctx, source, agent, report)
    elif agent is not None and (kind == "distilled" or source.rel.endswith(".md")):
        _file_lines(ctx, source, agent, report)
    elif source.rel == MEMORY_MD:  # the root index: every agent's
        _file_lines(ctx, source, ctx.config.default_agent, report)
    elif kind in ("keep", "distilled"):
        _restore(ctx, source)
        report.lines.append(f"{source.path}: restored from HEAD (only the distiller writes it)")
    else:
        report.failed.append(f"{source.path}: left in place: not a lesson or a memory file; "
                             "move it out of the memory root")


def _file_entry(ctx: Context, source: _Source, agent: str, report: RescueReport) -> None:
    """A lesson file: validate, file it in the main journal, then put the worktree back."""
    assert source.data is not None
    entry = parse_valid(source.data, ctx.policy, filename=source.rel, folder_agent=agent)
    if source.in_head:  # an edit of a committed entry: file it as the newer lesson (same key)
        entry = dataclasses.replace(entry, created=dt.datetime.now(dt.UTC))
    written = record(ctx.layout, entry)
    _restore(ctx, source)
    report.lines.append(f"{source.path} -> {written.path}")
    if written.note:
        report.lines.append(f"  note: {written.note}")


def _file_native(ctx: Context, source: _Source, report: RescueReport) -> None:
    """A memory file the client wrote itself: one lesson, keyed by its `name` (an edit of
    it is a correction of the same key), filed in the main journal; then put back."""
    assert source.data is not None
    agent = classify(source.rel)[1]
    branch = gitcore.current_branch(ctx.repo.worktree_root) or "detached HEAD"
    origin = Origin(agent or ctx.config.default_agent,
                    f"jmem capture: {source.path} on {branch}"[:480],
                    applies_to=("all",) if agent is None else ())
    nf = native.NativeFile(source.rel, os.path.join(ctx.repo.worktree_root, source.path), agent)
    draft = native.file_draft(nf, source.data.decode("utf-8", "replace"), origin)
    if isinstance(draft, str):
        raise PolicyViolation(f"{source.path}: native memory refused: {draft}",
                              hint="remove it (rotate it if it was real), then write it again")
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    written = record(ctx.layout, to_entry(draft, now, ctx.policy))
    _restore(ctx, source)
    report.lines.append(f"{source.path} -> {written.path}")
    if written.note:
        report.lines.append(f"  note: {written.note}")


def _file_lines(ctx: Context, source: _Source, agent: str, report: RescueReport) -> None:
    """A curated memory file: each added line becomes one inbox lesson, and a fact line
    deleted from MEMORY.md becomes a retraction of that fact (its key is in [brackets])."""
    assert source.data is not None
    old = b""
    if source.in_head:
        old = gitcore.run(["show", f"HEAD:{source.path}"], ctx.repo.worktree_root,
                           clean=True).stdout
    added, removed = changed_lines(old.decode("utf-8", "replace"),
                                   source.data.decode("utf-8", "replace"))
    facts = source.rel.endswith("/" + MEMORY_MD)  # only there is a line one fact [key]
    if not facts:
        removed = []
    branch = gitcore.current_branch(ctx.repo.worktree_root) or "detached HEAD"
    origin = f"jmem rescue: added to {source.path} on {branch}"[:500]
    entries = [_line_entry(ctx, agent, line, origin, facts) for line in added]
    kept = {fact_key(line) for line in added} if facts else set()
    gone = f"jmem rescue: deleted from {source.path} on {branch}"[:500]
    entries += [_retraction(ctx, agent, line, key, gone) for line in removed
                if (key := fact_key(line)) and key not in kept]
    written = [record(ctx.layout, entry) for entry in entries]
    _restore(ctx, source)
    retracted = sum(1 for e in entries if e.retracts)
    lessons = len(written) - retracted
    count = ("1 added line filed as a lesson" if lessons == 1
             else f"{lessons} added lines filed as lessons") + f" (topic {INBOX})"
    if retracted:
        count += (", 1 deleted fact line filed as a retraction" if retracted == 1 else
                  f", {retracted} deleted fact lines filed as retractions")
    report.lines.append(f"{source.path}: {count}; restored from HEAD")
    report.lines += [f"  -> {w.path}" for w in written]


def changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    """(lines of `new` that `old` lacks, lines of `old` that `new` lacks), each without
    list markup; a line counts when it holds a word (headings included: nothing that
    was written is dropped)."""

    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    added: list[str] = []
    removed: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("insert", "replace"):
            added += _content(new_lines[j1:j2])
        if tag in ("delete", "replace"):
            removed += _content(old_lines[i1:i2])
    return added, removed


def _content(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        text = _MARKUP_RE.sub("", line.strip()).strip()
        text = _HEADING_RE.sub("", text).strip()
        if _WORDS_RE.search(text):
            out.append(text)
    return out


def fact_key(line: str) -> str | None:
    """The key of a MEMORY.md fact line (`title (topics/t.md) [key]`), or None."""
    match = _KEY_RE.search(line)
    return match.group(1) if match and is_name(match.group(1)) else None


def _line_entry(ctx: Context, agent: str, line: str, origin: str, facts: bool) -> Entry:
    key = fact_key(line) if facts else None
    if key:  # an edited fact line: the corrected lesson replaces the fact
        line = unlinked(_KEY_RE.sub("", line).strip()) or line
    title, body = line, ""
    if len(line) > TITLE_MAX:
        title, body = line[: TITLE_MAX - 1].rstrip() + "…", line
    return _checked(ctx, build(agent=agent, topic=INBOX, title=title, body=body, source=origin,
                               supersedes=[key] if key else None,
                               entry_bytes=ctx.config.budget.entry_bytes))


def _retraction(ctx: Context, agent: str, line: str, key: str, origin: str) -> Entry:
    """A lesson retracting the fact whose MEMORY.md line was deleted."""
    text = unlinked(_KEY_RE.sub("", line).strip()) or key
    title = f"Retracted: {text}"
    if len(title) > TITLE_MAX:
        title = title[: TITLE_MAX - 1].rstrip() + "…"
    return _checked(ctx, build(
        agent=agent, topic=INBOX, title=title,
        body=f"The line `{line}` was deleted from MEMORY.md in a worktree.",
        source=origin, retracts=[key], entry_bytes=ctx.config.budget.entry_bytes))


def _checked(ctx: Context, entry: Entry) -> Entry:
    """The entry judged by the shared policy (secrets), with the rescue's own fix."""
    try:
        return check_built(entry, ctx.policy)
    except InvalidEntry as exc:
        raise InvalidEntry([*exc.problems, "remove it (rotate it if it was real) and run "
                            "jmem rescue again"]) from None


def _restore(ctx: Context, source: _Source) -> None:
    """Put the worktree's copy back to HEAD and unstage it (a new file is removed)."""
    top = ctx.repo.worktree_root
    if source.in_head:
        gitcore.run(["restore", "--source=HEAD", "--staged", "--worktree", "--",
                      staged.pathspec(source.path)], top, clean=True)
        return
    gitcore.run(["rm", "--cached", "-f", "-q", "--ignore-unmatch", "--",
                  staged.pathspec(source.path)], top, clean=True)
    full = os.path.join(top, source.path)
    if os.path.lexists(full):
        os.unlink(full)
