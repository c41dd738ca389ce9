"""Memory a team keeps where journal-mem does not manage it: found, and named with the one
command that imports it, so nothing is silently ignored.

Claude Code's auto memory committed in a repository (`.claude/memory/`,
`.claude/projects/*/memory/`), an agent-memory folder below a subfolder, the
instruction files every client reads (`CLAUDE.md`, `AGENTS.md` outside
journal-mem's block, `GEMINI.md`), Cursor rules (`.cursor/rules/*.mdc`), Cline's
`.clinerules` and memory bank (`memory-bank/`), Qwen Code's team memory
(`.qwen/team-memory/`, one file per memory as Claude Code writes them), `QWEN.md` and
other `.qwen/` notes, mem0 exports, and a folder under the memory root whose name is no agent name
(an upper-case `API/` is read by no command, and would share a folder with `api/` on
a case-insensitive file system). Files are those git tracks or would track (`git
ls-files`, ignored ones left out); one a journal entry was already imported from is
not named again.
`jmem init`, `jmem status` and `jmem check` say what they found.
"""

from __future__ import annotations

import fnmatch
import os
import re

from journal_mem.gitops import gitcore
from journal_mem.journal.reader import read_journal
from journal_mem.names import MEMORY_MD, is_name, not_a_name, slugify
from journal_mem.repo import Context
from journal_mem.setup.clients import AGENTS_MD, BEGIN, END

SHOWN = 3  # paths named per kind; the rest are counted
# (what it is, patterns, the command that imports one file)
PLACES = (
    ("Claude Code auto memory", (".claude/memory/*.md", ".claude/memory/**/*.md",
                                 ".claude/projects/*/memory/*.md",
                                 ".claude/projects/*/memory/**/*.md",
                                 ".claude/projects/memory/*.md",
                                 ".claude/projects/memory/**/*.md"),
     "jmem import claude-md {path} --agent AGENT"),
    ("agent memory below a subfolder (or set memory_root to its folder)",
     ("*/.claude/agent-memory/*", "**/.claude/agent-memory/*"),
     "jmem import claude-md {path} --agent AGENT"),
    ("Qwen Code team memory", (".qwen/team-memory/*.md", ".qwen/team-memory/**/*.md"),
     "jmem import claude-md {path} --agent AGENT"),
    ("instructions an agent reads", ("CLAUDE.md", "**/CLAUDE.md", "GEMINI.md", "**/GEMINI.md",
                                     "QWEN.md", "**/QWEN.md", AGENTS_MD, f"**/{AGENTS_MD}",
                                     ".clinerules", ".clinerules/*"),
     "jmem import claude-md {path}"),
    ("Cursor rules", (".cursor/rules/*.mdc", ".cursor/rules/**/*.mdc"),
     "jmem import claude-md {path}"),
    ("a memory bank", ("memory-bank/*.md", "**/memory-bank/*.md", ".qwen/*.md",
                       ".qwen/**/*.md"),
     "jmem import claude-md {path}"),
    ("a mem0 export", ("*mem0*.json", "**/*mem0*.json"), "jmem import mem0 {path} --agent AGENT"),
)


def _files(root: str) -> list[str]:
    res = gitcore.run(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root,
                      clean=True, check=False)
    return sorted({p for p in res.stdout.decode("utf-8", "replace").split("\0") if p})


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


def _only_our_block(root: str, path: str) -> bool:
    """An `AGENTS.md` holding nothing but journal-mem's own block."""
    try:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return False
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return False
    rest = text[:start] + text[end + len(END):]
    return all(line.startswith("#") for line in rest.split("\n") if line.strip())


_LINE_LINK_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\**\[[^\]]*\]\((?:\./)?([^)\s]+\.md)\)")


def _only_links(root: str, path: str) -> bool:
    """A `MEMORY.md` that is only an index of the memory files beside it (Claude Code's,
    Qwen Code's): every line a heading, blank, or a link to a file that is there — the
    files are named, the index holds nothing of its own."""
    folder = os.path.dirname(os.path.join(root, path))
    try:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            lines = [line for line in fh.read().split("\n") if line.strip()]
    except OSError:
        return False
    for line in lines:
        if line.startswith("#"):
            continue
        match = _LINE_LINK_RE.match(line)
        if match is None or not os.path.isfile(os.path.join(folder, match.group(1))):
            return False
    return bool(lines)


def elsewhere(root: str, memory_root: str, imported: set[str]) -> list[tuple[str, list[str],
                                                                             str]]:
    """(what, paths, command) for every kind of memory found outside the memory root that
    no journal entry was imported from (`imported`: repository-relative paths)."""
    found: list[tuple[str, list[str], str]] = []
    files = _files(root)
    taken = {p for p in files if p.startswith(memory_root + "/") or p in imported}
    for what, patterns, command in PLACES:
        paths = [p for p in files if p not in taken and _matches(p, patterns)
                 and not (os.path.basename(p) == AGENTS_MD and _only_our_block(root, p))
                 and not (os.path.basename(p) == MEMORY_MD and _only_links(root, p))]
        if paths:
            found.append((what, paths, command))
            taken.update(paths)
    return _misnamed(files, memory_root) + found


def _misnamed(files: list[str], memory_root: str) -> list[tuple[str, list[str], str]]:
    """Memory under the memory root in a folder no agent can have: `git mv` names it."""
    folders: dict[str, list[str]] = {}
    for path in files:
        rest = path[len(memory_root) + 1:] if path.startswith(memory_root + "/") else ""
        folder, _, inner = rest.partition("/")
        if inner and not is_name(folder):
            folders.setdefault(folder, []).append(path)
    return [(f"a folder that is not an agent's, {not_a_name(folder)}", paths,
             f"git mv {memory_root}/{folder} {memory_root}/{slugify(folder) or 'AGENT'}")
            for folder, paths in sorted(folders.items())]


_IMPORTED_RE = re.compile(r"import [\w-]+: (\S+?)(?:@[0-9a-f]+| \(uncommitted\))")


def imported_from(sources: list[str]) -> set[str]:
    """Repository-relative paths journal entries were imported from (their `source`)."""
    return {m.group(1) for s in sources if (m := _IMPORTED_RE.match(s))}


def lines(found: list[tuple[str, list[str], str]]) -> list[str]:
    """One note per kind: what and where, and the command that imports it."""
    out = []
    for what, paths, command in found:
        shown = ", ".join(paths[:SHOWN]) + (f" and {len(paths) - SHOWN} more"
                                            if len(paths) > SHOWN else "")
        how = "rename it with" if command.startswith("git mv") else "import each with"
        out.append(f"memory jmem does not manage yet, {what}: {shown}; {how} "
                   f"`{command.format(path=paths[0] if len(paths) == 1 else 'PATH')}`")
    return out


def found_in(ctx: Context) -> list[tuple[str, list[str], str]]:
    """`elsewhere` for this repository, leaving out what its journal was imported from."""
    journal = read_journal(ctx.layout, ctx.policy)
    done = imported_from([e.source or "" for _, e in journal.entries])
    return elsewhere(ctx.repo.main_root, ctx.layout.memory_root, done)
