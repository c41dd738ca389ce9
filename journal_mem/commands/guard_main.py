"""The guard's rules for the main checkout.

New journal entries must be valid lessons without secrets, conflict markers
or symlinks; committed entries are append-only; distilled files change only in
the distiller's own commit (its ticket, `ticket.py`, names the exact blobs it
staged, and a merge may take another machine's distill verbatim); nothing else
may be added under the root.
"""

from __future__ import annotations

import os
import shlex

from journal_mem.commands.guard_policy import (
    CONFLICT_RE,
    DISTILLER_ONLY,
    HEX_RE,
    NEW_LESSON,
    WHAT,
    Policy,
    Problem,
    classify,
)
from journal_mem.errors import InvalidEntry
from journal_mem.gitops import staged
from journal_mem.gitops.staged import Change
from journal_mem.gitops.ticket import read_ticket
from journal_mem.model.entry import parse
from journal_mem.model.validate import Policy as Verdicts
from journal_mem.model.validate import parse_valid
from journal_mem.names import is_name
from journal_mem.store.layout import TOPICS


def main_rules(policy: Policy, cwd: str, changes: list[Change]) -> list[Problem]:
    """Apply the main checkout's rules to every staged change."""
    ticket = read_ticket(policy.repo.state_dir)
    ticket.update(merged_verbatim(policy, cwd, changes))  # another machine's distill
    ids = [c.new_blob for c in changes if c.status != "D"]
    ids += [c.old_blob for c in changes if c.status in "MDT"]
    blobs = staged.read_blobs(cwd, ids)
    problems: list[Problem] = []
    for change in changes:
        problems += judge_main(policy, change, ticket, blobs)
    if merge_heads(policy.repo.git_dir):
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


def merged_verbatim(policy: Policy, cwd: str, changes: list[Change]) -> dict[str, str]:
    """{path: staged blob} of distilled files a merge takes verbatim from the other side.

    The ticket only exists on the machine that distilled; a `git pull` of a
    distill commit made elsewhere (CI, another machine) stages its distilled
    files here. Each one that equals a MERGE_HEAD's version byte for byte (or
    is deleted there too) came from that commit, not from a hand edit.
    """
    wanted = [c for c in changes if classify(c.path[len(policy.layout.memory_root) + 1 :])[0]
              == "distilled" and c.status != "U"]
    heads = merge_heads(policy.repo.git_dir) if wanted else []
    allowed: dict[str, str] = {}
    for head in heads:
        theirs = staged.tree_blobs(cwd, head, policy.layout.memory_root)
        for change in wanted:
            have = theirs.get(change.path)
            if (change.status == "D" and have is None) or (
                    change.status != "D" and have == (change.new_mode, change.new_blob)):
                allowed[change.path] = change.staged_blob
    return allowed


def judge_main(policy: Policy, change: Change, ticket: dict[str, str],
               blobs: dict[str, bytes]) -> list[Problem]:
    root = policy.layout.memory_root
    rel = change.path[len(root) + 1 :]
    kind, agent = classify(rel)
    quoted = shlex.quote(change.path)
    if change.status == "U":
        return [Problem(change.path, "unmerged", [f"resolve it, then git add -- {quoted}"])]
    if change.is_symlink:
        return [Problem(change.path, "symlinks are not allowed under the memory root",
                        [f"git rm --cached -q -- {quoted}",
                         NEW_LESSON.format(agent=agent or policy.default_agent,
                                           topic="…")])]
    if kind == "keep":
        return []
    if kind == "entry":
        assert agent is not None
        if change.status != "A" and policy.append_only:
            return [append_only(change, agent, blobs.get(change.old_blob, b""))]
        if change.status == "D":
            return []
        return check_lesson(policy, change, agent, blobs.get(change.new_blob, b""))
    if kind == "distilled":
        if ticket.get(change.path) == change.staged_blob:
            return []
        return [distilled(change, rel, agent)]
    if change.status == "D":
        return []  # removing a stray file is fine; it was never memory
    rule = ("not a journal entry (<agent>/journal/YYYY-MM-DD-….md), a distilled file or a "
            ".gitkeep: nothing else belongs under the memory root")
    return [Problem(change.path, rule, [
        f"git rm --cached -q -- {quoted}   (and move the file out of {root}/)",
        NEW_LESSON.format(agent=agent or policy.default_agent, topic="…")
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


def check_lesson(policy: Policy, change: Change, agent: str, data: bytes) -> list[Problem]:
    """A new lesson: valid entry, no conflict markers, no secrets."""
    quoted = shlex.quote(change.path)
    again = f"git add -- {quoted}"
    problems = []
    if CONFLICT_RE.search(data):
        problems.append(Problem(change.path, "holds unresolved conflict markers (<<<<<<< >>>>>>>)",
                                [f"resolve the conflict in the file, then {again}"]))
    secrets: list[str] = []
    try:
        parse_valid(data, Verdicts(policy.entry_bytes, policy.scan_secrets), filename=change.path,
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
