"""What a distill changed, per agent, and the commit message that says so.

The "before" is the fold of the entries the last distill recorded as folded,
on its recorded date; the "after" is this distill's fold. So the message
names exactly the facts each agent gained, whose text changed, and which it
lost and why (`git log` answers "when was this fixed, and why").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from journal_mem.journal.fold import Fact, Fold

LIST_CAP = 200  # lines per list in a commit message; a first distill of 100k lessons stays readable


@dataclass
class AgentChanges:
    """Keys an agent gained, whose fact changed, and lost (with the reason)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def _held(fold: Fold, agents: set[str]) -> dict[str, dict[str, Fact]]:
    out: dict[str, dict[str, Fact]] = {a: {} for a in agents}
    for fact in fold.facts.values():
        for agent in fact.holders:
            out.setdefault(agent, {})[fact.key] = fact
    return out


def diff(before: Fold, after: Fold) -> dict[str, AgentChanges]:
    """Per agent (sorted), what changed from `before` to `after`; agents without change left out."""
    old = _held(before, set())
    new = _held(after, set())
    # Each fact is compared once, not once per holder (10k facts: ~2.6 holders each).
    changed = {key for key, fact in after.facts.items()
               if (old_fact := before.facts.get(key)) is not None and old_fact != fact}
    out: dict[str, AgentChanges] = {}
    for agent in sorted(set(old) | set(new)):
        was, now = old.get(agent, {}), new.get(agent, {})
        ch = AgentChanges(
            added=sorted(set(now) - set(was)),
            changed=sorted(changed.intersection(now).intersection(was)),
        )
        for key in sorted(set(was) - set(now)):
            ch.removed[key] = after.removed.get(key, f"no longer held by {agent}")
        if ch:
            out[agent] = ch
    return out


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
