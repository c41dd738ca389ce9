"""The rules a fold applies after its replay, and the same rules going on from the last fold.

After the replay (`journal/replay.py`) each live key is judged on the distill
date: an expired fact goes, and so does an episodic one past its time; a fact
whose refs are all gone from the tree goes too, or is flagged
(`distill.stale_refs`). Then one writer's facts whose titles are equal once
normalised are merged into the latest (the one placed last by the replay).

The decisions are kept (`replay.Ruled`: plain data the distiller caches). A fold that
goes on from a kept replay goes on from them too (`go_on`) when it is made on
the same date or a later one by the same rules. A key that no new entry touched,
whose refs resolve as they did, whose judgement by date cannot have changed since
(`next_change`), in a same-title group that no changed key is in, is judged as it
was, and its fact is the last fold's. Only the keys the new entries touched,
those whose refs now resolve otherwise, those whose time passed, and the members
of their same-title groups are judged again. The property test in
tests/journal/test_replay.py holds the two ways equal.

Whether the refs resolve as they did is asked of the tree for each cited path
(~75 ms a distill at 10k lessons), unless the commit they are judged at is the
one the last fold's were (`Ruled.at`), or descends from it with nothing the
refs can name changed since (`RefsAt.same_since`: most distills follow only
commits of memory, their own among them).
"""

from __future__ import annotations

import datetime as dt

from journal_mem.journal.anchor import split as split_ref
from journal_mem.journal.replay import Group, Ruled
from journal_mem.journal.similar import normalise_title
from journal_mem.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from collections.abc import Callable

    from journal_mem.journal.entry import Entry
    from journal_mem.journal.replay import KeyState, Replay


class RefsAt(NamedTuple):
    """The commit a fold judges refs at, and whether every path of a set resolves there
    as it did at an earlier commit (`same_since(commit, paths)`: `memgit.refs_same`)."""

    id: str
    same_since: Callable[[str, set[str]], bool]


def _utc_date(value: dt.date | dt.datetime) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).date()
    return value


def dated_rule(entry: Entry, date: dt.date, ttl_days: int) -> str | None:
    """Why the distill date drops this fact, or None."""
    if entry.valid_until is not None and _utc_date(entry.valid_until) < date:
        return f"expired {entry.valid_until.isoformat()}"
    if entry.type == "episodic" and (date - _utc_date(entry.created)).days > ttl_days:
        return f"episodic older than {ttl_days} days"
    return None


def next_change(entry: Entry, date: dt.date, ttl_days: int) -> dt.date | None:
    """The first date after `date` on which `dated_rule` may judge `entry` otherwise (the
    day after its `valid_until`, the day an episodic record passes its time), or None.
    Later dates never bring a dropped fact back: `dated_rule` only drops more."""
    until, episodic = entry.valid_until, entry.type == "episodic"
    if until is None and not episodic:
        return None  # most facts: judged by date the same on every date
    days = []
    if until is not None:
        days.append(_utc_date(until) + dt.timedelta(days=1))
    if episodic:
        days.append(_utc_date(entry.created) + dt.timedelta(days=ttl_days + 1))
    return min((d for d in days if d > date), default=None)


def _judge(entry: Entry, ruled: Ruled, key: str, ref_exists: Callable[[str], bool]) -> bool:
    """Judge one live key by the date and its refs, into `ruled`; whether it stays."""
    reason = dated_rule(entry, ruled.date, ruled.ttl)
    change = next_change(entry, ruled.date, ruled.ttl)
    if change is not None:
        ruled.expires[key] = change
    refs = entry.refs
    # refs recorded at filing are judged with their history (`journal.citations`)
    if reason is None and refs and not entry.cited:
        ruled.refs[key] = refs
        if not any(ref_exists(split_ref(r)[0]) for r in refs):
            if ruled.drop:
                reason = "refs gone: " + ", ".join(refs)
            else:
                ruled.flagged[key] = "refs gone: " + ", ".join(refs)
    if reason is not None:
        ruled.ruled[key] = reason
        return False
    return True


def group_of(entry: Entry) -> Group | None:
    """The same-title group of a key whose latest entry is `entry` (None: it merges with
    nothing; episodic records are events, one per run, never merged)."""
    if entry.type == "episodic":
        return None
    norm = normalise_title(entry.title)
    return (entry.agent, norm) if norm else None


def _merge(members: list[KeyState], merged: dict[str, str]) -> KeyState:
    """Merge one group: the latest wins and takes the holders; its winner."""
    members.sort(key=lambda a: a.seq)
    winner = members[-1]
    for loser in members[:-1]:
        winner.holders |= loser.holders
        merged[loser.entry.key] = winner.entry.key
    return winner


