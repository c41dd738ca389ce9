"""Which facts probably correct which, going on from what the last fold judged.

`similar.conflicts` judges every recent fact against the facts that share one
of its rarer title words. It keeps what it judged by (`similar.Index`): how many
titles have each word, the facts of the rarer ones, which fact each probably
corrected one is corrected by, the recent facts and the retractions. A fold that
goes on from the last one on the same date or a later one (`journal/rules.py`) knows
which facts may differ from the last fold's; `go_on` updates the index with them and
judges again only the facts they can concern:

* a fact that changed, came or went;
* every fact that has one of their title words, where that word is in
  `MAX_DF + 1` titles or fewer before or after: the only words through which a
  fact is paired with another (`MAX_DF` or fewer), or whose weight in
  `_unsaid` changes (it counts up to `MAX_DF + 1`);
* the same for a retraction that came, went or changed (its key among them: a
  retraction restated with other words under its key corrects by those);
* on a later date, every fact whose corrector left the window of the date
  (`_moved_on`).

Every other fact keeps the corrector it had: nothing it is judged by changed. The
pairs are then exactly those `conflicts` gives (the property test in
tests/journal/test_replay.py folds both ways). When the index cannot say (a word
fell back to `KEEP_DF` titles or fewer from more, whose facts it did not keep),
None: the caller judges every fact, and the index kept is again the one judging
every fact makes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping

from journal_mem.journal import similar
from journal_mem.journal.similar import _NONE, WINDOW_DAYS, Index, _rank, change, stems

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Set as Stems

    from journal_mem.journal.similar import Dated


def go_on(index: Index, facts: Mapping[str, Dated], was: Mapping[str, str],
          changed: Iterable[str], date: dt.date, order: dict[str, int] | None,
          newer: Callable[[Dated, Dated], bool | None] | None,
          correctors: Iterable[Dated],
          place: Callable[[Dated], float] | None) -> list[tuple[str, str]] | None:
    """The pairs `similar.conflicts(facts.values(), date, ...)` gives, judged again only
    where `changed` (keys whose fact may differ from the last fold's; `was`: the title
    each of them had then, if it was a fact) can make a difference; `index` (kept by
    the last fold, on `date` or before it: `_moved_on`) is updated in place. None when it
    cannot say (an earlier date)."""
    if index.date > date:
        return None
    cut = stems.__wrapped__
    df, posts, recent = index.df, index.posts, index.recent
    since = date - dt.timedelta(days=WINDOW_DAYS)
    before: dict[str, int] = {}  # each stem whose count changed: its count before
    concerned: set[str] = set()  # facts to judge again
    redone = set(changed)
    for key in sorted(redone):
        title = was.get(key)
        if title is not None:  # its old title leaves the index
            recent.discard(key)
            for stem in cut(title):
                n = df.get(stem, 0)
                before.setdefault(stem, n)
                kept = posts.get(stem)
                if n < 1 or (kept is None) != (n > similar.KEEP_DF):
                    return None  # the index does not hold this fact
                if kept is not None:
                    if key not in kept:
                        return None
                    kept.remove(key)
                if n > 1:
                    df[stem] = n - 1
                else:
                    del df[stem], posts[stem]
    # then the new titles come in: had one come in before another left, a word could pass
    # `KEEP_DF` titles on the way and lose the facts it keeps, at a count that keeps them
    for key in sorted(redone):
        fact = facts.get(key)
        if fact is None:
            index.found.pop(key, None)
            continue
        concerned.add(key)
        if fact.created.date() >= since:
            recent.add(key)
        for stem in cut(fact.title):
            n = df.get(stem, 0)
            before.setdefault(stem, n)
            df[stem] = n + 1
            kept = posts.get(stem)
            if n == 0:
                posts[stem] = [key]
            elif kept is not None:
                kept.append(key)
                if n + 1 > similar.KEEP_DF:
                    del posts[stem]
    said = {x.key: x for x in correctors}
    if index.date != date:
        concerned |= _moved_on(index, facts, said, since)
        index.date = date
    words: list[str] = []  # of each retraction that came, went or changed, its title's stems
    for key in said.keys() ^ index.said.keys() | (said.keys() & index.said.keys() & redone):
        words += index.said.get(key, ())
        if key in said:
            words += stems(said[key].title)
    for stem in [*before, *words]:
        n = df.get(stem, 0)
        kept = posts.get(stem)
        if kept is None and 0 < n <= similar.KEEP_DF:
            return None  # back to `KEEP_DF` titles or fewer: its facts were not kept
        if min(n, before.get(stem, n)) <= similar.MAX_DF + 1:
            if kept is None and n:
                return None  # it left the rarer words for the most common: judge anew
            concerned.update(kept or ())
    index.said = {key: tuple(sorted(stems(x.title))) for key, x in said.items()}
    _judge(index, facts, sorted(concerned), said, since, order, newer, place)
    return sorted(index.found.items())


def _moved_on(index: Index, facts: Mapping[str, Dated], said: Mapping[str, Dated],
              since: dt.date) -> set[str]:
    """The window of the distill date moved on to start at `since`: the facts created
    before it leave `index.recent` (they correct nothing now), and the facts one of them,
    or a retraction created before it, corrected are to be judged again (the facts they
    were judged against otherwise are all still there: their corrector stays the best).
    Nothing comes into the window: it has no end."""
    gone = {key for key in index.recent
            if (fact := facts.get(key)) is None or fact.created.date() < since}
    index.recent -= gone
    return {old for old, new in index.found.items()
            if new in gone or (new in said and said[new].created.date() < since)}


def _judge(index: Index, facts: Mapping[str, Dated], keys: list[str],
           said: dict[str, Dated], since: dt.date, order: dict[str, int] | None,
           newer: Callable[[Dated, Dated], bool | None] | None,
           place: Callable[[Dated], float] | None) -> None:
    """Judge again the facts at `keys`: the one each is corrected by, as `conflicts` would
    choose it among the recent facts and retractions that share a rarer title word."""
    cut = stems.__wrapped__
    df, posts = index.df, index.posts
    by_stem: dict[str, list[Dated]] = {}  # the retractions by their title stems
    for retraction in said.values():
        for stem in stems(retraction.title):
            by_stem.setdefault(stem, []).append(retraction)
    whole: dict[str, Stems[str]] = {}
    title_of: dict[str, Stems[str]] = {}

    def title(item: Dated) -> Stems[str]:
        got = title_of.get(item.key)
        if got is None:
            got = title_of[item.key] = (cut(item.title) if item.key in facts
                                        else stems(item.title))
        return got

    def stems_of(item: Dated) -> Stems[str]:
        got = whole.get(item.key)
        if got is None:
            got = whole[item.key] = title(item) | stems(item.body)
        return got

    def count(stem: str) -> int:
        return min(df.get(stem, 0), similar.MAX_DF + 1)

    recent = index.recent
    for key in keys:
        old = facts.get(key)
        if old is None:
            continue
        candidates: list[Dated] = []
        seen: set[str] = set()
        for stem in title(old):
            if df.get(stem, 0) > similar.MAX_DF:
                continue
            for other in posts.get(stem, ()):
                if other in recent and other not in seen:
                    seen.add(other)
                    candidates.append(facts[other])
            for retraction in by_stem.get(stem, ()):  # its key is no fact's
                if retraction.created.date() >= since and retraction.key not in seen:
                    seen.add(retraction.key)
                    candidates.append(retraction)
        best = _NONE
        for new in candidates:
            rank = _rank(new, old, title(new), stems_of(new), title(old), stems_of(old), count,
                         order, newer, place)
            if (rank is not None and rank > best[0]
                    and change(new, old, values=new.key in facts) is not None):
                best = (rank, new.key)
        if best[1]:
            index.found[key] = best[1]
        else:
            index.found.pop(key, None)
