"""Near-duplicate titles ("use X" / "never use X"): a report, never a change.

A title's word set, and that set minus any one word, are its signatures; facts
sharing a signature of two or more words are near-duplicates. A set is hashed
as the XOR of its words' hashes, so "minus one word" is one XOR: linear in the
number of facts, no pairwise comparison. A word's hash is the same in every
process (BLAKE2b, not `hash`), so that the signatures can be kept.

A fold finds them in a forked child past `fold.NEAR_FORK_AT` facts, while it goes
on (`Fold.settle`), and a distill keeps what it found them by (`Signatures`,
packed: `cache.NearStore`): the next fold that goes on from the last one finds
them from the signatures of the facts it made again alone (at 100k lessons every
fact's signatures took the child ~0.5 s of CPU at each distill; 20 new lessons
change a few dozen).
"""

from __future__ import annotations

import bisect
import re
import struct
from collections.abc import Iterable, Mapping

from journal_mem import hashes

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Titled(Protocol):
        """A fact as its near-duplicates are found: its key, title and type."""

        @property
        def key(self) -> str: ...
        @property
        def title(self) -> str: ...
        @property
        def type(self) -> str: ...

    # A packed index (`Signatures.packed`, `cache.NearStore`): the signatures in order
    # (8 bytes each, this machine's order), the number of the key each belongs to (4
    # bytes each), the keys NUL-joined, the keys added to and removed from a signature
    # since, and the signatures two or more keys share, with those keys.
    Packed = dict[str, Any]


_TOKEN = re.compile(r"\w+")
_HASHES: dict[str, int] = {}  # a word's hash, made once per process


_LOW = (1 << 32) - 1  # a key's number, below a signature in one packed int


def _hash(word: str) -> int:
    found = _HASHES.get(word)
    if found is None:
        digest = hashes.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8)
        found = _HASHES[word] = int.from_bytes(digest.digest(), "little")
    return found


def signatures(title: str, kind: str) -> list[int]:
    """The signatures of a fact with `title` of type `kind` (none for an episodic record:
    runs of the same job share their titles by design; none for a title of one word,
    or of more than 24, which rarely collide anyway)."""
    if kind == "episodic":
        return []
    words = set(_TOKEN.findall(title.casefold()))
    if len(words) < 2 or len(words) > 24:
        return []
    hashed = [_hash(w) for w in words]
    whole = 0
    for h in hashed:
        whole ^= h
    if len(words) < 3:
        return [whole]
    return [whole, *(whole ^ h for h in hashed)]


def near_duplicates(facts: Iterable[Titled]) -> list[tuple[str, ...]]:
    """Groups of keys whose titles differ by one word ("use X" / "never use X")."""
    return Signatures.of(facts).groups()


def _groups(multi: Mapping[int, tuple[str, ...]]) -> list[tuple[str, ...]]:
    return sorted(set(multi.values()))


