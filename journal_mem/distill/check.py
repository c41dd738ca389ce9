"""`jmem check [--base REF]`: the CI backstop (catches `--no-verify` and hand edits).

Every journal entry valid; the distilled files equal a rebuild from the
folded entries on the recorded date (so expiry cannot make it flap) with refs
judged against the tree the distill saw; budgets held; no journal entry
modified or deleted since REF; no conflict markers, symlinks or secrets under
the memory root. Returns one line per problem.
"""

from __future__ import annotations

import os
import re

from journal_mem.distill.files import distilled_on_disk
from journal_mem.gitops import gitcore, memgit, staged
from journal_mem.importers.memfiles import foreign, not_imported
from journal_mem.importers.native import adopted_paths
from journal_mem.journal.entry import Entry
from journal_mem.journal.fold import today as fold_date
from journal_mem.journal.foldstate import FoldState, read_state, render_state
from journal_mem.journal.reader import read_journal
from journal_mem.journal.render import over_budget, render
from journal_mem.journal.validate import secret_problems
from journal_mem.layout import DISTILL_STATE, JOURNAL, MEMORY_MD, root_at
from journal_mem.repo import Context
from journal_mem.settings import CONFIG_FILE

_CONFLICT = re.compile(r"^(<{7}|>{7})(?: |$)", re.MULTILINE)


def run_check(ctx: Context, base: str | None, *, allow_root_move: bool = False) -> list[str]:
    """Every problem found, one line each (empty: all good)."""
    problems: list[str] = []
    problems += derived_problems(ctx)
    problems += budget_problems(ctx)
    if base:
        problems += since_base_problems(ctx, base, allow_root_move)
    problems += file_problems(ctx, ctx.config.guard.scan_secrets)
    return problems


def _mem(ctx: Context, rel: str) -> str:
    return f"{ctx.layout.memory_root}/{rel}"


def ref_rev(ctx: Context) -> str:
    """The commit whose tree the last distill judged refs against.

    A distill commits only memory paths on top of HEAD, so the last commit
    that wrote the state file has that tree; an uncommitted state means HEAD.
    """
    root, path = ctx.repo.main_root, ctx.layout.rel(ctx.layout.distill_state)
    dirty = memgit.status(root, path)
    sha = None if dirty else memgit.last_commit_of(root, path)
    return sha or "HEAD"


def derived_problems(ctx: Context) -> list[str]:
    """Invalid entries, and distilled files that differ from a rebuild."""
    layout, config = ctx.layout, ctx.config
    journal = read_journal(layout, ctx.policy, use_cache=False)
    problems = [f"{_mem(ctx, p)}: invalid entry: {why}"
                for p, whys in journal.invalid.items() for why in whys]
    state = read_state(layout.distill_state)
    waiting, problems_foreign = hand_written(ctx, journal.entries)
    problems += problems_foreign
    on_disk = distilled_on_disk(layout) - waiting
    if state is None:
        if on_disk:
            problems.append(f"{_mem(ctx, DISTILL_STATE)}: missing or unreadable, but distilled "
                            "files exist: run `jmem distill`")
        return problems
    valid = dict(journal.entries)
    for rel in state.folded:
        if rel not in valid:
            problems.append(f"{_mem(ctx, rel)}: folded by the last distill but now missing or "
                            "invalid (journal entries are append-only)")
    entries = [(rel, valid[rel]) for rel in state.folded if rel in valid]
    agents = set(config.agents) | {rel.split("/", 1)[0] for rel, _ in entries}
    agents |= {a for a in layout.agents_on_disk() if os.path.isfile(layout.memory_md(a))}
    # the agents the committed files name, not the folders of this clone
    # citations as they were judged; refs against the tree the distill saw
    result = ctx.fold(entries, state.date, rev=state.judged or ref_rev(ctx),
                      agents=sorted(agents))
    expected = render(result, sorted(agents), config.budget).files
    expected[DISTILL_STATE] = render_state(FoldState(state.date, state.folded, state.judged))
    problems += _compare(ctx, expected, on_disk | {DISTILL_STATE})
    return problems


def cited_report(ctx: Context) -> list[dict[str, str]]:
    """Every fact whose cited code changed or whose cited files are gone, at HEAD, with
    the commit (`check --refs`): {key, ref, state: changed|deleted|dropped, commit,
    subject}, by key."""
    journal = read_journal(ctx.layout, ctx.policy)
    result = ctx.fold(journal.entries, fold_date())
    out: list[dict[str, str]] = []
    for key in sorted(result.code):
        for change in result.code[key]:
            state = "changed" if not change.gone else (
                "deleted" if key in result.facts else "dropped")
            out.append({"key": key, "ref": change.ref, "state": state,
                        "commit": change.commit, "subject": change.subject})
    for key, why in sorted(result.removed.items()):
        if why.startswith("refs gone") and key not in result.code:
            out.append({"key": key, "ref": why.removeprefix("refs gone: "), "state": "dropped",
                        "commit": "", "subject": ""})
    return out


