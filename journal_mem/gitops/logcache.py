"""A `git log` read whole once, then only for what is new.

The fold asks two questions of the whole history at every distill: which commit
added each journal entry, with the journal commits' ancestry (`lineage.read`), and
every rename (`memgit.renamed_in`). Each costs a walk of every commit, so it grew
with the repository. The answer is kept in the state dir's cache by the commit it was
read at, and the next read at a descendant of that commit asks git only for the
commits since (`git log NEW ^OLD`); whenever the new commits could change the answer
in a way the merge cannot see, the whole log is read again, so the result always
equals a whole read (`tests/gitops/test_logcache.py` checks it on random histories).

A missing, damaged or foreign cache file only means a whole read; nothing here is
ever the only copy of anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from journal_mem.fsutil import replace_atomic_with
from journal_mem.gitops import gitcore

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

VERSION = 1


def is_ancestor(root: str, old: str, new: str) -> bool:
    """Whether commit `old` is `new` or one of its ancestors."""
    res = gitcore.run(["merge-base", "--is-ancestor", old, new], root, clean=True,
                      check=False)
    return res.returncode == 0


def cached(root: str, rev: str, state_dir: str | None, name: str, key: object,
           whole: Callable[[str], T | None],
           since: Callable[[T, str, str], T | None]) -> T | None:
    """The answer at `rev`: `whole(tip)` reads it from the whole log (None when git
    fails: nothing cached); `since(old_answer, old_tip, tip)` brings the answer cached at
    `old_tip` (an ancestor) up to `tip`, or says None when only a whole read can. `key`
    is what else the answer depends on (a path prefix): a cache made under another key
    is not used."""
    tip = gitcore.resolve(root, rev)
    if tip is None or state_dir is None:
        return whole(tip or rev)
    path = os.path.join(state_dir, "cache", f"{name}.pickle")
    old = _load(path, key)
    if old is not None and old[0] == tip:
        return old[1]  # type: ignore[no-any-return]
    answer = None
    if old is not None and is_ancestor(root, old[0], tip):
        answer = since(old[1], old[0], tip)
    if answer is None:
        answer = whole(tip)
    if answer is not None:
        _save(path, key, tip, answer)
    return answer


def advance(state_dir: str, name: str, key: object, old: str, new: str) -> None:
    """Keep the answer cached at `old` as the answer at `new` too, when the caller knows
    that commit `new` (on `old`) changes nothing the answer reads: the next read at `new`
    asks git nothing. A cache at any other commit stays as it is."""
    path = os.path.join(state_dir, "cache", f"{name}.pickle")
    cached = _load(path, key)
    if cached is not None and cached[0] == old:
        _save(path, key, new, cached[1])


def _load(path: str, key: object) -> tuple[str, Any] | None:
    import pickle  # here: `write` and `recall` import this module and read no log

    try:
        with open(path, "rb") as fh:
            data = pickle.load(fh)
        if data.get("version") == VERSION and data.get("key") == key:
            return str(data["tip"]), data["answer"]
    except Exception:  # disposable: any damage means "read the whole log"
        pass
    return None


def _save(path: str, key: object, tip: str, answer: object) -> None:
    import pickle

    data = {"version": VERSION, "key": key, "tip": tip, "answer": answer}
    try:
        replace_atomic_with(path, lambda fh: pickle.dump(data, fh, pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass  # only slower next time
