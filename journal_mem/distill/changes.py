"""What a distill changed, per agent, and the commit message that says so.

The "before" is the fold of the entries the last distill recorded as folded,
on its recorded date; the "after" is this distill's fold. So the message
names exactly the facts each agent gained, whose text changed, and which it
lost and why (`git log` answers "when was this fixed, and why").
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable

from journal_mem.journal.fold import FACT_FIELDS, FactRow, Fold

HOLDERS = FACT_FIELDS.index("holders")
LIST_CAP = 200  # lines per list in a commit message; a first distill of 100k lessons stays readable


class AgentChanges:
    """Keys an agent gained, whose fact changed, and lost (with the reason)."""

    __slots__ = ("added", "changed", "removed")

    def __init__(self) -> None:
        self.added: list[str] = []
        self.changed: list[str] = []
        self.removed: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def diff(before: dict[str, FactRow], after: dict[str, FactRow],
         removed: dict[str, str], changed: Iterable[str] | None = None,
         ) -> dict[str, AgentChanges]:
    """Per agent (sorted), what changed from the facts `before` to `after` (each as its
    field values, `fact_row`); agents without change left out. `removed`: why a key went
    (the new fold's `removed`); `changed`: the keys of `after` whose row differs from
    `before`'s, when the caller knows them (`cache.changed_rows`).

    Only facts whose row differs are looked at: a fact equal in both (56k of them at 100k
    lessons, for a distill of 20 new ones) changes nothing for any of its holders."""
    out: dict[str, AgentChanges] = {}

    def of(agent: str) -> AgentChanges:
        found = out.get(agent)
        if found is None:
            found = out[agent] = AgentChanges()
        return found

    def lose(key: str, holders: tuple[str, ...]) -> None:
        for agent in holders:
            of(agent).removed[key] = removed.get(key, f"no longer held by {agent}")

    if changed is None:
        keys = after.keys()  # the keys whose row differs, found in C
        changed = itertools.compress(keys, map(operator.ne, map(before.get, keys),
                                               after.values()))
    for key in changed:
        old, row = before.get(key), after[key]
        now: tuple[str, ...] = row[HOLDERS]  # type: ignore[assignment]
        was: tuple[str, ...] = () if old is None else old[HOLDERS]  # type: ignore[assignment]
        for agent in now:
            ch = of(agent)
            (ch.changed if agent in was else ch.added).append(key)
        lose(key, tuple(a for a in was if a not in now))
    for key in before.keys() - after.keys():
        lose(key, before[key][HOLDERS])  # type: ignore[arg-type]
    for ch in out.values():
        ch.added.sort()
        ch.changed.sort()
        ch.removed = dict(sorted(ch.removed.items()))
    return {agent: out[agent] for agent in sorted(out)}


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= LIST_CAP:
        return lines
    return [*lines[:LIST_CAP], f"  … and {len(lines) - LIST_CAP} more"]


def message(
    date: str,
    folded: list[str],
    changes: dict[str, AgentChanges],
    after: Fold,
    evicted: dict[str, list[str]],
    invalid: dict[str, tuple[str, ...]],
) -> str:
    """The distill commit's message."""
    counts = (f"+{sum(len(c.added) for c in changes.values())} "
              f"~{sum(len(c.changed) for c in changes.values())} "
              f"-{sum(len(c.removed) for c in changes.values())}")
    lines = [f"jmem distill {date}: {lessons(len(folded))} folded, facts {counts}", ""]
    if folded:
        lines += ["Lessons folded:", *_capped([f"  {p}" for p in folded]), ""]
    for agent, ch in changes.items():
        lines.append(f"{agent}: +{len(ch.added)} ~{len(ch.changed)} -{len(ch.removed)}")
        items = [f"  added   {k}: {after.facts[k].title}" for k in ch.added]
        items += [f"  changed {k}: {after.facts[k].title}" for k in ch.changed]
        items += [f"  removed {k}: {why}" for k, why in ch.removed.items()]
        lines += [*_capped(items), ""]
    gone = {a: keys for a, keys in evicted.items() if keys}
    if gone:
        lines.append("Evicted (no room in a topic file; still in the journal):")
        lines += _capped([f"  {a}: {', '.join(keys)}" for a, keys in gone.items()])
        lines.append("")
    if invalid:
        lines.append("Invalid entries skipped (fix them; they were not folded):")
        lines += _capped([f"  {p}: {probs[0]}" for p, probs in invalid.items()])
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def lessons(count: int) -> str:
    """The count of new lessons in words: "1 new lesson", "2 new lessons"."""
    return f"{count} new lesson" + ("" if count == 1 else "s")
