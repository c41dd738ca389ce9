"""`jmem import`: existing memory into the journal, as ordinary lessons with provenance.

Sources: hand-written memory files (`memory`), CLAUDE.md or AGENTS.md
(`claude-md`), retrospectives (`retro`), a mem0 export (`mem0`) and a jmem
snapshot (`snapshot`). Each run writes its new entries in one commit (the
distill lock held, so no distill commits half of them), and a second run
writes nothing: a lesson already in the journal is skipped. Records that
cannot become a lesson are listed, and the command then exits 1.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
from dataclasses import dataclass, field

from journal_mem.errors import OK, REFUSED, ConfigError, PolicyViolation
from journal_mem.gitops import gitcore, history, memgit
from journal_mem.importers import native
from journal_mem.importers.found import NativeFile, native_files
from journal_mem.importers.markdown import (
    Origin,
    claude_md_drafts,
    memory_drafts,
    retro_date,
    retro_drafts,
)
from journal_mem.importers.mem0 import mem0_drafts
from journal_mem.importers.memfiles import drafts_of, foreign
from journal_mem.importers.snapshot import drafts
from journal_mem.intake.pipeline import Progress, Proposal, file
from journal_mem.journal.drafts import Draft
from journal_mem.journal.lock import DistillLock
from journal_mem.journal.reader import read_journal
from journal_mem.layout import Layout
from journal_mem.names import MEMORY_MD
from journal_mem.repo import Context


@dataclass
class ImportReport:
    """What an import did."""

    source: str
    found: int = 0  # lessons read
    written: list[str] = field(default_factory=list)  # repository-relative paths
    skipped: int = 0  # already in the journal
    invalid: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # files read
    commit: str | None = None
    note: str = ""
    details: list[str] = field(default_factory=list)  # what became of each native file or record
    removed: list[str] = field(default_factory=list)  # native files filed (repo-relative)

    @property
    def exit_code(self) -> int:
        return REFUSED if self.invalid else OK

    def as_dict(self) -> dict[str, object]:
        return {"source": self.source, "found": self.found, "written": self.written,
                "skipped": self.skipped, "invalid": self.invalid, "files": self.files,
                "commit": self.commit, "note": self.note, "details": self.details}

    def lines(self) -> list[str]:
        """The report as text."""
        out = [f"import {self.source}: {self.found} lessons read from {len(self.files)} "
               f"file(s), {len(self.written)} new, {self.skipped} already in the journal"]
        if self.commit:
            out.append(f"committed {self.commit[:12]}")
        out += self.details
        out += [f"invalid: {line}" for line in self.invalid]
        if self.note:
            out.append(f"note: {self.note}")
        return out


def refuse_symlinks(layout: Layout, what: str) -> None:
    """Raise PolicyViolation, naming the fix, when a memory folder is a symlink: a write
    through one would land outside the repository (or in another checkout)."""
    links = layout.symlinked_folders()
    if not links:
        return
    top = layout.repo.main_root
    fixes = []
    for link in links:
        target = os.path.realpath(os.path.join(top, link))
        quoted, there = shlex.quote(link), shlex.quote(target)
        fixes.append(f"rm {quoted} && mkdir {quoted} && cp -R {there}/. {quoted}/"
                     if os.path.isdir(target) else f"rm {quoted} && mkdir {quoted}")
    raise PolicyViolation(f"{what} refused, nothing written: {', '.join(links)} is a symlink "
                          f"(to {', '.join(os.path.realpath(os.path.join(top, x)) for x in links)}"
                          "); memory folders must be real folders inside the repository",
                          hint="make each one a real folder holding what it points at: "
                               + "; ".join(fixes) + " (then commit)")


def file_entries(ctx: Context, report: ImportReport, drafts: list[Draft],
                 commit: bool, progress: Progress | None = None,
                 judged: native.Judged | None = None) -> ImportReport:
    """Write the drafts not yet in the journal and commit them (the lock held); the native
    files `judged` then leave the memory folder in the same commit."""

    layout = ctx.layout
    report.found = len(drafts)
    refuse_symlinks(layout, f"import {report.source}")
    with DistillLock(layout.state_dir):
        done = file(ctx, Proposal(drafts, f"import {report.source}", strict=False),
                    progress=progress)
        report.written = [layout.rel(p) for p in done.paths]
        report.skipped = done.skipped
        report.invalid += done.invalid
        report.details += expiring(drafts, ctx.config.distill.episodic_ttl_days)
        if judged is not None and not done.invalid:
            report.removed, report.details = native.clear(layout, judged)
        if (report.written or report.removed) and commit:
            report.commit, report.note = _commit(ctx, report)
        elif report.written:
            report.note = "not committed (--no-commit): commit the new journal entries"
    return report


def expiring(drafts: list[Draft], ttl_days: int) -> list[str]:
    """What the next distill will expire of an import: episodic memories older than the
    TTL keep their original date, so they are filed but never live (said, never silent)."""
    today = dt.datetime.now(dt.UTC).date()
    old = [d for d in drafts if d.type == "episodic" and d.created is not None
           and (today - d.created.astimezone(dt.UTC).date()).days > ttl_days]
    if not old:
        return []
    shown = "; ".join(d.title for d in old[:3]) + (f"; and {len(old) - 3} more"
                                                   if len(old) > 3 else "")
    return [f"{len(old)} imported episodic memories are older than distill.episodic_ttl_days "
            f"({ttl_days}): kept in the journal with their own dates, the next distill does "
            f"not show them (raise the TTL to keep them live): {shown}"]


def _commit(ctx: Context, report: ImportReport) -> tuple[str | None, str]:

    root = ctx.repo.main_root
    if not gitcore.current_branch(root, ctx.repo.common_dir):
        return None, "the main checkout has a detached HEAD: the new entries are not committed"
    busy = memgit.in_progress(ctx.repo.common_dir)
    if busy:
        return None, f"the main checkout is in the middle of {busy}: entries not committed"
    message = (f"jmem import {report.source}: {len(report.written)} lessons\n\n"
               + "\n".join(f"from {f}" for f in report.files[:50]) + "\n")
    sha = memgit.commit(root, ctx.layout.memory_root, sorted(report.written + report.removed),
                        message, ctx.layout.state_dir, git_dir=ctx.repo.common_dir)
    return sha or None, ""


# --- the sources ---------------------------------------------------------------


def import_memory(ctx: Context, agents: list[str], commit: bool = True,
                  progress: Progress | None = None) -> ImportReport:
    """Hand-written MEMORY.md and topic files of `agents` (all when empty)."""

    unknown = [a for a in agents if a not in ctx.layout.agents_on_disk()]
    if unknown:
        raise ConfigError(f"no memory folder for agent(s) {', '.join(unknown)} under "
                          f"{ctx.layout.memory_root}")
    refuse_symlinks(ctx.layout, "import memory")
    files = foreign(ctx.layout, agents or None)
    natives = [nf for nf in native_files(ctx.layout)
               if not agents or (nf.agent or ctx.config.default_agent) in agents]
    journal = read_journal(ctx.layout, ctx.policy)
    filed = native.adopted_paths(ctx.layout, [e.source or "" for _, e in journal.entries])
    judged = native.judge(ctx.layout, ctx.config.default_agent, ctx.policy, natives, filed)
    report = ImportReport("memory", files=[ctx.layout.rel(f.path) for f in files]
                          + [ctx.layout.rel(nf.path) for nf in natives])
    if not files and not natives:
        report.note = ("no memory files jmem did not write (every MEMORY.md and topic file "
                       "is jmem's, and no agent wrote a memory file of its own)")
        return report
    return file_entries(ctx, report, drafts_of(ctx.layout, files, adopted=filed)
                        + judged.drafts, commit, progress, judged)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc


def _origin_of(ctx: Context, path: str, kind: str) -> tuple[str, dt.datetime | None]:
    """(source text, commit date or None) of a file inside or outside the repository."""

    root = ctx.repo.main_root
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, root).replace(os.sep, "/")
    if rel.startswith("../"):
        return f"{kind}: {os.path.basename(absolute)}", None
    found = history.last_commits(root, [rel]).get(rel)
    if found is None:
        return f"{kind}: {rel} (uncommitted)", None
    return f"{kind}: {rel}@{found[0][:12]}", found[1]


def import_claude_md(ctx: Context, path: str, agent: str, applies_to: list[str],
                     commit: bool = True) -> ImportReport:
    """A CLAUDE.md or AGENTS.md: rules become principles, the rest semantic lessons. A
    file in the shape of a native memory (frontmatter with a `name`: Claude Code's, Qwen
    Code's team memory) is one lesson, adopted whole as `native` reads it, and refused
    whole, with the line, when it holds a secret; other frontmatter (a Cursor rule's) is
    settings, not memory, and is left out. A `MEMORY.md` is read as a memory index: a
    line linking a file beside it is that file's line (import the file), any other line
    a lesson."""

    text = _read(path).decode("utf-8", "replace").replace("\r\n", "\n")
    source, created = _origin_of(ctx, path, "import claude-md")
    origin = Origin(agent, source, created, tuple(applies_to or ["all"]))
    report = ImportReport("claude-md", files=[path])
    fields, body, start = native.frontmatter(text)
    if "name" in fields:
        one = NativeFile(os.path.basename(path), os.path.abspath(path), agent)
        found = native.file_drafts(one, text, origin, ctx.policy.entry_bytes,
                                   native.known_topics(ctx.layout))
        if isinstance(found, str):
            raise PolicyViolation(f"{path}: not imported ({found})")
        return file_entries(ctx, report, found, commit)
    if fields and _only_fields(text, start):  # a Cursor rule's `description`, `globs`…:
        text = "\n" * (start - 1) + body  # settings, not text (blank: line numbers stay)
    if os.path.basename(path) == MEMORY_MD:  # an index of memory files beside it
        folder = os.path.dirname(os.path.abspath(path))
        drafts = memory_drafts(text, origin, None, lambda target: os.path.isfile(
            os.path.join(folder, target.removeprefix("./"))))
        return file_entries(ctx, report, drafts, commit)
    return file_entries(ctx, report, claude_md_drafts(text, origin), commit)


_FIELD_LINE_RE = re.compile(r"^(?:[A-Za-z_][\w.-]*:(?:\s.*)?|\s+\S.*|)$")


def _only_fields(text: str, start: int) -> bool:
    """True when every line between the `---` fences (the body starts on line `start`)
    is a `key: value` field, an indented continuation or blank: a text set between two
    rules that only looks like frontmatter is kept, every line of it."""
    lines = text.split("\n")[1:start - 2]
    return all(_FIELD_LINE_RE.match(line) for line in lines)


def import_retro(ctx: Context, paths: list[str], agent: str, applies_to: list[str],
                 topic: str, commit: bool = True) -> ImportReport:
    """Retrospectives: one reflective lesson per finding or lesson, dated from the file."""
    report = ImportReport("retro", files=list(paths))
    drafts: list[Draft] = []
    for path in paths:
        text = _read(path).decode("utf-8", "replace")
        source, committed = _origin_of(ctx, path, "import retro")
        created = retro_date(os.path.basename(path), text) or committed
        found = retro_drafts(text, Origin(agent, source, created, tuple(applies_to)),
                             topic)
        if not found:
            report.invalid.append(f"{path}: no lesson or finding section found (a heading "
                                  "naming lessons, findings, takeaways, what went wrong…)")
        drafts += found
    return file_entries(ctx, report, drafts, commit)


def import_mem0(ctx: Context, path: str, agent: str, commit: bool = True) -> ImportReport:
    """A mem0 JSON export: one lesson per memory; invalid records listed."""

    source, _ = _origin_of(ctx, path, "import mem0")
    gone: list[str] = []
    drafts, invalid = mem0_drafts(_read(path), source, agent, gone)
    report = ImportReport("mem0", files=[path], invalid=invalid)
    report = file_entries(ctx, report, drafts, commit)
    if gone:
        report.details += [f"skipped: {line}" for line in gone]
    return report


def import_snapshot(ctx: Context, path: str, commit: bool = True) -> ImportReport:
    """A `jmem export` snapshot: one lesson per live fact, same key and fields."""

    source, _ = _origin_of(ctx, path, "import snapshot")
    found, invalid = drafts(_read(path), source)
    report = ImportReport("snapshot", files=[path], invalid=invalid)
    return file_entries(ctx, report, found, commit)
