"""The guard's rules for staged memory changes (the slow path of `jmem guard`).

Linked worktree: a staged memory path is refused unless it only makes the
worktree equal to the main checkout's committed memory (that is what merging
or checking out the main branch does; anything else is an edit made here).

Main checkout: new journal entries must be valid lessons without secrets,
conflict markers or symlinks; committed entries are append-only; distilled
files change only in the distiller's own commit (which runs no hooks), or
when a merge takes another machine's distill verbatim; nothing else may be
added under the root.

Read without pydantic: the guard runs inside `git commit`.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

from journal_mem import settings
from journal_mem.errors import OK, REFUSED, InvalidEntry
from journal_mem.gitops import gitcore, staged
from journal_mem.gitops.staged import Change
from journal_mem.journal.entry import parse
from journal_mem.journal.files import is_entry_name
from journal_mem.journal.secrets import scan
from journal_mem.journal.validate import parse_valid
from journal_mem.layout import (
    DISTILL_STATE,
    JOURNAL,
    KEEP,
    MEMORY_MD,
    TOPICS,
    is_native,
    root_at,
)
from journal_mem.names import is_name
from journal_mem.repo import Context, light_context

HEX_RE = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
CONFLICT_RE = re.compile(rb"^(?:<{7}|>{7})(?: |$)", re.MULTILINE)
WHAT = {"A": "added", "M": "modified", "D": "deleted", "T": "type changed", "U": "unmerged"}
RESCUE = "jmem rescue   (files lessons and edits in the main checkout's journal, unstages them)"
DISTILLER_ONLY = "only the distiller's own commit may change it"
ROOT_MOVE_ENV = "JMEM_ALLOW_ROOT_MOVE"
CONFIG_FILE = settings.CONFIG_FILE
NEW_LESSON = 'jmem write --agent {agent} --topic {topic} --title "…"'


@dataclass
class Problem:
    """One refused change: where, which rule, details, and what to run instead."""

    path: str
    rule: str
    fix: list[str]
    details: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"  {self.path}", f"    rule: {self.rule}"]
        out += [f"          - {d}" for d in self.details]
        out += [f"    {'do:' if i == 0 else '    '}   {f}" for i, f in enumerate(self.fix)]
        return out


def classify(rel: str) -> tuple[str, str | None]:
    """Kind of a path relative to the memory root, and the agent folder it is in."""
    parts = rel.split("/")
    if parts[-1] == KEEP:
        return "keep", None
    agent = parts[0] if len(parts) > 1 and is_name(parts[0]) else None
    if agent and len(parts) == 3 and parts[1] == JOURNAL and is_entry_name(parts[2]):
        return "entry", agent
    if agent and (parts[1:] == [MEMORY_MD] or (len(parts) >= 3 and parts[1] == TOPICS)):
        return "distilled", agent
    if parts == [DISTILL_STATE]:
        return "distilled", None
    return "unknown", agent


def main_rules(ctx: Context, cwd: str, changes: list[Change]) -> list[Problem]:
    """Apply the main checkout's rules to every staged change."""
    verbatim = merged_verbatim(ctx, cwd, changes)  # another machine's distill
    ids = [c.new_blob for c in changes if c.status != "D"]
    ids += [c.old_blob for c in changes if c.status in "MDT"]
    blobs = staged.read_blobs(cwd, ids)
    problems: list[Problem] = []
    for change in changes:
        problems += judge_main(ctx, change, verbatim, blobs)
    if merge_heads(ctx.repo.git_dir):
        for problem in problems:
            if problem.rule.endswith(DISTILLER_ONLY):
                problem.fix.insert(0, f"git checkout MERGE_HEAD -- {shlex.quote(problem.path)}"
                                   "   (take the other side's file; then `jmem distill`)")
    return problems


# --- merges that bring in another machine's distill ------------------------------


def merge_heads(git_dir: str) -> list[str]:
    """The commits being merged into the checkout whose git dir is `git_dir` (none: no merge).

    `git merge`/`git pull` run pre-merge-commit before they write MERGE_HEAD;
    they name each merged commit in a `GITHEAD_<id>` variable instead (git
    2.39). `git commit` concluding a merge finds MERGE_HEAD.
    """
    heads = [name[8:] for name in os.environ if name.startswith("GITHEAD_")
             and HEX_RE.fullmatch(name[8:])]
    try:
        with open(os.path.join(git_dir, "MERGE_HEAD"), encoding="ascii") as fh:
            heads += [line.strip() for line in fh if line.strip()]
    except (OSError, UnicodeDecodeError):
        pass
    return heads


def merged_verbatim(ctx: Context, cwd: str, changes: list[Change]) -> dict[str, str]:
    """{path: staged blob} of distilled files a merge takes verbatim from the other side.

    The distiller's own commits run no hooks; a `git pull` of a
    distill commit made elsewhere (CI, another machine) stages its distilled
    files here. Each one that equals a MERGE_HEAD's version byte for byte (or
    is deleted there too) came from that commit, not from a hand edit.
    """
    wanted = [c for c in changes if classify(c.path[len(ctx.layout.memory_root) + 1 :])[0]
              == "distilled" and c.status != "U"]
    heads = merge_heads(ctx.repo.git_dir) if wanted else []
    allowed: dict[str, str] = {}
    for head in heads:
        theirs = staged.tree_blobs(cwd, head, ctx.layout.memory_root)
        for change in wanted:
            have = theirs.get(change.path)
            if (change.status == "D" and have is None) or (
                    change.status != "D" and have == (change.new_mode, change.new_blob)):
                allowed[change.path] = change.staged_blob
    return allowed


