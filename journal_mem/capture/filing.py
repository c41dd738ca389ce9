"""One memory file of a checkout, read into a proposal for the intake, filed, put back.

Both `jmem rescue` (every memory change of a linked worktree) and the capture
of a native Write/Edit (`capture/hook.py`, any checkout) file a file here, so
the two cannot drift apart; each kind is read the way the distiller reads it:

* a lesson file (`journal/…`): validated, filed as it is (a committed one that
  was edited is the newer lesson of the same key);
* a native memory file: the lessons `importers/native.py` makes of it (whole,
  split at its own sections when over the entry limit; only a secret refuses);
* an agent's `MEMORY.md` or topic file: diffed against what the distiller
  wrote (`distill/handedit.py`): an edited line keeps its fact's key, body,
  topic, type and importance; a deleted line drops that holder (retracts,
  when its agent wrote the fact); generated lines are never content; an index
  line naming a memory file is that file's line, not a fact;
* the root `MEMORY.md`: read as the distiller adopts a native index;
* any other markdown file in an agent's folder: each added line a lesson.

Every proposal goes through `intake.pipeline.file` (symlinks, ignored
journals, `knew`, the one-third limit, validation, idempotence). The
checkout's copy goes back to HEAD only after everything it held was filed.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import re

from journal_mem.errors import PolicyViolation
from journal_mem.gitops import gitcore, staged
from journal_mem.importers import native
from journal_mem.importers.found import NativeFile
from journal_mem.importers.markdown import Origin, memory_drafts
from journal_mem.intake.pipeline import Proposal, file, file_entry
from journal_mem.journal.drafts import Draft, title_and_body
from journal_mem.journal.entry import now as stamp_now
from journal_mem.journal.reader import Journal, read_journal
from journal_mem.journal.validate import parse_valid
from journal_mem.layout import DISTILL_STATE, JOURNAL, KEEP, MEMORY_MD, TOPICS, is_native
from journal_mem.names import is_name
from journal_mem.repo import Context
from journal_mem.tuples import NamedTuple

INBOX = "inbox"
_MARKUP_RE = re.compile(r"^(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|>\s*)")
_WORDS_RE = re.compile(r"\w")
_HEADING_RE = re.compile(r"^#+\s*")


class CheckoutFile(NamedTuple):
    """One memory path of a checkout, as it is now."""

    path: str  # repo-relative
    rel: str  # relative to the memory root
    data: bytes | None  # None: deleted in the checkout
    in_head: bool


class Filing:
    """What became of one memory file: the entries filed (absolute paths), one line for
    the user, and why it stayed where it was ("" when it was filed). (Named tuples and
    plain classes here: `dataclasses` with the `inspect` it imports cost the capture
    hook, after every native memory write, ~11 ms.)"""

    __slots__ = ("entries", "failed", "line", "notes", "path", "whole")

    def __init__(self, path: str) -> None:
        self.path = path
        self.entries: list[str] = []
        self.line = ""
        self.notes: list[str] = []
        self.failed = ""
        self.whole = False  # the file was one lesson (or one per part): a lesson or native file


def kind_of(rel: str) -> tuple[str, str | None]:
    """What a memory-root-relative path is, and the agent folder it is in."""
    parts = rel.split("/")
    agent = parts[0] if len(parts) > 1 and is_name(parts[0]) else None
    if rel == MEMORY_MD:
        return "index", None
    if agent and len(parts) == 3 and parts[1] == JOURNAL:
        return "entry", agent
    if agent and (parts[1:] == [MEMORY_MD] or (len(parts) == 3 and parts[1] == TOPICS)):
        return "distilled", agent
    if is_native(rel):
        return "native", agent
    if agent and rel.endswith(".md") and parts[1] not in (JOURNAL, TOPICS):
        return "notes", agent
    return "other", agent


def source_at(ctx: Context, path: str) -> CheckoutFile:
    """The memory file at repo-relative `path` of the checkout `ctx` was opened in."""
    top, root = ctx.repo.worktree_root, ctx.layout.memory_root
    full = os.path.join(top, path)
    data: bytes | None = None
    if os.path.isfile(full) and not os.path.islink(full):
        with open(full, "rb") as fh:
            data = fh.read()
    in_head = gitcore.has_head(top) and path in staged.tree_blobs(top, "HEAD", path)
    return CheckoutFile(path, path[len(root) + 1:], data, in_head)


def symlink_in(top: str, path: str) -> str | None:
    """The first component of repo-relative `path` below `top` that is a symlink (the
    file itself included), or None: a file reached through one may lie outside the
    repository, and is never filed."""
    current = top
    for part in path.split("/"):
        current = os.path.join(current, part)
        if os.path.islink(current):
            return os.path.relpath(current, top).replace(os.sep, "/")
    return None


def file_source(ctx: Context, source: CheckoutFile) -> Filing:
    """File what `source` holds through the intake, then put the checkout's copy back;
    `Filing.failed` says why it stayed where it was."""
    out = Filing(source.path)
    link = symlink_in(ctx.repo.worktree_root, source.path)
    if link:
        out.failed = (f"{link} is a symlink: memory must be real files inside the repository; "
                      "nothing filed")
        return out
    kind, agent = kind_of(source.rel)
    if source.data is None:
        restore(ctx, source)
        out.line = (f"{source.path}: deleted here; restored from HEAD (to delete a fact "
                    "everywhere: jmem write … --retracts KEY)")
        return out
    if kind == "other":
        if source.rel.split("/")[-1] == KEEP or source.rel == DISTILL_STATE:
            restore(ctx, source)
            out.line = f"{source.path}: restored from HEAD (only the distiller writes it)"
        else:
            out.failed = "not a lesson or a memory file; move it out of the memory root"
        return out
    if kind == "entry":
        assert agent is not None
        entry = parse_valid(source.data, ctx.policy, filename=source.rel, folder_agent=agent)
        if source.in_head:  # an edit of a committed entry: the newer lesson (same key)
            entry = entry.replace(created=dt.datetime.now(dt.UTC))
        written = file_entry(ctx, entry, outbox=False)
        restore(ctx, source)
        out.entries, out.notes = [written.path], [written.note] if written.note else []
        out.line, out.whole = f"{source.path}: lesson filed", True
        return out
    text = source.data.decode("utf-8", "replace").replace("\r\n", "\n")
    proposal, what = _read(ctx, source, kind, agent, text)
    done = file(ctx, proposal)
    restore(ctx, source)
    out.entries, out.notes, out.whole = done.paths, done.notes, kind == "native"
    out.line = f"{source.path}: {what}" + ("" if done.paths else " (already in the journal)")
    return out


def _read(ctx: Context, source: CheckoutFile, kind: str, agent: str | None,
          text: str) -> tuple[Proposal, str]:
    """The proposal a file amounts to, and how to say what was done with it."""
    branch = gitcore.current_branch(ctx.repo.worktree_root) or "detached HEAD"
    who = agent or ctx.config.default_agent
    origin = Origin(who, f"{native.CAPTURED}: {source.path} on {branch}"[:480],
                    None, ("all",) if agent is None else ())
    if kind == "native":
        nf = NativeFile(source.rel, os.path.join(ctx.repo.worktree_root, source.path),
                               agent)
        found = native.file_drafts(nf, text, origin, ctx.policy.entry_bytes,
                                     native.known_topics(ctx.layout))
        if isinstance(found, str):
            raise PolicyViolation(f"{source.path}: native memory refused: {found}",
                                  hint="remove it (rotate it if it was real), then write it "
                                       "again")
        now = stamp_now()  # milliseconds, as `write` stamps: a session's first second counts
        drafts = [d._replace(created=d.created or now) for d in found]
        parts = f" in {len(drafts)} parts" if len(drafts) > 1 else ""
        return Proposal(drafts, "capture"), f"native memory filed{parts}"
    journal = read_journal(ctx.layout, ctx.policy)
    if kind == "index":
        drafts = memory_drafts(text, origin, None,
                               index=native.root_resolver(ctx.layout, _filed(ctx, journal)))
        return Proposal(drafts, "capture"), f"{len(drafts)} index line(s) read"
    assert agent is not None
    if kind == "notes":
        old = _head_text(ctx, source)
        added = changed_lines(old, text)[0]
        drafts = [_line_draft(agent, line, origin.source) for line in added]
        return Proposal(drafts, "capture"), f"{len(drafts)} added line(s) filed (topic {INBOX})"
    return _hand_edit(ctx, source, agent, text, journal, branch)


def _hand_edit(ctx: Context, source: CheckoutFile, agent: str, text: str, journal: Journal,
               branch: str) -> tuple[Proposal, str]:
    """The proposal an edit of a distilled file (`MEMORY.md`, a topic file) amounts to, as
    the distiller adopts a hand edit. Its modules (the distiller's) load only here: a
    native memory file, what agents write, never needs them."""
    from journal_mem.distill import adopt
    from journal_mem.distill.handedit import SOURCE, edit_lessons

    # what the distiller wrote at this path, as the checkout had it: the main checkout's
    # recorded or committed version; a worktree's HEAD version ("" when unknown: the edit
    # is then compared with the live facts)
    base = ((adopt.base_of(ctx, source.rel) or "") if ctx.repo.is_main
            else _head_text(ctx, source))
    facts = adopt.shown_facts(ctx, journal)
    here = os.path.join(ctx.repo.worktree_root, ctx.layout.memory_root, agent)
    beside = [os.path.join(ctx.layout.agent_dir(agent), n) for n in _names(here)]
    edit = edit_lessons(agent, source.rel, base, text, facts, stamp_now(),
                        adopt.index_resolver(ctx, journal, agent, beside))
    said = f"{SOURCE}: {source.path} on {branch}"[:480]
    drafts = [d._replace(source=said, where=said) for d in edit.drafts]
    shown, gone = adopt.limits([edit], ctx.layout.memory_root)
    return Proposal(drafts, "hand edit", shown, gone), (
        f"{edit.added} added, {edit.changed} changed, {edit.deleted} deleted")


def _names(folder: str) -> list[str]:
    """The memory files beside a checkout's `MEMORY.md` (an index line may name one)."""
    try:
        return [n for n in os.listdir(folder) if n.endswith(".md") and n != MEMORY_MD]
    except OSError:
        return []


def _filed(ctx: Context, journal: Journal) -> set[str]:
    return native.adopted_paths(ctx.layout, [e.source or "" for _, e in journal.entries])


def _head_text(ctx: Context, source: CheckoutFile) -> str:
    if not source.in_head:
        return ""
    data = gitcore.run(["show", f"HEAD:{source.path}"], ctx.repo.worktree_root,
                       clean=True).stdout
    return data.decode("utf-8", "replace").replace("\r\n", "\n")


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


def _line_draft(agent: str, line: str, source: str) -> Draft:
    title, body = title_and_body(line)
    return Draft(agent=agent, topic=INBOX, title=title, body=body, source=source,
                 where=source)


def restore(ctx: Context, source: CheckoutFile) -> None:
    """Put the checkout's copy back to HEAD and unstage it (a new file is removed)."""
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