def hand_written(ctx: Context, entries: list[tuple[str, Entry]]) -> tuple[set[str], list[str]]:
    """Memory files jmem did not write: (all of them, a problem for each whose facts are not
    in the journal yet). An imported one only waits for the distill that replaces it."""

    found = foreign(ctx.layout)
    if not found:
        return set(), []
    filed = adopted_paths(ctx.layout, [e.source or "" for _, e in entries])
    lacking = not_imported(ctx.layout, found, entries, ctx.policy, filed)
    return {f.rel for f in found}, [
        f"{_mem(ctx, rel)}: hand-written memory not in the journal yet: run `jmem import "
        "memory` (a distill imports it too)" for rel in lacking]


def _compare(ctx: Context, expected: dict[str, bytes], present: set[str]) -> list[str]:
    problems = []
    for rel in sorted(set(expected) | present):
        path = os.path.join(ctx.layout.main_memory, rel)
        try:
            with open(path, "rb") as fh:  # a CRLF checkout holds the same file
                data: bytes | None = fh.read().replace(b"\r\n", b"\n")
        except OSError:
            data = None
        if rel not in expected:
            problems.append(f"{_mem(ctx, rel)}: not produced by a rebuild (hand-made?)")
        elif data is None:
            problems.append(f"{_mem(ctx, rel)}: missing; a rebuild produces it")
        elif data != expected[rel]:
            problems.append(f"{_mem(ctx, rel)}: differs from a rebuild (hand edit, or "
                            "`jmem distill --rebuild` needed)")
    return problems


def budget_problems(ctx: Context) -> list[str]:
    """MEMORY.md over any budget, or a topic file over its line budget."""
    budget = ctx.config.budget
    problems = []
    for rel in sorted(distilled_on_disk(ctx.layout)):
        with open(os.path.join(ctx.layout.main_memory, rel), encoding="utf-8",
                  errors="replace") as fh:
            text = fh.read()
        if rel.endswith("/" + MEMORY_MD):
            problems += [f"{_mem(ctx, rel)}: over budget: {p}" for p in over_budget(text, budget)]
        elif text.count("\n") > budget.topic_lines:
            problems.append(f"{_mem(ctx, rel)}: over budget: {text.count(chr(10))} lines, "
                            f"budget {budget.topic_lines}")
    return problems


def since_base_problems(ctx: Context, base: str, allow_root_move: bool) -> list[str]:
    """A memory root moved since BASE (refused unless allowed), and journal entries
    modified or deleted since BASE under BASE's root and the current one.

    BASE's root is the trusted one: a branch that moves the root would
    otherwise choose which of its own edits are looked at.
    """
    root = ctx.layout.memory_root
    base_root = root_at(ctx.repo.main_root, base, clean=True) or root
    problems = []
    if base_root != root and not allow_root_move:
        problems.append(f"{CONFIG_FILE}: memory_root moved from {base_root}/ to {root}/ since "
                        f"{base} (a deliberate move: check with --allow-root-move)")
    for where in dict.fromkeys([base_root, root]):
        problems += append_only_problems(ctx, base, where)
    return problems


def append_only_problems(ctx: Context, base: str, root: str) -> list[str]:
    """Journal entries under `root` modified or deleted by any commit in BASE..HEAD.

    `-m` diffs a merge against each parent: an entry edited while resolving a
    merge (which plain `git log` shows no diff for, and a BASE..HEAD tree diff
    shows as added when the entry came from the merged branch) is caught.
    Reverts and cherry-picks, which run no pre-commit hook, are ordinary
    commits here.
    """
    res = gitcore.run(
        ["log", "-m", "--no-renames", "--name-status", "-z", "--format=", f"{base}..HEAD",
         "--", staged.pathspec(root)],
        ctx.repo.main_root, clean=True,
    )
    fields = [f.decode("utf-8", "surrogateescape") for f in res.stdout.split(b"\0")]
    problems = set()
    fields = [f.strip("\n") for f in fields]
    for status, path in zip(fields[::2], fields[1::2], strict=False):
        parts = path.split("/")
        if status[:1] in ("M", "D", "T") and len(parts) >= 3 and parts[-2] == JOURNAL:
            what = "deleted" if status.startswith("D") else "modified"
            problems.add(f"{path}: journal entry {what} since {base} (append-only)")
    return sorted(problems)


def file_problems(ctx: Context, secrets: bool = True) -> list[str]:
    """Symlinks, conflict markers and (`secrets`: the `guard.scan_secrets` policy every
    command shares) secrets anywhere under the memory root."""
    top = ctx.layout.main_memory
    link = ctx.layout.symlink_on_way(top)
    if link is not None:
        return [f"{link}: a symlink on the way to the memory root (memory would be read and "
                "written outside the repository)"]
    problems = []
    for folder, dirs, files in os.walk(top):
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            rel = ctx.layout.rel(path)
            if os.path.islink(path):
                problems.append(f"{rel}: a symlink under the memory root")
            elif name in files:
                problems += [f"{rel}: {p}" for p in _text_problems(path, secrets)]
    return problems


def _text_problems(path: str, secrets: bool) -> list[str]:
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
    except OSError as exc:
        return [f"unreadable: {exc.strerror}"]
    problems = ["unresolved conflict markers"] if _CONFLICT.search(text) else []
    return problems + (secret_problems(text) if secrets else [])
