"""How alike two lessons are, and which live facts a newer one probably corrects.

Pure. A lesson is reduced to its content words cut to 5 letters ("filters" and
"filtering" meet, "the" is gone); two lessons are compared by the cosine of
those sets, title words counting twice, plus a bonus for the same topic.
On the hand-labelled set fixtures/corrections.py a threshold of 0.3 puts
every paraphrased correction above it and every unrelated lesson below it
(bench/bench_related.py; the figures are in the README).

`conflicts` finds, among live facts, the pairs where a newer fact written by
another agent probably corrects an older one. To stay linear it compares
only facts created within `WINDOW_DAYS` of the distill date against the
facts that share one of their rarer words (a word in more than `MAX_DF`
titles says nothing about which fact is meant).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable
from typing import Protocol

MIN_SCORE = 0.3
SAME_TOPIC_BONUS = 0.1
WINDOW_DAYS = 60
MAX_DF = 20
_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    "a an and are as at be by can do does for from how i in is it its of on or should the "
    "this that to use we what when where which who why with you not no never now".split()
)


class Comparable(Protocol):
    """What is compared: an `Entry` or a `Fact` has these."""

    @property
    def title(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def topic(self) -> str: ...


class Dated(Comparable, Protocol):
    """A live fact: its key, date, holders and entry path (`<writer>/journal/…`)."""

    @property
    def key(self) -> str: ...
    @property
    def created(self) -> dt.datetime: ...
    @property
    def holders(self) -> tuple[str, ...]: ...
    @property
    def path(self) -> str: ...


_PUNCT = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s+")


def normalise_title(title: str) -> str:
    """Case, spaces and punctuation folded away: the identity of "the same title"."""
    return _SPACE.sub(" ", _PUNCT.sub(" ", title.casefold())).strip()


def stems(text: str) -> set[str]:
    """Content words cut to 5 letters."""
    return {w[:5] for w in _WORD.findall(text.lower()) if len(w) > 1} - _STOP


def similarity(new: Comparable, old: Comparable) -> float:
    """0..1: cosine of the stem sets (title words twice) plus the same-topic bonus."""
    new_title, old_title = stems(new.title), stems(old.title)
    a = new_title | stems(new.body)
    b = old_title | stems(old.body)
    if not a or not b:
        return 0.0
    shared = len(a & b) + len(new_title & old_title)
    score = shared / math.sqrt(len(a) * len(b)) / 1.5
    return min(score + (SAME_TOPIC_BONUS if new.topic == old.topic else 0.0), 1.0)


def writer(fact: Dated) -> str:
    """The agent whose journal holds the fact's newest entry."""
    return fact.path.split("/", 1)[0]


def conflicts(facts: Iterable[Dated], date: dt.date) -> list[tuple[str, str]]:
    """(old key, newer key) pairs: a recent fact of another agent probably corrects the old one.

    A supersede or retract settles a pair (the old fact is no longer live), and
    so does a confirmation: an entry restating the old key after the newer one.
    """
    live = list(facts)
    titles = [stems(fact.title) for fact in live]
    by_stem: dict[str, list[int]] = {}
    for index, words in enumerate(titles):
        for stem in words:
            posting = by_stem.get(stem)
            if posting is None:
                by_stem[stem] = [index]
            elif len(posting) <= MAX_DF:  # past MAX_DF it is never read: stop growing it
                posting.append(index)
    since = date - dt.timedelta(days=WINDOW_DAYS)
    found: dict[str, tuple[float, str]] = {}
    for new, words in zip(live, titles, strict=True):
        if new.created.date() < since:
            continue
        seen: set[int] = set()
        for stem in words:
            posting = by_stem.get(stem, [])
            if len(posting) <= MAX_DF:
                seen.update(posting)
        for index in seen:
            old = live[index]
            if old.created >= new.created or writer(old) == writer(new):
                continue
            score = similarity(new, old)
            if score >= MIN_SCORE and score > found.get(old.key, (0.0, ""))[0]:
                found[old.key] = (score, new.key)
    return sorted((old, new) for old, (_, new) in found.items())
