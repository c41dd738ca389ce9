"""Cause by git history (docs/DESIGN.md, "Order by cause", rule 13): an entry whose
commit descends from the commit that brought in another entry knew it, whoever wrote
it and whatever the clocks say.

One `git log` per fold reads every commit that touched a journal, with its parents
rewritten to the nearest such commit (`--full-history --parents`: ancestry among
them is kept, merges included) and the journal files each one added. An entry
added in a commit that is a proper ancestor of another entry's commit comes before
it (`journal.order.history_edges` turns that into edges for the fold).
"""

from __future__ import annotations

from journal_mem.gitops import gitcore, logcache


class History:
    """Which commit added each journal entry, and the journal commits' ancestry."""

    __slots__ = ("_gen", "_memo", "_parents", "added")

    def __init__(self, added: dict[str, str], parents: dict[str, tuple[str, ...]]) -> None:
        self.added = added  # memory-root-relative entry path -> commit that added it
        self._parents = parents
        self._gen: dict[str, int] = {}
        self._memo: dict[tuple[str, str], bool] = {}  # (later, earlier) -> descends
        for commit in reversed(list(parents)):  # log order is newest first: parents last
            self._generation(commit)

    def _generation(self, commit: str) -> int:
        """1 + the longest chain of journal commits below `commit` (iterative: deep
        histories would overflow the stack)."""
        stack = [commit]
        while stack:
            top = stack[-1]
            if top in self._gen:
                stack.pop()
                continue
            missing = [p for p in self._parents.get(top, ()) if p not in self._gen]
            if missing:
                stack.extend(missing)
                continue
            self._gen[top] = 1 + max((self._gen[p] for p in self._parents.get(top, ())),
                                     default=0)
            stack.pop()
        return self._gen[commit]

    def generation(self, commit: str) -> int:
        """How deep `commit` is among the journal commits (an ancestor is shallower)."""
        return self._gen.get(commit, 0)

    def descends(self, later: str, earlier: str) -> bool:
        """Whether commit `earlier` is a proper ancestor of commit `later`."""
        if later == earlier or later not in self._gen or earlier not in self._gen:
            return False
        known = self._memo.get((later, earlier))
        if known is None:
            known = self._memo[(later, earlier)] = self._descends(later, earlier)
        return known

    def _descends(self, later: str, earlier: str) -> bool:
        floor = self._gen[earlier]
        if self._gen[later] <= floor:
            return False
        seen = {later}
        stack = [later]
        while stack:
            for parent in self._parents.get(stack.pop(), ()):
                if parent == earlier:
                    return True
                if parent not in seen and self._gen.get(parent, 0) > floor:
                    seen.add(parent)
                    stack.append(parent)
        return False


def added_since(root: str, common_dir: str, memory_root: str, commit: str
                ) -> frozenset[str] | None:
    """The journal entries (memory-root-relative paths) the main checkout's HEAD holds and
    `commit` does not, or None when history since may order the entries otherwise:
    `commit` is not HEAD or an ancestor of it, or an entry was added since and a merge
    came in (its side's commits need not descend from `commit`). Past that, every
    commit since descends from `commit`: an entry one added comes after every entry
    committed by then (`replay.resume` checks the rest). An entry `commit` holds keeps
    the commit that first added it, whatever happened to it since."""
    if gitcore.head_from_files(common_dir) == commit:
        return frozenset()
    prefix = memory_root.strip("/")
    # the entries in HEAD's tree and not in `commit`'s: two trees compared, where a log
    # of the commits between (each one's diff) took ~6 ms for 100 code commits
    ancestor, diff = gitcore.run_all([
        ["merge-base", "--is-ancestor", commit, "HEAD"],
        ["diff", "--no-renames", "--diff-filter=A", "--name-only", "-z", commit, "HEAD",
         "--", _journals(prefix)]], root, clean=True)
    if not (ancestor.ok and diff.ok):
        return None
    cut = len(prefix) + 1 if prefix else 0
    added = frozenset(name[cut:] for name in
                      diff.stdout.decode("utf-8", "surrogateescape").split("\0") if name)
    if not added:
        return added
    merge = gitcore.run(["rev-list", "--min-parents=2", "-n", "1", f"{commit}..HEAD", "--"],
                        root, clean=True, check=False)
    return added if merge.ok and not merge.stdout.strip() else None


