"""Near-duplicate titles ("use X" / "never use X"): a report, never a change.

A title's word set, and that set minus any one word, are its signatures; facts
sharing a signature of two or more words are near-duplicates. A set is hashed
as the XOR of its words' hashes, so "minus one word" is one XOR: linear in the
number of facts, no pairwise comparison. A fold finds them in a forked child
past `fold.NEAR_FORK_AT` facts, while it goes on (`Fold.settle`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Protocol

    class Titled(Protocol):
        """A fact as its near-duplicates are found: its key, title and type."""

        @property
        def key(self) -> str: ...
        @property
        def title(self) -> str: ...
        @property
        def type(self) -> str: ...


_TOKEN = re.compile(r"\w+")


def near_duplicates(facts: Iterable[Titled]) -> list[tuple[str, ...]]:
    """Groups of keys whose titles differ by one word ("use X" / "never use X")."""
    # A signature maps to its first key, and to a list only once a second key shares
    # it: most signatures are unique, and a list each cost ~40 MB at 100k facts.
    by_sig: dict[int, str | list[str]] = {}

    def add(sig: int, key: str) -> None:
        seen = by_sig.setdefault(sig, key)
        if seen is key:
            return
        if isinstance(seen, str):
            by_sig[sig] = [seen, key]
        else:
            seen.append(key)

    for fact in facts:
        if fact.type == "episodic":
            continue  # runs of the same job share their titles by design
        words = set(_TOKEN.findall(fact.title.casefold()))
        if len(words) < 2 or len(words) > 24:
            continue  # one word is no signature; long titles rarely collide anyway
        hashes = [hash(w) for w in words]
        whole = 0
        for h in hashes:
            whole ^= h
        add(whole, fact.key)
        if len(words) >= 3:
            for h in hashes:
                add(whole ^ h, fact.key)
    groups = {tuple(sorted(set(keys))) for keys in by_sig.values() if isinstance(keys, list)}
    return sorted(g for g in groups if len(g) > 1)
