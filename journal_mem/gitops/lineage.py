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

from journal_mem.gitops import gitcore


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


def read(root: str, rev: str, memory_root: str) -> History:
    """The history of `rev` for the journals under `memory_root` (empty when unborn)."""
    prefix = memory_root.strip("/")
    spec = f":(top,glob){prefix}/*/journal/**" if prefix else ":(top,glob)*/journal/**"
    res = gitcore.run(["log", "--full-history", "--parents", "--no-renames", "--name-status",
                       "-z", "--format=%x01%H %P", rev, "--", spec], root, clean=True,
                      check=False)
    added: dict[str, str] = {}
    parents: dict[str, tuple[str, ...]] = {}
    if not res.ok:
        return History(added, parents)
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
                added[path[cut:]] = commit  # newest first: the oldest addition wins
    return History(added, parents)
