"""Which live facts say the same thing in other words: the plan's duplicate clusters.

Pure, standard library only (no model weights: the plan must be rebuilt by CI
from the journal alone). A lesson becomes a bag of concepts: its words
lower-cased, a few phrases joined ("end-to-end", "pull request"), cut by a
small suffix stemmer, and mapped through `SYNONYMS` ("ack" and "acknowledge",
"db" and "database", "never" and "avoid" meet). Two lessons score the cosine
of their tf-idf concept vectors (title words twice), blended with the overlap
of their titles' character trigrams; two lessons that each hold a number the
other lacks ("Node 18" / "Node 20", "3.11" / "3.12") say different things, and
lose most of their score. Pairs at or above `THRESHOLD` are joined by a
union-find; a chain can then pull in a lesson that shares words with one
member only (a distractor: the same words, another claim), so each group is
pruned: while a member's mean score against the others is below `KEEP_FLOOR`,
or below `KEEP_SHARE` of the mean among the others, the weakest is let go.

Tuned on the hand-labelled set fixtures/paraphrases.py only; the figures on it
and on the second set, fixtures/paraphrases_blind.py, written without looking
at the first and never tuned on, are in docs/consolidate.md.

To stay near-linear, a pair is scored only when the two share a concept that
at most `MAX_DF` facts hold (a concept in more says nothing about which lesson
is meant), and each fact is compared with its `MAX_CANDIDATES` best partial
matches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

THRESHOLD = 0.36
KEEP_SHARE = 0.7  # a member whose mean link is below this share of the rest's is let go
KEEP_FLOOR = 0.25  # ...and so is one whose mean link is below this
TRIGRAM_SHARE = 0.1  # of the score that comes from the titles' character trigrams
NUMBER_PENALTY = 0.5  # each side holds a number the other lacks
MAX_DF = 64
MAX_CANDIDATES = 24
TITLE_WEIGHT = 1.5

_WORD = re.compile(r"[a-z0-9]+(?:[.+][a-z0-9]+)*")
_NUMBER = re.compile(r"^\d+(?:\.\d+)*$")
_PHRASES = (
    ("end-to-end", "e2e"), ("pull request", "pr"), ("time out", "timeout"),
    ("times out", "timeout"), ("timed out", "timeout"), ("out of memory", "oom"),
    ("at least once", "atleastonce"), ("at-least-once", "atleastonce"),
    ("daylight saving", "dst"), ("constant time", "consttime"),
    ("constant-time", "consttime"), ("n+1", "nplusone"), ("z-index", "zindex"),
    ("iso-8859-1", "latin1"), ("latin-1", "latin1"), ("utf-8", "utf8"),
    ("node_modules/.cache", "nmcache"), ("re-render", "render"),
    ("command-line", "cli"), ("per row", "perrow"), ("per item", "perrow"),
    ("per object", "perrow"), ("once per", "perrow"),
)
# each phrase with the word it becomes, spaced: made once, not once per text and phrase
_SPACED = tuple((phrase, f" {joined} ") for phrase, joined in _PHRASES)
_STOP = frozenset("""
a an and are as at be been by can could do does did for from had has have how i if in
into is it its of on or our should so than that the their them then there these they
this to was we were what when where which while who why will with you your yours
would up out own all any each every other some such only just also very too more most
one get gets got make makes made use used uses using need needs needed must via
instead rather before after first yourself itself here
""".split())

# concept <- the words that name it (after lower-casing, before stemming)
_GROUPS: dict[str, str] = {
    "ack": "ack acknowledge acknowledged acknowledges acknowledging unacknowledged",
    "database": "db database databases postgres",
    "not": "never not no dont don't avoid forbidden forbid forbids refuse refuses refused "
           "rejects reject without",
    "test": "test tests testing tested",
    "flaky": "flaky unstable unreliable flakiness",
    "retry": "retry retries rerun reruns retried rerunfailures",
    "3": "3 three",
    "2": "2 two twice",
    "float": "float floats floating",
    "money": "money amounts amount",
    "cent": "cent cents",
    "digest": "digest digests sha256",
    "image": "image images container containers",
    "mutable": "mutable repointed moves move mutated",
    "log": "log logs logging logged",
    "secret": "secret secrets credential credentials token tokens cookie cookies "
              "auth authorization bearer",
    "header": "header headers",
    "separator": "separator separators separated delimiter delimiters",
    "semicolon": "semicolon semicolons ;",
    "oom": "oom oomed oom-kills",
    "pod": "pod pods",
    "rank": "rank ranking ranked bm25 scoring score",
    "match": "match matches matching matched",
    "filter": "filter filters filtering narrow",
    "translat": "translated translation translations translate i18n l10n",
    "concat": "concatenate concatenation concatenated gluing glue pieces fragments",
    "placeholder": "placeholder placeholders",
    "order": "order ordered ordering sequence",
    "field": "field fields attribute attributes",
    "document": "document documents doc record records",
    "missing": "missing lack lacks absent",
    "default": "default defaults",
    "alert": "alert alerts page paging pages wake",
    "user": "user users customer customers visible feel",
    "effect": "effect effects useeffect",
    "depend": "dependency dependencies deps",
    "render": "render renders rendering rerender",
    "zone": "zone zones timezone local",
    "consttime": "consttime timing compare_digest",
    "idempot": "idempotent idempotency dedupe duplicate duplicates repeat again",
    "wait": "wait waits waiting sleep sleeps sleeping",
    "prefetch": "prefetch prefetch_related select_related join",
    "query": "query queries queried",
    "backup": "backup backups dump dumps",
    "restore": "restore restores restored restoring",
    "release": "release releases version",
    "pass": "pass passes passing green",
    "fail": "fail fails failing red broken",
    "ci": "ci pipeline",
    "stream": "stream streaming lazily lazy iterate cursor generated",
    "freeze": "freeze frozen seeded seed fix",
    "deploy": "deploy deploys deployed deployment",
    "pr": "pr prs",
    "time": "time times clock timestamp timestamps dates datetime",
    "store": "store stored stores persist persists keep holds hold save saved",
    "handler": "handler handlers job jobs worker workers consumer",
    "deliver": "deliver delivers delivered delivery deliveries redeliver redelivers",
    "list": "list lists array arrays",
    "param": "parameter parameters argument arguments param params",
    "call": "call calls invocation invocations",
    "timeout": "timeout timeouts hang hangs forever indefinitely",
    "encod": "encoding encoded decode decoding unicodedecodeerror",
    "large": "large big huge millions",
}
SYNONYMS: dict[str, str] = {word: concept for concept, words in _GROUPS.items()
                            for word in words.split()}
_SUFFIXES = ("ational", "ations", "ation", "ingly", "ings", "ing", "edly", "ies", "ied",
             "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A word cut to its stem: the longest known suffix off, at most 6 letters kept."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word[:6]


def concepts(text: str) -> list[str]:
    """The concepts of `text`, in order (numbers kept whole, `#` marks them)."""
    return [concept for concept, _ in _worded(text)]


def _worded(text: str) -> list[tuple[str, str]]:
    """(concept, the word it came from) for each concept of `text`, in order."""
    text = text.lower()
    for phrase, spaced in _SPACED:
        text = text.replace(phrase, spaced)
    out = []
    known = _CONCEPT
    for word in _WORD.findall(text):
        concept = known.get(word)
        if concept is None:
            concept = known[word] = _concept(word)
        if concept:
            out.append((concept, word))
    return out


_CONCEPT: dict[str, str] = {}  # word -> its concept ("" for a stop word): 10k lessons
# repeat their words, and a stem costs a dozen `endswith`


def _concept(word: str) -> str:
    if word in _STOP or (len(word) < 2 and not word.isdigit()):
        return ""
    concept = SYNONYMS.get(word)
    if concept is None:
        return "#" + word if _NUMBER.match(word) else stem(word)
    return "#" + concept if concept.isdigit() else concept


EVIDENCE_WORDS = 6


def document_counts(lessons: Sequence[Text]) -> dict[str, int]:
    """Concept -> how many of `lessons` have it (`clusters` fills the same as it goes)."""
    out: dict[str, int] = {}
    for lesson in lessons:
        for concept in set(concepts(f"{lesson.title}\n{lesson.body}")):
            out[concept] = out.get(concept, 0) + 1
    return out


def evidence(lessons: Sequence[Text], group: Sequence[int],
             df: dict[str, int] | None = None) -> list[str]:
    """Why `group` (indexes of `lessons`) reads as one claim: the words (as written, a
    synonym's first spelling) of the concepts that most of its members share, those in
    every member first, then the rarer in `lessons` (`df`: what `clusters` counted, else
    `document_counts`); numbers as they are."""
    seen: list[dict[str, str]] = []
    for index in group:
        lesson = lessons[index]
        words: dict[str, str] = {}
        for concept, word in _worded(f"{lesson.title}\n{lesson.body}"):
            words.setdefault(concept, word)
        seen.append(words)
    count: dict[str, int] = {}
    for words in seen:
        for concept in words:
            count[concept] = count.get(concept, 0) + 1
    need = max(2, (len(group) + 1) // 2)
    shared = [c for c, n in count.items() if n >= need]
    if not shared:
        return []
    rarity = df if df is not None else document_counts(lessons)
    shared.sort(key=lambda c: (-count[c], rarity.get(c, 0), c))
    spelled = {c: next(w[c] for w in seen if c in w) for c in shared[:EVIDENCE_WORDS]}
    return [spelled[c] for c in shared[:EVIDENCE_WORDS]]


def trigrams(title: str) -> frozenset[str]:
    """The character trigrams of a title's letters and digits, words joined by one space."""
    text = " " + " ".join(_WORD.findall(title.lower())) + " "
    return frozenset(text[i:i + 3] for i in range(len(text) - 2))


@dataclass(frozen=True)
class Text:
    """A lesson's words, as the matcher reads them."""

    title: str
    body: str


class _Doc:
    __slots__ = ("grams", "norm", "numbers", "weights")

    def __init__(self, weights: dict[str, float], grams: frozenset[str],
                 numbers: frozenset[str]) -> None:
        self.weights = weights
        self.grams = grams
        self.numbers = numbers
        self.norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0


def _counts(lesson: Text) -> dict[str, float]:
    counts: dict[str, float] = {}
    for concept in concepts(lesson.title):
        counts[concept] = counts.get(concept, 0.0) + TITLE_WEIGHT
    for concept in concepts(lesson.body):
        counts[concept] = counts.get(concept, 0.0) + 1.0
    return counts


def _docs(lessons: Sequence[Text]) -> tuple[list[_Doc], dict[str, list[int]]]:
    counts = [_counts(lesson) for lesson in lessons]
    postings: dict[str, list[int]] = {}
    for index, bag in enumerate(counts):
        for concept in bag:
            postings.setdefault(concept, []).append(index)
    total = len(lessons)
    idf = {c: math.log((1 + total) / (1 + len(p))) + 1.0 for c, p in postings.items()}
    docs = []
    for lesson, bag in zip(lessons, counts, strict=True):
        weights = {c: (1.0 + math.log(n)) * idf[c] for c, n in bag.items()}
        numbers = frozenset(c for c in bag if c.startswith("#"))
        docs.append(_Doc(weights, trigrams(lesson.title), numbers))
    return docs, postings


def _score(a: _Doc, b: _Doc) -> float:
    wa, wb = a.weights, b.weights
    dot = sum(wa[c] * wb[c] for c in wa.keys() & wb.keys())  # the shared concepts only
    cosine = dot / (a.norm * b.norm)
    shared = len(a.grams & b.grams)
    union = len(a.grams) + len(b.grams) - shared
    grams = shared / union if union else 0.0
    score = (1 - TRIGRAM_SHARE) * cosine + TRIGRAM_SHARE * grams
    if a.numbers - b.numbers and b.numbers - a.numbers:
        score *= NUMBER_PENALTY
    return score


def similarity(a: Text, b: Text) -> float:
    """0..1: how surely `a` and `b` say the same thing (idf from the two alone)."""
    docs, _ = _docs([a, b])
    return _score(docs[0], docs[1])


def pairs(lessons: Sequence[Text], threshold: float = THRESHOLD) -> list[tuple[int, int, float]]:
    """(i, j, score) with i < j for every pair of `lessons` at or above `threshold`."""
    docs, postings = _docs(lessons)
    return _pairs(docs, postings, threshold, {})


def _pairs(docs: list[_Doc], postings: dict[str, list[int]], threshold: float,
           scored: dict[tuple[int, int], float]) -> list[tuple[int, int, float]]:
    """`pairs`, keeping every score it computed in `scored` (the pruning reads them)."""
    found = []
    for i, doc in enumerate(docs):
        partial: dict[int, float] = {}
        for concept, weight in doc.weights.items():
            posting = postings[concept]
            if len(posting) > MAX_DF:
                continue
            for j in posting:
                if j > i:
                    partial[j] = partial.get(j, 0.0) + weight * docs[j].weights[concept]
        best = sorted(partial, key=lambda j: -partial[j])[:MAX_CANDIDATES]
        for j in sorted(best):
            score = scored[(i, j)] = _score(doc, docs[j])
            if score >= threshold:
                found.append((i, j, score))
    return found


def clusters(lessons: Sequence[Text], threshold: float = THRESHOLD,
             counts: dict[str, int] | None = None) -> list[list[int]]:
    """Groups of two or more indexes of `lessons` linked by pairs above `threshold`,
    each sorted, the groups ordered by their first index. `counts`, when given, is
    filled with how many lessons have each concept (for `evidence`, at no extra cost)."""
    parent = list(range(len(lessons)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    docs, postings = _docs(lessons)
    if counts is not None:
        counts.update((concept, len(posting)) for concept, posting in postings.items())
    scored: dict[tuple[int, int], float] = {}
    for i, j, _ in _pairs(docs, postings, threshold, scored):
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for index in range(len(lessons)):
        groups.setdefault(find(index), []).append(index)
    kept = (_prune(group, docs, scored) for group in groups.values() if len(group) > 1)
    return sorted((g for g in kept if len(g) > 1), key=lambda g: g[0])


def _prune(group: list[int], docs: list[_Doc],
           scored: dict[tuple[int, int], float]) -> list[int]:
    """`group` without the members that hang on by one link (see the module docstring)."""
    score = {(a, b): scored[(a, b)] if (a, b) in scored else _score(docs[a], docs[b])
             for a in group for b in group if a < b}
    links = dict.fromkeys(group, 0.0)
    for (a, b), value in score.items():
        links[a] += value
        links[b] += value
    total = sum(score.values())
    members = list(group)
    while len(members) > 2:
        n = len(members)
        worst = min(members, key=lambda m: (links[m], m))
        mean = links[worst] / (n - 1)
        rest = (total - links[worst]) / ((n - 1) * (n - 2) / 2)
        if mean >= KEEP_FLOOR and mean >= KEEP_SHARE * rest:
            break
        members.remove(worst)
        total -= links[worst]
        for m in members:
            links[m] -= score[(min(m, worst), max(m, worst))]
    if len(members) == 2 and score[(members[0], members[1])] < THRESHOLD:
        return []
    return sorted(members)
