"""How alike two lessons are, and which live facts a newer one probably corrects.

Pure. A lesson is reduced to its content words cut to 5 letters ("filters" and
"filtering" meet, "the" is gone); two lessons are compared by the cosine of
those sets, title words counting twice, plus a bonus for the same topic.
On the hand-labelled set fixtures/corrections.py a threshold of 0.3 puts
every paraphrased correction above it and every unrelated lesson below it
(bench/bench_related.py; the figures are in the README).

`conflicts` finds, among live facts, the pairs where a newer fact probably
corrects an older one, whoever wrote either (an agent rewording its own fact
without its key leaves the other holders the old value just the same). To
stay linear it compares only facts created within `WINDOW_DAYS` of the
distill date against the facts that share one of their rarer words (a word in
more than `MAX_DF` titles says nothing about which fact is meant).

A close pair is a correction only when the newer lesson changes something
(`change`): a number the older one never says, a name it never says, a
negation its title lacks, or a lesson's own words for a change ("no longer",
"instead", "moved to", "was wrong"). Otherwise it restates the fact: an
agreement, kept apart so that nobody is told a true fact is outdated
(figures: docs/lessons.md, "Agreement is not correction").
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from collections.abc import Set as Stems

MIN_SCORE = 0.3
# How a fact a newer lesson probably corrects is shown, on its own line, wherever it is
# shown (MEMORY.md, the wake pack, a running session's corrections): the words first.
OUTDATED_MARK = "possibly outdated by [{key}]: “{title}” — was: "
OUTDATED_KEY_ONLY = "possibly outdated by [{key}]: "  # a line too short for its words
SAME_TOPIC_BONUS = 0.1
# An agent writes many lessons on one topic and knows its own keys: its rewording of its
# own fact must be closer than another agent's to count (on fixtures/corrections_fourth.py
# the six own corrections score 0.43-0.70; unrelated lessons of one writer in this
# repository's own memory 0.34).
SAME_WRITER_MIN = 0.4
WINDOW_DAYS = 60
MAX_DF = 20
_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    "a an and are as at be by can do does for from how i in is it its of on or should the "
    "this that to use we what when where which who why with you not no never now".split()
)


TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs the wake hook ~2 ms
    import datetime as dt
    from typing import Any, Protocol

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


@functools.lru_cache(maxsize=4096)
def stems(text: str) -> frozenset[str]:
    """Content words cut to 5 letters (cached: a pack or a plan scores one title against
    many)."""
    return frozenset(w[:5] for w in _WORD.findall(text.lower()) if len(w) > 1) - _STOP


def similarity(new: Comparable, old: Comparable) -> float:
    """0..1: cosine of the stem sets (title words twice) plus the same-topic bonus."""
    return min(_score(new, old), 1.0)


def _score(new: Comparable, old: Comparable) -> float:
    """`similarity` before its cap at 1: two near-copies still rank apart."""
    new_title, old_title = stems(new.title), stems(old.title)
    return _scored(new_title, new_title | stems(new.body), old_title,
                   old_title | stems(old.body), new.topic == old.topic)


def _scored(new_title: Stems[str], a: Stems[str], old_title: Stems[str], b: Stems[str],
            same_topic: bool) -> float:
    """`_score` of stems already cut: title stems, and title and body stems."""
    if not a or not b:
        return 0.0
    shared = len(a & b) + len(new_title & old_title)
    score = shared / math.sqrt(len(a) * len(b)) / 1.5
    return score + (SAME_TOPIC_BONUS if same_topic else 0.0)


_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?")
_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
                 "seven": "7", "eight": "8", "nine": "9", "ten": "10", "twelve": "12",
                 "twenty": "20", "thirty": "30", "hundred": "100"}
# patterns a hook needs only for a close pair: compiled when first used (`_pattern`),
# not at the wake hook's import (~1.5 ms for these three)
_NEGATION = r"(?i)\b(?:not|no|never|none|nothing|without|cannot|n't)\b|n't\b"
_CUE_PATTERN = (
    r"(?i)\b(?:no longer|not any ?more|any ?more|instead|actually|nowadays|now|"
    r"(?:moved|switched|changed|migrated|went) (?:to|back|off|from|over)|switched|replaced|"
    r"rewrote|rewritten|migrated|"
    r"(?:is|are|was|were|been|got) (?:retired|revoked|deprecated|dropped|removed|gone|replaced)|"
    r"was wrong|is wrong|are wrong|wrong|incorrect|outdated|obsolete|not true|"
    r"(?:was|were|got|has been|have been) (?:lowered|raised|cut|reduced|increased|bumped|"
    r"changed|renamed|moved|disabled|turned off)|renamed|since v?\d|"
    r"(?:used to|previously|formerly|before that|until recently|last (?:week|month|year)))\b")
_CUES: list[re.Pattern[str]] = []
# The first word of each of `_CUE_PATTERN`'s alternatives: an ASCII text holding none of
# them as a word has no change words, and the pattern need not be compiled (~2 ms) or
# tried to say so (`_may_cue`). tests/journal/test_agreement.py checks it against every
# phrase the pattern matches.
_CUE_FIRST = frozenset(
    "no not any anymore instead actually nowadays now moved switched changed migrated went "
    "replaced rewrote rewritten is are was were been got wrong incorrect outdated obsolete "
    "renamed since used previously formerly before until last".split())


def _may_cue(text: str) -> bool:
    """False when `text` holds no change words, told without `_CUE_PATTERN` (the wake-up
    hook compares pending lessons with held facts, most of which hold none)."""
    return not text.isascii() or not _CUE_FIRST.isdisjoint(_WORD.findall(text.lower()))


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    """`source` compiled, once, when first used."""
    return re.compile(source)


def _cue() -> re.Pattern[str]:
    """The change words, compiled when first needed (not at the wake hook's import)."""
    if not _CUES:
        _CUES.append(re.compile(_CUE_PATTERN))
    return _CUES[0]


@functools.lru_cache(maxsize=4096)
def _cue_in(text: str) -> str | None:
    """The first change words in `text`, casefolded, or None. Cached: a fold asks it of
    one lesson against each fact it resembles (at 10k lessons 1.5k searches of 280 texts,
    ~45 µs each: the pattern is an alternation tried at every word)."""
    found = _cue().search(text) if _may_cue(text) else None
    return found.group(0).casefold() if found else None


# A name: a word of three or more characters with a capital past its first letter
# (InfluxDB, uPlot, TOTP), a digit, or a joint other than a hyphen (flags.json,
# clean_session), or a capitalised word past the title's first; "dry-air" is a word.
_NAME = re.compile(r"[\w$@][\w$@.\-/+#]*")


_ANTONYMS = tuple(tuple(pair.split("/")) for pair in (
    "before/after first/last always/never enable/disable enabled/disabled allow/deny "
    "allowed/denied allow/forbid on/off open/closed true/false min/max minimum/maximum "
    "increase/decrease above/below more/less early/late earlier/later older/newer sync/async "
    "synchronous/asynchronous public/private inclusive/exclusive required/optional "
    "include/exclude includes/excludes accept/reject succeeds/fails safe/unsafe "
    "faster/slower higher/lower start/stop").split())


@functools.lru_cache(maxsize=4096)
def _numbers(text: str) -> frozenset[str]:
    found = {n.replace(",", ".") for n in _NUMBER.findall(text)}
    found.update(_NUMBER_WORDS[w] for w in _WORD.findall(text.casefold()) if w in _NUMBER_WORDS)
    return frozenset(found)


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in _WORD.findall(text))


