"""Names that become path components: agents, topics and keys (docs/DESIGN.md, "Files on disk")."""

from __future__ import annotations

import functools
import re

from journal_mem import hashes

TOPICS = "topics"  # folder of an agent's distilled topic files
MEMORY_MD = "MEMORY.md"  # an agent's distilled index, the file Claude Code loads
NAME = r"[a-z0-9][a-z0-9-]{0,63}"  # agents, topics and keys (Claude Code's agent names)
NAME_PATTERN = f"^{NAME}$"
NAME_RE = re.compile(NAME)
# A journal entry's file name: `write` makes `<date>-<slug>-<suffix>.md`, a hand may write any
# name that starts with the date.
ENTRY_NAME_RE = re.compile(r"(\d{4}-\d{2}-\d{2})-[^/]*\.md")
KEY_CHARS = 24  # longest default key: keys are read on every MEMORY.md line
WHOLE_SLUG_CHARS = 12  # a lossless slug this short is the key itself
KEY_PREFIX_CHARS = 8  # else: words up to this long, then a hash of the title
KEY_HASH_CHARS = 4
_STOPWORDS = frozenset(
    "a an the is are was be been of to in on at by for from with and or it its this that "
    "as into than then when".split()
)


def is_name(value: object) -> bool:
    """True for a valid agent, topic or key name."""
    return isinstance(value, str) and NAME_RE.fullmatch(value) is not None


def _nfkd(text: str, *, marks: bool) -> str:
    """`text` decomposed (NFKD), without its combining marks unless `marks`. Imports
    unicodedata only when a name is made, never when one is checked (every hook)."""
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text)
    return decomposed if marks else "".join(c for c in decomposed
                                            if not unicodedata.combining(c))


def not_a_name(value: str) -> str:
    """Why `value` is not a valid agent, topic or key name, with the name it may mean.
    Names are lower-case: two that differ only by case would be one folder or file on
    a case-insensitive file system (macOS and Windows by default)."""
    why = f"{value!r} is not a valid name ({NAME_PATTERN})"
    if is_name(value.lower()):
        return (f"{why}: names are lower-case, so that no two can share a folder on a "
                f"case-insensitive file system (macOS, Windows); use {value.lower()!r}")
    return why


# Compiled on first use: every hot path imports this module, and only `write`, the
# importers and key making use these (~0.25 ms of each start, compiled at import).
@functools.cache
def tag_re() -> re.Pattern[str]:
    """What a tag is made of."""
    return re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


@functools.cache
def _slug_drop() -> re.Pattern[str]:
    return re.compile(r"[^a-z0-9]+")


@functools.cache
def _harmless() -> re.Pattern[str]:
    """What a slug keeps or may drop without changing the meaning: letters, digits,
    spaces and plain punctuation. Anything else (`+`, `#`, `=`, `<`, letters outside
    ASCII) is lost."""
    return re.compile(r"[A-Za-z0-9\s.,:;!?'\"()/_-]")


def slugify(text: str, limit: int = 64) -> str:
    """Lower-case ASCII slug of `text`, cut to `limit` chars on a word boundary."""
    ascii_text = _nfkd(text, marks=True).encode("ascii", "ignore").decode()
    slug = _slug_drop().sub("-", ascii_text.lower()).strip("-")
    if len(slug) > limit:
        cut = slug[:limit]
        slug = cut.rsplit("-", 1)[0] if "-" in cut[limit // 2 :] else cut
        slug = slug.strip("-")
    return slug


TOPIC_MAX = 32  # a topic named from a heading: its MEMORY.md heading and file stay short
# words a heading can lose and keep its subject (never a negation: "do-not-do-these")
_FILLER = frozenset("a an the and or of to in on for with about we our us how what when "
                    "which that this these those is are be by from at as it its".split())


def topic_slug(heading: str) -> str:
    """A short topic name for a section heading: its slug without filler words, whole
    words up to `TOPIC_MAX` characters ("Deployment and the things we learned about
    releasing" → "deployment-things-learned"); "" when no word is left."""
    words = [w for w in slugify(heading, 10_000).split("-") if w]
    kept = [w for w in words if w not in _FILLER] or words
    out = ""
    for word in kept:
        joined = f"{out}-{word}" if out else word
        if len(joined) > TOPIC_MAX:
            break
        out = joined
    return out or slugify(kept[0], TOPIC_MAX) if kept else ""


def default_key(title: str) -> str:
    """The key of a lesson that names none: short (<= 24 chars), readable and stable.

    A short title whose slug keeps every word is its own key ("use-pytest").
    Otherwise the first meaningful words (at most 8 characters) and 4 hex digits
    of the title's hash: "journal-7fa2". The hash keeps apart titles the slug
    would merge ("C++" / "C#", Russian text, "=== not =="), and titles that
    share their first words; `write` refuses the rare key that still collides.
    Keys are read on every MEMORY.md line: with these, the keys of a full
    MEMORY.md are 13% of its bytes (44% with whole-title slugs; bench/bench_keys.py).
    """
    folded = _nfkd(title, marks=False)
    slug = slugify(folded, 10_000)
    lossy = _harmless().sub("", folded) != ""
    if slug and not lossy and len(slug) <= WHOLE_SLUG_CHARS:
        return slug
    digest = hashes.sha256(" ".join(title.casefold().split()).encode()).hexdigest()
    words = [w for w in slug.split("-") if w and w not in _STOPWORDS] or slug.split("-")
    prefix = ""
    for word in words:
        joined = f"{prefix}-{word}" if prefix else word
        if len(joined) > KEY_PREFIX_CHARS:
            prefix = prefix or word[:KEY_PREFIX_CHARS]
            break
        prefix = joined
    prefix = prefix.strip("-")
    if not prefix:
        return "k-" + digest[: KEY_HASH_CHARS + 3]
    return f"{prefix}-{digest[:KEY_HASH_CHARS]}"


LESSON_TYPES = ("principle", "semantic", "procedural", "episodic", "reflective")  # a lesson's type