class Signatures:
    """Every signature of some facts and the keys that have it (`keys`), and the groups
    they make (`multi`: each signature two or more keys share, with those keys sorted).

    Made whole from facts (`of`), or from a packed index kept earlier (`unpacked`): its
    signatures sorted in an array, looked up by bisection, with the keys added to or
    removed from each since (`added`, `removed`)."""

    __slots__ = ("added", "base", "multi", "names", "owners", "removed", "sigs", "whole")

    def __init__(self) -> None:
        self.base = ""  # the token of the packed index it was unpacked from ("": made whole)
        # made whole: signature -> its first key, or a list of its keys once shared (most
        # are not: a list each cost ~40 MB at 100k facts)
        self.whole: dict[int, str | list[str]] | None = None
        self.sigs = memoryview(b"").cast("Q")  # unpacked: sorted signatures
        self.owners = memoryview(b"").cast("I")  # the number of each one's key in `names`
        self.names: list[str] = []
        self.added: dict[int, list[str]] = {}
        self.removed: dict[int, list[str]] = {}
        self.multi: dict[int, tuple[str, ...]] = {}

    @classmethod
    def of(cls, facts: Iterable[Titled]) -> Signatures:
        """The signatures of `facts`, made whole."""
        made = cls()
        by_sig: dict[int, str | list[str]] = {}
        for fact in facts:
            key = fact.key
            for sig in signatures(fact.title, fact.type):
                seen = by_sig.setdefault(sig, key)
                if seen is key:
                    continue
                if isinstance(seen, str):
                    by_sig[sig] = [seen, key]
                else:
                    seen.append(key)
        made.whole = by_sig
        for sig, keys in by_sig.items():
            if isinstance(keys, list):
                shared = tuple(sorted(set(keys)))
                if len(shared) > 1:
                    made.multi[sig] = shared
        return made

    def groups(self) -> list[tuple[str, ...]]:
        """The near-duplicate groups, sorted."""
        return _groups(self.multi)

    def keys(self, sig: int) -> list[str]:
        """The keys that have `sig` (one per fact that has it)."""
        if self.whole is not None:
            got = self.whole.get(sig)
            return [] if got is None else [got] if isinstance(got, str) else list(got)
        lo = bisect.bisect_left(self.sigs, sig)
        hi = bisect.bisect_right(self.sigs, sig, lo)
        found = [self.names[self.owners[i]] for i in range(lo, hi)]
        for key in self.removed.get(sig, ()):
            if key in found:
                found.remove(key)
        found += self.added.get(sig, ())
        return found

    def go_on(self, old: Mapping[str, tuple[str, str]], new: Mapping[str, Titled],
              keys: Iterable[str]) -> None:
        """Become the signatures of the facts of a fold that went on from those these are
        of: `keys` are those whose fact may differ, with `old` the (title, type) each had
        (none: no fact then) and `new` the facts now."""
        touched: set[int] = set()
        for key in keys:
            was = old.get(key)
            fact = new.get(key)
            before = signatures(*was) if was is not None else []
            after = signatures(fact.title, fact.type) if fact is not None else []
            if before == after:
                continue
            for sig in before:
                self._drop(sig, key)
            for sig in after:
                self._add(sig, key)
            touched.update(before, after)
        for sig in touched:
            shared = tuple(sorted(set(self.keys(sig))))
            if len(shared) > 1:
                self.multi[sig] = shared
            else:
                self.multi.pop(sig, None)

    def _add(self, sig: int, key: str) -> None:
        if self.whole is not None:
            seen = self.whole.setdefault(sig, key)
            if seen is not key:
                self.whole[sig] = [seen, key] if isinstance(seen, str) else [*seen, key]
            return
        _shift(sig, key, self.removed, self.added)

    def _drop(self, sig: int, key: str) -> None:
        if self.whole is not None:
            seen = self.whole.get(sig)
            if seen == key:
                del self.whole[sig]
            elif isinstance(seen, list) and key in seen:
                rest = list(seen)
                rest.remove(key)
                self.whole[sig] = rest[0] if len(rest) == 1 else rest
            return
        _shift(sig, key, self.added, self.removed)

    def changes(self) -> int:
        """How many keys were added to or removed from signatures since it was packed."""
        return sum(map(len, self.added.values())) + sum(map(len, self.removed.values()))

    def size(self) -> int:
        """How many (signature, key) pairs it was packed with."""
        return len(self.sigs)

    def delta(self) -> Packed:
        """What changed since it was unpacked: the keys added to and removed from each
        signature, and the groups."""
        return {"added": {s: tuple(k) for s, k in self.added.items() if k},
                "removed": {s: tuple(k) for s, k in self.removed.items() if k},
                "multi": dict(self.multi)}

    def packed(self) -> Packed:
        """Its base (made whole: all of it; unpacked: as unpacked) and its changes."""
        if self.whole is not None:
            # each (signature, number of its key) as one int, sorted as ints: sorting
            # (signature, key) tuples took ~0.8 s at 100k lessons
            number: dict[str, int] = {}
            pairs: list[int] = []
            for sig, keys in self.whole.items():
                for key in (keys,) if isinstance(keys, str) else keys:
                    pairs.append(sig << 32 | number.setdefault(key, len(number)))
            pairs.sort()
            return {"sigs": struct.pack(f"={len(pairs)}Q", *[v >> 32 for v in pairs]),
                    "owners": struct.pack(f"={len(pairs)}I", *[v & _LOW for v in pairs]),
                    "names": "\0".join(number), **self.delta()}
        return {"sigs": self.sigs.tobytes(), "owners": self.owners.tobytes(),
                "names": "\0".join(self.names), **self.delta()}

    @classmethod
    def unpacked(cls, packed: Packed, base: str = "") -> Signatures:
        """The signatures `packed` holds, kept as the base saved as `base` ("": not kept
        yet). `ValueError`, `KeyError`, `TypeError`: not a packed index."""
        made = cls()
        made.base = base
        made.sigs = memoryview(packed["sigs"]).cast("Q")
        made.owners = memoryview(packed["owners"]).cast("I")
        if len(made.sigs) != len(made.owners):
            raise ValueError("a packed index of signatures and owners apart")
        made.names = packed["names"].split("\0") if packed["names"] else []
        made.added = {int(s): list(k) for s, k in packed["added"].items()}
        made.removed = {int(s): list(k) for s, k in packed["removed"].items()}
        made.multi = {int(s): tuple(k) for s, k in packed["multi"].items()}
        return made


def _shift(sig: int, key: str, undone: dict[int, list[str]], done: dict[int, list[str]],
           ) -> None:
    """Record a change of `key` at `sig` since the signatures were unpacked (`done`: the
    keys added, or removed), unless it undoes one recorded the other way (`undone`)."""
    pending = undone.get(sig)
    if pending and key in pending:
        pending.remove(key)
    else:
        done.setdefault(sig, []).append(key)