@functools.lru_cache(maxsize=4096)
def _names(title: str) -> frozenset[str]:
    out = set()
    for n, word in enumerate(_NAME.findall(title)):
        word = word.rstrip(".-/")
        if len(word) < 3 or word[:1].isdigit():
            continue
        rest = word[1:]
        if (any(c.isupper() or c.isdigit() for c in rest) or any(c in "_./+#$@" for c in word)
                or (n > 0 and word[:1].isupper())):
            out.add(word.casefold())
    return frozenset(out)


def change(new: Comparable, old: Comparable, values: bool = True) -> str | None:
    """What the newer lesson changes in the older fact it resembles, or None: it restates it.

    A correction changes a number, a name, a word for its opposite, a polarity,
    or says it is one; an agreement says the same claim in other words, with the
    same numbers.
    Everything is judged against the older lesson's whole text, so that a
    restatement may move a detail from the body into its title.
    `values=False` (a retraction's words: it states no new value) counts only an
    opposite, or a negation or the words for a change ("no longer", "is gone") anywhere
    in it, whatever the older fact says (it may itself say "changed to").
    """
    old_text = f"{old.title}\n{old.body}"
    old_lower = old_text.casefold()
    fresh = _numbers(new.title) - _numbers(old_text) if values else set()
    if fresh:
        return "a number: " + ", ".join(sorted(fresh))
    names = [n for n in _names(new.title) if n not in old_lower] if values else []
    if names:
        return "a name: " + ", ".join(sorted(names))
    new_words = _words(f"{new.title} {new.body}")
    old_words = _words(old_text)
    for a, b in _ANTONYMS:
        if ((a in new_words and b in old_words and a not in old_words)
                or (b in new_words and a in old_words and b not in old_words)):
            return f"an opposite: {a} / {b}"
    negation = _pattern(_NEGATION)
    if len(negation.findall(new.title)) > len(negation.findall(old.title)):
        return "a negation"
    cue = _cue_in(f"{new.title}\n{new.body}")
    if cue and (not values or not _cue_in(old_text)):  # a retraction says it anew
        return f"says {cue!r}"
    if not values and negation.search(f"{new.title}\n{new.body}"):
        return "a negation"
    return None


