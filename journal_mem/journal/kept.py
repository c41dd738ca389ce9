"""What the last distill kept to go on from: its fold's replay, with what the rules after
it decided and the facts they made, while git history still orders the journal's
entries as it did then. The distiller goes on from it and keeps the next one
(`distill/folding.py`); the recall index's full update only reads it
(`recall/refresh.py`)."""

from __future__ import annotations

from journal_mem.gitops import lineage
from journal_mem.journal.cache import FoldCache, NearStore, ReplayCache, RulesStore
from journal_mem.journal.near import Signatures
from journal_mem.journal.replay import Kept, Ruled

GROWN = 1000  # rows and paths a kept replay's delta may hold past a fifth of its base


def replay_key(agents: list[str], policy_key: object) -> object:
    """What a kept replay depends on besides its entries: who `all` is (`agents`), how
    entries are judged (the policy's key)."""
    return sorted(set(agents)), policy_key


def kept_replay(root: str, common_dir: str, memory_root: str, replays: ReplayCache,
                facts: FoldCache, decided: RulesStore,
                near: NearStore | None = None) -> Kept | None:
    """The replay the last fold kept, when git history orders its entries as it did then:
    HEAD (of the checkout at `root`) is the commit it was made against, or descends
    from it (`lineage.added_since`: the entries committed since are given with it as
    `committed`, and `replay.resume` checks the rest); not once
    what went on from it is a fifth of it (the next fold replays everything and keeps
    that whole). With it, when they were kept with it: what the rules after it
    decided (`decided`), the facts they made (`facts`), and the signatures of their
    titles (`near`)."""
    replays.load()
    head = replays.head()
    since = (lineage.added_since(root, common_dir, memory_root, head)
             if head and replays.grown() <= max(GROWN, replays.size // 5) else None)
    if since is None:
        replays.forget()
        decided.forget()
        if near is not None:
            near.forget()
        return None
    token = replays.token
    fields = replays.fields()
    if fields is None:
        return None
    try:
        kept = Kept.of(fields)
    except (KeyError, TypeError):  # disposable: another shape (another version's) is none
        return None
    kept.committed = since
    rules = decided.load(token)
    rows = facts.rows_of(rules["fold"]) if rules is not None else None
    if rules is not None and rows is not None:
        try:
            kept.ruled = Ruled.of(rules["ruled"])
        except (KeyError, TypeError):  # disposable: another shape is no cache
            return kept
        kept.facts = {**rows, **rules["staled"]} if rules["staled"] else rows
        kept.near = _signatures(near, token) if near is not None else None
    return kept


def _signatures(near: NearStore, token: str) -> Signatures | None:
    """The signatures kept with the replay saved as `token`, or None."""
    found = near.load(token)
    if found is None:
        return None
    base, packed = found
    try:
        return Signatures.unpacked(packed, base)
    except (KeyError, ValueError, TypeError, AttributeError):  # disposable: no cache
        return None