def judge_main(ctx: Context, change: Change, verbatim: dict[str, str],
               blobs: dict[str, bytes]) -> list[Problem]:
    root = ctx.layout.memory_root
    rel = change.path[len(root) + 1 :]
    kind, agent = classify(rel)
    quoted = shlex.quote(change.path)
    if change.status == "U":
        return [Problem(change.path, "unmerged", [f"resolve it, then git add -- {quoted}"])]
    if change.is_symlink:
        return [Problem(change.path, "symlinks are not allowed under the memory root",
                        [f"git rm --cached -q -- {quoted}",
                         NEW_LESSON.format(agent=agent or ctx.default_agent,
                                           topic="…")])]
    if kind == "keep":
        return []
    if kind == "entry":
        assert agent is not None
        if change.status != "A" and ctx.settings.switch("guard.append_only"):
            return [append_only(change, agent, blobs.get(change.old_blob, b""))]
        if change.status == "D":
            return []
        return check_lesson(ctx, change, agent, blobs.get(change.new_blob, b""))
    if kind == "distilled":
        if verbatim.get(change.path) == change.staged_blob:
            return []
        return [distilled(change, rel, agent)]
    if change.status == "D":
        return []  # removing a stray file is fine; it was never memory
    if is_native(rel):
        return native_file(ctx, change, blobs.get(change.new_blob, b""))
    rule = ("not a journal entry (<agent>/journal/YYYY-MM-DD-….md), a distilled file or a "
            ".gitkeep: nothing else belongs under the memory root")
    return [Problem(change.path, rule, [
        f"git rm --cached -q -- {quoted}   (and move the file out of {root}/)",
        NEW_LESSON.format(agent=agent or ctx.default_agent, topic="…")
        + "   (if it is a lesson)",
    ])]


def append_only(change: Change, agent: str, old: bytes) -> Problem:
    """A committed entry was modified or deleted: say how to correct or retract it."""
    topic, key = "…", "KEY"
    try:
        entry = parse(old, filename=change.path, folder_agent=agent)
        topic, key = entry.topic, entry.key
    except InvalidEntry:
        pass
    quoted = shlex.quote(change.path)
    restore = f"git restore --staged --worktree -- {quoted}   (put the committed entry back)"
    lesson = NEW_LESSON.format(agent=agent, topic=topic)
    if change.status == "D":
        fix = [restore, f"{lesson} --retracts {key}   (to delete the fact everywhere)"]
    else:
        fix = [f"{lesson} --supersedes {key}   (the corrected lesson replaces it everywhere)",
               restore]
    rule = (f"{WHAT.get(change.status, 'changed')}: journal entries are append-only "
            "(guard.append_only); a committed entry is never edited or deleted")
    return Problem(change.path, rule, fix)


def distilled(change: Change, rel: str, agent: str | None) -> Problem:
    """A hand edit of a file only the distiller writes."""
    quoted = shlex.quote(change.path)
    parts = rel.split("/")
    topic = parts[2].removesuffix(".md") if len(parts) == 3 and parts[1] == TOPICS else "…"
    fix = [f"git restore --staged --worktree -- {quoted}"]
    if agent is None:
        fix.append("jmem distill   (the only writer of this file)")
    else:
        fix.append(NEW_LESSON.format(agent=agent, topic=topic if is_name(topic) else "…")
                   + "   (the distiller folds it in)")
    rule = (f"{WHAT.get(change.status, 'changed')}: {parts[-1]} is generated by the distiller "
            f"from the journal; {DISTILLER_ONLY}")
    return Problem(change.path, rule, fix)


def native_file(ctx: Context, change: Change, data: bytes) -> list[Problem]:
    """A memory file the client wrote itself (Claude Code's `memory: project`): it is
    memory, committed as it is; the next distill files it in the journal and takes it
    out of the memory folder. Only a secret in it is refused."""
    if not ctx.policy.scan_secrets:
        return []
    found = scan(data.decode("utf-8", "replace"))
    if not found:
        return []
    quoted = shlex.quote(change.path)
    return [Problem(change.path,
                    "holds what looks like a secret (guard.scan_secrets): memory is read by "
                    "every agent and pushed to every clone",
                    [f"remove it from the file (rotate it if it was real), then git add -- "
                     f"{quoted}"], [f.describe() for f in found])]