def writer(fact: Dated) -> str:
    """The agent whose journal holds the fact's newest entry."""
    return fact.path.split("/", 1)[0]


def conflicts(facts: Iterable[Dated], date: dt.date,
              order: dict[str, int] | None = None,
              newer: Callable[[Dated, Dated], bool | None] | None = None,
              correctors: Iterable[Dated] = (),
              place: Callable[[Dated], float] | None = None,
              keep: Callable[[Index], None] | None = None) -> list[tuple[str, str]]:
    """(old key, newer key) pairs: a recent fact probably corrects the old one.

    "Newer" is what `newer(new, old)` says (git history: committed after), and
    where it says nothing (None), later in `order`, the fold's replay (cause,
    then clock); without either, later `created`. A supersede or retract settles
    a pair (the old fact is no longer live), and so does a confirmation: an
    entry restating the old key after the newer one. A close pair that changes
    nothing (`change`) is an agreement, not a conflict. `correctors` are lessons
    that are no fact (retractions) but whose words may correct one: by saying it is
    gone (a negation, "no longer", "removed"), never by a value they state.

    Of the lessons that probably correct one fact, the one named is the one that
    leaves less of the fact's subject unsaid (its topic, its rarer title words: a
    lesson on the chat retry limit scores close to the search retry limit's fact,
    `_unsaid`), then the newest (`place`: its depth in git history, else its place in
    the replay; it has seen the others), then the closest.

    `keep` is given the index this judged by, for a later fold to go on from
    (`journal/corrections.py`).
    """
    live = list(facts)
    cut = stems.__wrapped__  # every title once: through the cache it would evict the rest
    titles = [cut(fact.title) for fact in live]
    cap = KEEP_DF if keep is not None else MAX_DF  # past it a posting only grows in `df`
    df: dict[str, int] = {}
    by_stem: dict[str, list[int]] = {}
    for index, words in enumerate(titles):
        for stem in words:
            posting = by_stem.get(stem)
            if posting is None:
                by_stem[stem] = [index]
            elif len(posting) <= cap:  # past MAX_DF it is never read: stop growing it
                posting.append(index)
            if keep is not None:
                df[stem] = df.get(stem, 0) + 1
    since = date.fromordinal(date.toordinal() - WINDOW_DAYS)  # no `datetime` in the hooks
    found: dict[str, tuple[tuple[float, float, float], str]] = {}
    extra = list(correctors)
    whole: dict[int, Stems[str]] = {}  # index -> title and body stems, cut once
    recent: list[str] = []

    def stems_of(index: int, item: Dated, title: Stems[str]) -> Stems[str]:
        got = whole.get(index)
        if got is None:
            got = whole[index] = title | stems(item.body)
        return got

    def count(stem: str) -> int:
        return min(len(by_stem.get(stem, ())), MAX_DF + 1)

    for at, (new, words) in enumerate(zip([*live, *extra],
                                          [*titles, *(stems(x.title) for x in extra)],
                                          strict=True)):
        if new.created.date() < since:
            continue
        if at < len(live):
            recent.append(new.key)
        seen: set[int] = set()
        for stem in words:
            posting = by_stem.get(stem, [])
            if len(posting) <= MAX_DF:
                seen.update(posting)
        for index in seen:
            old = live[index]
            rank = _rank(new, old, words, stems_of(at, new, words), titles[index],
                         stems_of(index, old, titles[index]), count, order, newer, place)
            if (rank is not None and rank > found.get(old.key, _NONE)[0]
                    and change(new, old, values=at < len(live)) is not None):
                found[old.key] = (rank, new.key)
    if keep is not None:
        keep(Index(date, df, {stem: [live[i].key for i in posting]
                              for stem, posting in by_stem.items() if df[stem] <= KEEP_DF},
                   {old: new for old, (_, new) in found.items()}, set(recent),
                   {x.key: tuple(sorted(stems(x.title))) for x in extra}))
    return sorted((old, new) for old, (_, new) in found.items())


