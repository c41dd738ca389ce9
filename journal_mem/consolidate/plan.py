"""`jmem consolidate`: the plan of what a curator could merge, settle or drop.

Deterministic: a pure function of the journal, the config, the committed tree
(for refs) and the date, like a distill, so that CI can rebuild it and a
reviewer can check it. It never writes. Each item names the live facts it
concerns (`keys`) and why:

* `duplicates`: facts that say the same thing in other words, across agents
  and topics (`paraphrase.clusters`); merging them frees a line in every
  holder's `MEMORY.md` per duplicate.
* `conflict`: a newer fact of another agent that probably corrects an older
  one (the distiller's `conflicts`), or titles that differ by one word ("use
  X" / "never use X", its `near_duplicates`): someone must say which is true.
  One between two facts of one duplicates cluster is named in that cluster's
  `why` instead: a correction can read like a paraphrase.
* `stale`: facts whose cited code changed since they were written (the commit
  named), facts the fold flags (refs gone, with `distill.stale_refs =
  "flag"`), and episodic records older than half their time to live: their
  lasting lesson, if any, belongs in a fact of its own.
* `over-budget`: an agent's topic that spills into later files or evicts
  facts to the journal: merging or retracting some brings it back.

An item's `id` is its kind and a digest of what it is about — its keys and the
newest entry concerning each (`seen`): a proposal made from an older plan is refused
once a fact it cites has changed, even under the same key.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from typing import Any

from journal_mem.consolidate.paraphrase import Text, clusters, evidence
from journal_mem.hashes import sha256
from journal_mem.journal.entry import iso
from journal_mem.journal.fold import Fact, Fold, today
from journal_mem.journal.forked import in_child
from journal_mem.journal.order import latest_by_key
from journal_mem.journal.reader import Journal, read_journal
from journal_mem.journal.render import render
from journal_mem.journal.similar import writer
from journal_mem.repo import Context

KINDS = ("duplicates", "conflict", "stale", "over-budget")


@dataclass(frozen=True)
class Item:
    """One thing to consolidate: its kind, the live facts it concerns, and why."""

    kind: str
    keys: tuple[str, ...]
    why: str
    agent: str | None = None  # over-budget: whose topic
    topic: str | None = None
    seen: tuple[str, ...] = ()  # the newest entry concerning each key, as the plan saw it

    @property
    def id(self) -> str:
        digest = sha256("\0".join([self.kind, self.agent or "", self.topic or "",
                                           *self.keys, *self.seen]).encode()).hexdigest()
        return f"{self.kind}-{digest[:10]}"


@dataclass
class Plan:
    """The items, and the live facts (and which of them `all` reaches) they name."""

    date: dt.date
    items: list[Item] = field(default_factory=list)
    facts: dict[str, Fact] = field(default_factory=dict)
    for_all: frozenset[str] = frozenset()  # keys some entry gives `applies_to: all`
    last: dict[str, str] = field(default_factory=dict)  # key -> newest entry concerning it

    def item(self, item_id: str) -> Item | None:
        return next((i for i in self.items if i.id == item_id), None)

    def as_json(self) -> list[dict[str, Any]]:
        """The plan as `--json` prints it and a proposer reads it."""
        return [self._item_json(item) for item in self.items]

    def _item_json(self, item: Item) -> dict[str, Any]:
        facts = [self.facts[k] for k in item.keys]
        out: dict[str, Any] = {
            "id": item.id, "kind": item.kind, "keys": list(item.keys), "why": item.why,
            "titles": [f.title for f in facts],
            "holders": sorted({h for f in facts for h in f.holders}),
            "writers": sorted({writer(f) for f in facts}),
        }
        if item.agent:
            out["agent"], out["topic"] = item.agent, item.topic
        out["facts"] = [{"key": f.key, "title": f.title, "body": f.body, "topic": f.topic,
                         "type": f.type, "importance": f.importance, "holders": list(f.holders),
                         "writer": writer(f), "created": iso(f.created), "path": f.path}
                        for f in facts]
        return out

    def lines(self) -> list[str]:
        """The plan as text: one paragraph per item."""
        if not self.items:
            return ["nothing to consolidate: no duplicates, conflicts, stale facts or "
                    "topics over budget"]
        out = []
        for item in self.items:
            out.append(f"{item.id}: {item.why}")
            for key in item.keys:
                fact = self.facts[key]
                out.append(f"  [{key}] {fact.title} (by {writer(fact)}; held by "
                           f"{', '.join(fact.holders)})")
        counts = {kind: sum(i.kind == kind for i in self.items) for kind in KINDS}
        out.append(", ".join(f"{n} {kind}" for kind, n in counts.items() if n) +
                   " (`jmem consolidate --propose CMD` asks a curator to settle them)")
        return out


def make_plan(ctx: Context, agent: str | None = None, date: dt.date | None = None,
              journal: Journal | None = None) -> Plan:
    """The plan for the repository on `date` (today); with `agent`, only the items that
    concern a fact `agent` holds."""
    journal = journal or read_journal(ctx.layout, ctx.policy)
    day = date or today()
    folded = ctx.fold(journal.entries, day)
    # the duplicates (a third of a plan at 10k lessons) in a forked child, where there is
    # a CPU for one, while this process renders every agent's files (`over_budget`)
    clustered = in_child(lambda: duplicates(folded))
    plan = Plan(day, facts=folded.facts, for_all=frozenset(
        e.key for _, e in journal.entries if "all" in e.applies_to),
        last=latest_by_key(journal.entries))
    found = conflicts(folded)
    later = [*stale(ctx, folded, day), *over_budget(ctx, folded)]
    same = clustered()
    merged = {key: index for index, item in enumerate(same) for key in item.keys}
    inner: dict[int, list[Item]] = {}
    apart = []
    for item in found:
        where = {merged.get(k) for k in item.keys}
        index = where.pop() if len(where) == 1 else None
        if index is None:
            apart.append(item)
        else:  # inside one cluster: the merge item settles it, and says so
            inner.setdefault(index, []).append(item)
    same = [_warned(item, inner.get(i, [])) for i, item in enumerate(same)]
    items = [*same, *apart, *later]
    if agent is not None:
        items = [i for i in items if i.agent == agent or (
            i.agent is None and any(agent in folded.facts[k].holders for k in i.keys))]
    plan.items = [replace(i, seen=tuple(plan.last.get(k, "") for k in i.keys)) for i in items]
    return plan


def duplicates(folded: Fold) -> list[Item]:
    """Clusters of live facts that say the same thing (episodic records are events: never)."""
    facts = [f for f in folded.facts.values() if f.type != "episodic"]
    texts = [Text(f.title, f.body) for f in facts]
    df: dict[str, int] = {}
    found = clusters(texts, counts=df)
    items = []
    for group in found:
        keys = tuple(sorted(facts[i].key for i in group))
        writers = sorted({writer(facts[i]) for i in group})
        words = evidence(texts, group, df)
        shared = f"; they share: {', '.join(words)}" if words else ""
        items.append(Item("duplicates", keys, f"{len(keys)} facts say the same thing in other "
                          f"words (written by {', '.join(writers)}){shared}: merge them into "
                          "one"))
    return sorted(items, key=lambda i: i.keys)


def _warned(item: Item, inside: list[Item]) -> Item:
    """A duplicates item that holds probable corrections says so: a correction reads
    like a paraphrase, and the curator must merge only the wordings that agree."""
    if not inside:
        return item
    pairs = ", ".join("[" + "] / [".join(c.keys) + "]" for c in inside)
    return Item(item.kind, item.keys, f"{item.why}; a newer one may correct an older "
                f"({pairs}): merge only the wordings that agree")


def conflicts(folded: Fold) -> list[Item]:
    """Probable corrections the distiller reports, and one-word-apart titles."""
    items = {}
    for old, new in folded.conflicts:
        if old in folded.facts and new in folded.facts:
            item = Item("conflict", (old, new),
                        f"[{new}] is newer and probably corrects [{old}], which it does not "
                        "name: supersede or retract the wrong one")
            items[item.keys] = item
    for group in folded.near_duplicates:
        keys = tuple(sorted(k for k in group if k in folded.facts))
        if len(keys) > 1 and keys not in items:
            items[keys] = Item("conflict", keys, "titles that differ by one word: they say "
                               "opposite things, or the same thing twice")
    return sorted(items.values(), key=lambda i: i.keys)


def stale(ctx: Context, folded: Fold, day: dt.date) -> list[Item]:
    """Flagged facts, and episodic records past half their time to live."""
    items = [Item("stale", (key,), f"{why}: correct the fact or retract it")
             for key, why in sorted(folded.flagged.items()) if key in folded.facts]
    items += [Item("stale", (key,), "; ".join(c.text() for c in changes)
                   + ": check the fact against the code, then restate it (a fresh --ref) "
                     "or retract it")
              for key, changes in sorted(folded.code.items())
              if key in folded.facts and key not in folded.flagged]
    half = ctx.config.distill.episodic_ttl_days / 2
    for fact in folded.facts.values():
        age = (day - fact.created.astimezone(dt.UTC).date()).days
        if fact.type == "episodic" and age > half:
            items.append(Item("stale", (fact.key,), f"episodic record {age} days old (it "
                              f"drops at {ctx.config.distill.episodic_ttl_days}): keep its "
                              "lasting lesson as a fact, or retract it"))
    return sorted(items, key=lambda i: i.keys)


def over_budget(ctx: Context, folded: Fold) -> list[Item]:
    """Topics of an agent that spill into more than one file or evict facts."""
    rendered = render(folded, ctx.agents, ctx.config.budget)
    items = []
    for agent, report in sorted(rendered.agents.items()):
        evicted = set(report.evicted)
        by_topic: dict[str, list[str]] | None = None  # the agent's keys, once it is asked
        for topic, parts in sorted(report.parts.items()):
            if len(parts) < 2 and not evicted:
                continue
            if by_topic is None:
                by_topic = {}
                for fact in folded.facts.values():
                    if agent in fact.holders:
                        by_topic.setdefault(fact.topic, []).append(fact.key)
            keys = tuple(sorted(by_topic.get(topic, ())))
            lost = sorted(evicted & set(keys))
            if len(parts) < 2 and not lost:
                continue
            why = f"{agent}'s topic {topic!r} fills {len(parts)} files"
            if lost:
                why += f" and evicts {len(lost)} facts to the journal"
            items.append(Item("over-budget", keys, why + ": merge or retract some",
                              agent=agent, topic=topic))
    return items