def _journals(prefix: str) -> str:
    """The pathspec of every agent's journal under the memory root `prefix`."""
    return f":(top,glob){prefix}/*/journal/**" if prefix else ":(top,glob)*/journal/**"


def read(root: str, rev: str, memory_root: str, state_dir: str | None = None) -> History:
    """The history of `rev` for the journals under `memory_root` (empty when unborn);
    with `state_dir`, the log is read whole once and then only since (`logcache`)."""
    prefix = memory_root.strip("/")
    found = logcache.cached(root, rev, state_dir, "lineage", prefix,
                            lambda tip: _answer(_log(root, [tip], prefix)),
                            lambda old, base, tip: _since(root, old, base, tip, prefix))
    return History(*found) if found is not None else History({}, {})


_Answer = tuple[dict[str, str], dict[str, tuple[str, ...]]]  # (added, parents)
_Log = tuple[dict[str, str], dict[str, tuple[str, ...]], bool]  # and: a path added twice


def _answer(log: _Log | None) -> _Answer | None:
    return (log[0], log[1]) if log is not None else None


def _log(root: str, revs: list[str], prefix: str) -> _Log | None:
    """Every journal commit (and merge) of `revs`, parents rewritten among them, and the
    journal files each added; None when git fails."""
    res = gitcore.run(["log", "--full-history", "--parents", "--no-renames", "--name-status",
                       "-z", "--format=%x01%H %P", *revs, "--", _journals(prefix)], root,
                      clean=True, check=False)
    if not res.ok:
        return None
    added: dict[str, str] = {}
    parents: dict[str, tuple[str, ...]] = {}
    twice = False
    cut = len(prefix) + 1 if prefix else 0
    for record in res.stdout.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        head, _, rest = record.partition("\0")  # "SHA PARENTS\0\nA\0path\0…"
        shas = head.split()
        if not shas:
            continue
        commit = shas[0]
        parents[commit] = tuple(shas[1:])
        fields = rest.lstrip("\n").split("\0")
        for status, path in zip(fields[::2], fields[1::2], strict=False):
            if status.startswith("A") and path.startswith(prefix):
                twice = twice or path[cut:] in added
                added[path[cut:]] = commit  # newest first: the oldest addition wins
    return added, parents, twice


def _since(root: str, old: _Answer, base: str, tip: str, prefix: str) -> _Answer | None:
    """`old` (the answer at `base`, an ancestor of `tip`) brought up to `tip` from the
    commits since; None when a whole read is needed to be sure.

    `git log TIP ^BASE` rewrites a new commit's parents to the first commit it shows,
    or to the first commit of BASE's side it reaches (git stops rewriting there). That
    is BASE itself, or a commit the old answer holds, or, past a fork from an older
    commit, any other: the whole log is read then. BASE, when the old answer does not
    hold it (an ordinary commit that added no entry), stands for the newest commit the
    old answer holds below it: on a line of single-parent commits that is the one a whole
    read rewrites it to. A file added both before and since (deleted and added again)
    is left to the whole read too: which addition is the oldest is its log order."""
    log = _log(root, [tip, f"^{base}"], prefix)
    if log is None or log[2]:
        return None
    new_added, new_parents, _ = log
    old_added, old_parents = old
    if not new_added.keys().isdisjoint(old_added):
        return None
    below: tuple[str, ...] | None = None
    parents: dict[str, tuple[str, ...]] = {}
    for commit, ps in new_parents.items():
        kept: list[str] = []
        for parent in ps:
            if parent in new_parents or parent in old_parents:
                kept.append(parent)
            elif parent == base:
                if below is None:
                    below = _newest(old_parents)
                if len(below) > 1:
                    return None  # not a line below BASE after all
                kept.extend(below)
            else:
                return None
        parents[commit] = tuple(dict.fromkeys(kept))
    parents.update(old_parents)
    return {**old_added, **new_added}, parents


def _newest(parents: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The commits no other one has as a parent: the tips of the history held."""
    below = {p for ps in parents.values() for p in ps}
    return tuple(c for c in parents if c not in below)