def _rank(new: Dated, old: Dated, new_title: Stems[str], new_whole: Stems[str],
          old_title: Stems[str], old_whole: Stems[str], count: Callable[[str], int],
          order: dict[str, int] | None, newer: Callable[[Dated, Dated], bool | None] | None,
          place: Callable[[Dated], float] | None) -> tuple[float, float, float] | None:
    """How a newer lesson ranks as the correction of an older fact it shares a rarer
    title word with (`conflicts`), before its `change` is judged; None when it is no
    candidate: the same key, not newer, not close, or not about it."""
    if old.key == new.key or not _newer(new, old, order, newer):
        return None
    score = _scored(new_title, new_whole, old_title, old_whole, new.topic == old.topic)
    least = SAME_WRITER_MIN if writer(old) == writer(new) else MIN_SCORE
    if score < least or not speaks_of(new, old):
        return None
    return (-_unsaid(new, old, count),
            place(new) if place is not None else _when(new, order), score)


# A stem in this many titles or fewer keeps the keys of its facts in a kept `Index`: one
# that falls to MAX_DF is then read again without judging every fact.
KEEP_DF = 4 * MAX_DF


class Index:
    """What `conflicts` judged by, kept for the next fold to go on from
    (`journal/corrections.py`), as plain data: the distill `date`; `df`, how many
    facts' titles have each stem; `posts`, the keys of those facts for a stem in
    `KEEP_DF` titles or fewer; `found`, the fact each probably corrected fact is
    corrected by; `recent`, the facts in the window of the date; `said`, the title
    stems of each retraction that is no fact."""

    __slots__ = ("date", "df", "found", "posts", "recent", "said")

    def __init__(self, date: dt.date, df: dict[str, int], posts: dict[str, list[str]],
                 found: dict[str, str], recent: set[str],
                 said: dict[str, tuple[str, ...]]) -> None:
        self.date, self.df, self.posts, self.found = date, df, posts, found
        self.recent, self.said = recent, said

    def fields(self) -> dict[str, object]:
        """Its fields by name (the cache keeps them)."""
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def of(cls, fields: dict[str, Any]) -> Index:
        """The index whose `fields` these are."""
        return cls(*(fields[name] for name in ("date", "df", "posts", "found", "recent",
                                               "said")))


_NONE: tuple[tuple[float, float, float], str] = ((float("-inf"), 0.0, 0.0), "")


def _unsaid(new: Comparable, old: Comparable, df: Callable[[str], int]) -> float:
    """How much of the older title (its values apart) the newer lesson never says, each
    word weighed by its rarity among the titles (`df`: how many titles have a stem):
    a lesson about the chat retry limit scores close to one about the search retry
    limit, and another that names search again is the better candidate for correcting
    it; a word every other title has ("has") weighs little. The older fact's topic counts
    as one whole word: said when the lesson is filed under it or names it. The words of a
    change ("was changed to", "now", "set to": `_subject`) say what happened to the
    subject, not what it is: they are left out of it."""
    said = stems(f"{new.title} {new.body}")
    words = sum(1 / max(df(stem), 1) for stem in _subject(old.title)
                if stem not in said and not any(c.isdigit() for c in stem))
    topic = new.topic == old.topic or stems(old.topic.replace("-", " ")) <= said
    return round(words + (0.0 if topic else 1.0), 2)


def speaks_of(new: Comparable, old: Comparable) -> bool:
    """Whether the newer lesson is about the older fact's subject at all: filed under its
    topic, or saying one of its subject's words (values and the words of a change apart)
    or its topic's; and not a lesson whose title names its own topic, another one than
    the fact's, which the fact never says ("Maps has a batch size of 9" is about maps,
    not the quotes batch size). Two lessons in one shape ("Mail retry limit set to 6376.
    Changed in the mail release." and "Maps port set to 2332. Changed in the maps
    release.") score close on their shared words alone, yet neither says what the other
    is about."""
    if new.topic == old.topic:
        return True
    own = stems(new.topic.replace("-", " "))
    if own and own <= stems(new.title) and not own <= stems(f"{old.title} {old.body}"):
        return False  # it names its own subject, another one: "Maps has a batch size of 9"
    said = stems(f"{new.title} {new.body}")
    return any(stem in said and not any(c.isdigit() for c in stem)
               for stem in _subject(old.title) | stems(old.topic.replace("-", " ")))


# words that give a subject its value, not its name: "X set to 40", "X bumped to 40"
_ASSIGNING = (r"(?i)\b(?:set|changed|moved|switched|raised|lowered|bumped|"
              r"increased|reduced|updated) (?:to|from)\b")


# words that say since when a value holds, not what it is the value of: "… since the
# upgrade", "… as of the March release"
_WHEN = r"(?i)\b(?:since|as of)\b[^,;:.()]*"


