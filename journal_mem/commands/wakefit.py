"""The wake-up pack's lines and their fitting to the budget.

Budget cutting drops whole lines, highest rank first (a lower rank survives
longer); a heading goes with the last line of its section. One final line
says what was cut and where to read it. Standard library only: the
SessionStart hook builds a pack on every session start.
"""

from __future__ import annotations

from journal_mem.store.reader import Lesson

# Rank bands: a lower rank survives longer.
HEAD_RANK, QUERY_RANK, PENDING_RANK, MEMORY_RANK = 0, 1_000_000, 2_000_000, 3_000_000


class Line:
    """One line of the pack, with its rank and what cutting it means."""

    __slots__ = ("keys", "kind", "rank", "text")

    def __init__(self, text: str, rank: int, kind: str, keys: tuple[str, ...] = ()) -> None:
        self.text = text
        self.rank = rank
        self.kind = kind
        self.keys = keys


class Pack:
    """A built pack: its text, the keys it carries, and what was cut."""

    __slots__ = ("agent", "corrections", "cut", "held_keys", "keys", "lessons", "news",
                 "offered", "problems", "text")

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.text = ""
        self.keys: list[str] = []
        self.cut: dict[str, int] = {}
        self.lessons: list[Lesson] = []
        self.corrections: dict[str, str] = {}
        self.problems: list[str] = []
        self.offered: list[str] = []  # digests of every candidate line, kept or cut
        self.held_keys: list[str] = []  # keys of those lines
        self.news = 0  # content lines in the text (0: nothing to tell)

    def as_json(self) -> dict[str, object]:
        """The pack for `wake --json`."""
        return {
            "agent": self.agent,
            "text": self.text,
            "keys": self.keys,
            "pending": [{"key": x.key, "title": x.title, "path": x.path,
                         "created": x.created.isoformat() if x.created else None}
                        for x in self.lessons],
            "do_not_rely_on": self.corrections,
            "cut": self.cut,
            "problems": self.problems,
        }

def fit(lines: list[Line], max_chars: int, pack: Pack) -> list[Line]:
    """Drop whole lines, highest rank first, until the pack and its note fit."""
    total = sum(units(line.text) + 1 for line in lines)
    if total <= max_chars:
        return lines
    dropped: set[int] = set()
    counts: dict[str, int] = {}
    order = sorted(range(len(lines)), key=lambda i: lines[i].rank, reverse=True)
    for i in order:
        if total + units(cut_note(counts, pack)) + 1 <= max_chars:
            break
        if lines[i].kind == "heading":
            continue  # a heading goes with the last line of its section, below
        dropped.add(i)
        counts[lines[i].kind] = counts.get(lines[i].kind, 0) + 1
        total -= units(lines[i].text) + 1
    kept = [line for i, line in enumerate(lines) if i not in dropped]
    kept = [line for j, line in enumerate(kept)
            if line.kind != "heading" or (j + 1 < len(kept) and kept[j + 1].kind
                                          not in ("heading", "head"))]
    pack.cut = counts
    return [*kept, Line(cut_note(counts, pack), HEAD_RANK, "note")]


_WHERE = {"memory": "lines of MEMORY.md", "pending": "pending lessons",
          "query": "query facts", "correction": "corrected keys", "head": "header lines",
          "heading": "headings"}


def cut_note(counts: dict[str, int], pack: Pack) -> str:
    """The last line of a cut pack: what was cut, and how to read all of it."""
    parts = [f"{n} {_WHERE[kind]}" for kind, n in sorted(counts.items())] or ["nothing"]
    return (f"[jmem: cut {', '.join(parts)} to fit the budget; read the rest with "
            f"`jmem wake --agent {pack.agent} --max-chars 100000`, or in the main checkout's "
            f"MEMORY.md, topics/ and journal/]")


def units(text: str) -> int:
    """UTF-16 code units: how Claude Code counts its cap (an emoji is 2)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