def apply(accs: dict[str, KeyState], date: dt.date, ttl: int, drop: bool,
          ref_exists: Callable[[str], bool], at: RefsAt | None = None,
          ) -> tuple[dict[str, KeyState], Ruled]:
    """The keys of a replay that stay facts (a merge's winner holding its losers' holders),
    and the decisions, judging every live key.

    Different keys, same normalised title, one writer: the latest wins and takes the
    holders (an agent that wrote its lesson twice under two keys). Across writers a same
    title is no proof of the same fact ("never against prod" and "directly against
    prod" fold to one title once punctuation goes): one agent must not replace
    another's fact without naming it, so the pair stays and is reported as a probable
    correction."""
    ruled = Ruled(date, ttl, drop)
    ruled.at = at.id if at is not None else ""
    live: dict[str, KeyState] = {}
    for key, acc in accs.items():
        if acc.live and _judge(acc.entry, ruled, key, ref_exists):
            live[key] = acc
    groups: dict[Group, list[KeyState]] = {}
    for acc in live.values():
        group = group_of(acc.entry)
        if group is not None:
            groups.setdefault(group, []).append(acc)
    for group, members in groups.items():
        ruled.groups[group] = [acc.entry.key for acc in members]
        if len(members) > 1:
            winner = _merge(members, ruled.merged)
            for loser in members:
                if loser is not winner:
                    del live[loser.entry.key]
    return live, ruled


def _refs_same(ruled: Ruled, at: RefsAt | None) -> bool:
    """Whether every ref `ruled` judged resolves at `at` as it did when it was judged."""
    if at is None or not at.id or not ruled.at:
        return False
    if ruled.at == at.id or not ruled.refs:
        return True
    return at.same_since(ruled.at, {split_ref(r)[0] for refs in ruled.refs.values()
                                    for r in refs})


def go_on(ruled: Ruled, replay: Replay, touched: set[str], date: dt.date,
          ref_exists: Callable[[str], bool], at: RefsAt | None = None,
          ) -> dict[str, KeyState | None] | None:
    """Go on from the decisions `ruled` of the last fold, made by these rules on `date`
    or before it (`Ruled.fits`), to this fold's (in place): `replay` went on from the
    last fold's replay with new entries that touched the keys `touched`, and
    `replay.state` gives any key's state. The keys whose fact may differ from the last
    fold's: each with the state that is its fact now (a merge's winner holding its
    losers' holders), or None when it is no fact. None when the decisions do not fit the
    replay (the caller then judges every key: `apply`). `at`: the commit refs are judged
    at (None: unknown, every key's refs are asked again)."""
    state = replay.state
    changed = set(touched)
    if date != ruled.date:  # a new day: the keys whose judgement by date changed since
        changed.update(key for key, day in ruled.expires.items() if day <= date)
        ruled.date = date
    if not _refs_same(ruled, at):  # a code commit may have removed a ref, or one back
        for key, refs in ruled.refs.items():
            if key not in touched:
                gone = not any(ref_exists(split_ref(r)[0]) for r in refs)
                if gone != (key in ruled.ruled or key in ruled.flagged):
                    changed.add(key)
    ruled.at = at.id if at is not None else ""
    before: dict[Group, list[str]] = {}  # the groups as they were, of each group touched
    out: dict[str, KeyState | None] = {}
    groups = ruled.groups
    for key in sorted(changed):
        was = replay.kept_row(key)
        if was is not None and was[2] and key not in ruled.ruled:  # it passed the rules
            group = group_of(replay.kept_entry(key))
            if group is not None:
                members = groups.get(group)
                if members is None or key not in members:
                    return None
                before.setdefault(group, list(members))
                members = list(members)  # a new list: the kept one may be the base's
                members.remove(key)  # (`cache.RulesStore` tells changed groups by object)
                groups[group] = members
        for kept in (ruled.ruled, ruled.flagged, ruled.refs, ruled.expires):
            kept.pop(key, None)
        out[key] = None
        acc = state(key)
        if acc is None or not acc.live or not _judge(acc.entry, ruled, key, ref_exists):
            continue
        group = group_of(acc.entry)
        if group is None:
            out[key] = acc
            continue
        before.setdefault(group, list(groups.get(group, ())))
        groups[group] = [*groups.get(group, ()), key]
    for was_in in before.values():  # every merge of a group touched is made again
        for key in was_in:
            ruled.merged.pop(key, None)
            out.setdefault(key, None)
    merging: list[list[KeyState]] = []
    for group in before:
        members = groups.get(group)
        if not members:
            groups.pop(group, None)
            continue
        states = [acc for acc in map(state, members) if acc is not None]
        if len(states) != len(members):
            return None  # before any merge: no state's holders changed yet
        merging.append(states)
        out.update(dict.fromkeys(members))
    for states in merging:
        winner = _merge(states, ruled.merged) if len(states) > 1 else states[0]
        out[winner.entry.key] = winner
    return out