# verbs that join a subject to its value ("Maps has a retry limit of 9", "X was 4")
_LINKING = frozenset("has have had was were been being will would".split())


@functools.lru_cache(maxsize=4096)
def _subject(title: str) -> frozenset[str]:
    """A title's stems without its words of a change (`_CUE_PATTERN`, `_ASSIGNING`), of
    since when it holds (`_WHEN`) and the verbs that join it to its value (`_LINKING`)."""
    plain = _cue().sub(" ", title) if _may_cue(title) else title
    return stems(_pattern(_WHEN).sub(" ", _pattern(_ASSIGNING).sub(" ", plain))) - _LINKING


def _when(new: Dated, order: dict[str, int] | None) -> float:
    """Where the lesson stands in the replay: of two candidates, the later one has seen
    more (it may correct the other)."""
    if order is not None and new.key in order:
        return float(order[new.key])
    return new.created.timestamp()


def _newer(new: Dated, old: Dated, order: dict[str, int] | None,
           newer: Callable[[Dated, Dated], bool | None] | None = None) -> bool:
    said = newer(new, old) if newer is not None else None
    if said is not None:
        return said
    if order is not None and new.key in order and old.key in order:
        return order[new.key] > order[old.key]
    return new.created > old.created


class _Held:
    """A fact as a MEMORY.md line shows it: its title and its section's topic."""

    __slots__ = ("body", "key", "read", "title", "topic")

    def __init__(self, key: str, title: str, topic: str) -> None:
        self.key, self.title, self.topic = key, title, topic
        self.body, self.read = "", False  # read only for a close pair


def held_corrections(lessons: Iterable[tuple[str, Comparable]],
                     held: Iterable[tuple[str, str, str]],
                     body: Callable[[str], str] | None = None,
                     marked: dict[str, str] | None = None,
                     retractions: frozenset[str] = frozenset(),
                     before: dict[str, int] | None = None) -> dict[str, str]:
    """{held key: lesson key}: the held facts (key, title, topic: the lines of a MEMORY.md)
    that a lesson (key, lesson) probably corrects: close (`MIN_SCORE`) and changing
    something (`change`). Lessons come newest first; the one that names more of the
    fact's words wins, then the newest, then the closest, as in `conflicts`. `body(key)`
    reads a held fact's body, only for a pair whose titles are close: the pair is then
    scored and judged with it, as the distiller judges it. `marked`: {held key: the title
    its line's mark already shows}: a lesson replaces that mark only if it names as many
    of the fact's words (all of them, when the mark was cut to fit: the distiller chose it
    on its whole words). `retractions`: the keys of lessons that are retractions (they
    correct by saying a fact is gone, never by a value: `change(values=False)`).
    `before`: {held key: its own place among `lessons`} for held facts that are pending
    lessons too: only the lessons before it (newer) may correct it."""
    facts = [_Held(*h) for h in held]
    by_stem: dict[str, list[int]] = {}
    for index, fact in enumerate(facts):
        for stem in stems(fact.title):
            by_stem.setdefault(stem, []).append(index)

    def count(stem: str) -> int:
        return len(by_stem.get(stem, ()))

    found: dict[str, tuple[tuple[float, float, float], str]] = {}
    for fact in facts:
        title = (marked or {}).get(fact.key)
        if title:  # cut to fit its line, a mark's words no longer say all it said
            standing = _Held("", title, fact.topic)
            unsaid = 0.0 if "…" in title else _unsaid(standing, fact, count)
            found[fact.key] = ((-unsaid, float("-inf"), 0.0), "")
    for age, (key, lesson) in enumerate(lessons):
        seen = {i for stem in stems(lesson.title) for i in by_stem.get(stem, ())
                if len(by_stem[stem]) <= MAX_DF}
        for index in seen:
            fact = facts[index]
            if fact.key == key or (before is not None and age >= before.get(fact.key, age + 1)):
                continue
            if _score(lesson, fact) < MIN_SCORE:
                continue  # a title alone scores higher than with its body: a first sieve
            if body is not None and not fact.read:
                fact.body, fact.read = body(fact.key), True
            score = _score(lesson, fact)  # as the distiller scores it, body and all
            if score < MIN_SCORE:
                continue
            if not speaks_of(lesson, fact):
                continue
            rank = (-_unsaid(lesson, fact, count), float(-age), score)
            if (rank > found.get(fact.key, _NONE)[0]
                    and change(lesson, fact, values=key not in retractions) is not None):
                found[fact.key] = (rank, key)
    return {old: new for old, (_, new) in found.items() if new}
