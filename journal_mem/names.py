"""Names that become path components: agents, topics and keys (docs/DESIGN.md, "Files on disk")."""

from __future__ import annotations

import re

TOPICS = "topics"  # folder of an agent's distilled topic files
MEMORY_MD = "MEMORY.md"  # an agent's distilled index, the file Claude Code loads
NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
TAG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def is_name(value: object) -> bool:
    """True for a valid agent, topic or key name."""
    return isinstance(value, str) and NAME_RE.fullmatch(value) is not None


def slugify(text: str, limit: int = 64) -> str:
    """Lower-case ASCII slug of `text`, cut to `limit` chars on a word boundary."""
    import unicodedata

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _SLUG_DROP.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > limit:
        cut = slug[:limit]
        slug = cut.rsplit("-", 1)[0] if "-" in cut[limit // 2 :] else cut
        slug = slug.strip("-")
    return slug