def check_lesson(ctx: Context, change: Change, agent: str, data: bytes) -> list[Problem]:
    """A new lesson: valid entry, no conflict markers, no secrets."""
    quoted = shlex.quote(change.path)
    again = f"git add -- {quoted}"
    problems = []
    if CONFLICT_RE.search(data):
        problems.append(Problem(change.path, "holds unresolved conflict markers (<<<<<<< >>>>>>>)",
                                [f"resolve the conflict in the file, then {again}"]))
    secrets: list[str] = []
    try:
        parse_valid(data, ctx.policy, filename=change.path,
                    folder_agent=agent)
    except InvalidEntry as exc:
        secrets = [p.removeprefix("secret: ") for p in exc.problems if p.startswith("secret: ")]
        details = [p for p in exc.problems
                   if "conflict markers" not in p and not p.startswith("secret: ")]
        if details:
            problems.append(Problem(
                change.path, "a new lesson must be a valid journal entry",
                [f"fix the fields above, then {again}",
                 f"or: git rm --cached -q -- {quoted} && "
                 + NEW_LESSON.format(agent=agent, topic="…")],
                details))
    if secrets:
        problems.append(Problem(
            change.path,
            "holds what looks like a secret (guard.scan_secrets): memory is read by every "
            "agent and pushed to every clone",
            [f"remove it from the file (rotate it if it was real), then {again}"],
            secrets))
    return problems


def judge(cwd: str, hook: str) -> tuple[int, list[str]]:
    """Judge the staged changes under the memory root; exit 1 with every problem.

    The root is HEAD's (the committed config), not the one the commit stages:
    a commit that moves it is refused unless JMEM_ALLOW_ROOT_MOVE=1, and then
    both roots are judged.
    """
    ctx = light_context(cwd)  # the Config model would add ~150 ms inside `git commit`
    staged_root = root_at(cwd, "") or ctx.layout.memory_root
    head_root = root_at(cwd, "HEAD") if gitcore.has_head(cwd) else None
    head_root = head_root or staged_root  # no config committed yet: nothing moves
    rules = []
    if head_root != staged_root and not settings.env_flag(ROOT_MOVE_ENV):
        rules.append(root_moved(head_root, staged_root))
    for root in dict.fromkeys([head_root, staged_root]):
        rules += judge_root(ctx.at_root(root), cwd)
    if not rules:
        return OK, []
    return REFUSED, render(hook, head_root, rules)


def judge_root(ctx: Context, cwd: str) -> list[Problem]:
    """Every problem of the staged changes under `ctx`'s memory root and above it."""
    root = ctx.layout.memory_root
    ancestors = ctx.layout.ancestors()
    # one call covers the root and the folders above it (`.claude`)
    every = staged.changes(cwd, ancestors[0] if ancestors else root)
    changes = [c for c in every if c.path == root or c.path.startswith(root + "/")]
    rules = [above_root(c) for c in every if c.path in ancestors and c.status != "D"]
    if changes:
        rules += (main_rules(ctx, cwd, changes) if ctx.repo.is_main
                  else worktree_rules(ctx, changes))
    return rules


def root_moved(old: str, new: str) -> Problem:
    """The commit changes `memory_root`: what it does under either root is judged by neither."""
    rule = (f"moves memory_root from {old}/ to {new}/: a commit is judged by the memory root "
            "already committed, so moving it needs a separate, deliberate commit")
    return Problem(CONFIG_FILE, rule, [
        f"git restore --staged -- {CONFIG_FILE}   (keep the committed memory_root)",
        f"{ROOT_MOVE_ENV}=1 git commit …   (a deliberate move: commit the config and "
        "`git mv` of the folder only)",
    ])


def above_root(change: Change) -> Problem:
    """A file or symlink staged where a folder above the memory root must be."""
    quoted = shlex.quote(change.path)
    what = "a symlink" if change.is_symlink else "a file"
    rule = (f"{what} where a folder above the memory root must be: memory would be read and "
            "written wherever it points, outside the repository")
    return Problem(change.path, rule, [f"git rm --cached -q -- {quoted}   (and make it a real "
                                       "folder)"])


def render(hook: str, root: str, problems: list[Problem]) -> list[str]:
    what = "merge" if hook == "pre-merge-commit" else "commit"
    count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
    out = [f"jmem guard: {what} refused by the {hook} hook: {count} under {root}/"]
    for problem in problems:
        out += problem.lines()
    if what == "merge":
        out.append("jmem guard: the merge is still in progress: fix the above and run "
                   "`git commit`, or `git merge --abort`")
    else:
        out.append("jmem guard: nothing was committed; fix the above and commit again")
    return out


# --- linked worktree ----------------------------------------------------------


def worktree_rules(ctx: Context, changes: list[Change]) -> list[Problem]:
    """Refuse every staged memory change that differs from the main checkout's HEAD."""
    main = ctx.repo.main_root
    root = ctx.layout.memory_root
    theirs = staged.tree_blobs(main, "HEAD", root) if gitcore.has_head(main) else {}
    problems = []
    for change in changes:
        have = theirs.get(change.path)
        if change.status == "D" and have is None:
            continue
        if change.status != "D" and have == (change.new_mode, change.new_blob):
            continue
        rule = (f"{WHAT.get(change.status, 'changed')} in a linked worktree: memory is written "
                "only into the main checkout's journal, never committed from a worktree")
        problems.append(Problem(change.path, rule, [RESCUE]))
    return problems
