"""Key budget: the share of a full MEMORY.md's bytes spent on `[key]` handles.

    python bench/bench_keys.py

(`rows` gives the same figures to `bench/run_all.py`.)

Titles: the 68 hand-written lessons of fixtures/corrections.py and the 15 of
this repository's own journal. A full MEMORY.md needs ~190 fact lines, so the
titles are used again with a service name in front ("billing: …") until the
default budget (200 lines, 25 KB) is full. Keys are the default keys of those
titles (`names.default_key`), against the old rule (the title's slug, up to
64 characters). The figure counts the key and its ` [` `]`.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))
from runner import Figure  # noqa: E402

from fixtures.corrections import CORRECTIONS, FACTS, UNRELATED  # noqa: E402
from journal_mem.journal.fold import Fact  # noqa: E402
from journal_mem.journal.render import render_memory  # noqa: E402
from journal_mem.names import default_key, slugify  # noqa: E402
from journal_mem.schema import Budget  # noqa: E402

SERVICES = ("api", "web", "search", "billing")
RULES = {"old: slug up to 64 chars": lambda t: slugify(t, 64), "new: default_key": default_key}
_KEY = re.compile(r" \[([a-z0-9-]+)\]$")


def titles() -> list[str]:
    """The hand-written titles, then again behind each service name."""
    base = [t for *_, t, _ in FACTS] + [c[2] for c in CORRECTIONS] + [u[2] for u in UNRELATED]
    journal = ROOT / ".claude" / "agent-memory" / "dev" / "journal"
    for path in sorted(journal.glob("*.md")):
        base += [line[2:] for line in path.read_text().splitlines() if line.startswith("# ")]
    return base + [f"{s}: {t}" for s in SERVICES for t in base]


def share(key_of: object) -> tuple[float, float, int, int]:
    """(share of ` [key]`, share of the key alone, fact lines, bytes) of a full MEMORY.md."""
    day = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
    facts = [Fact(key=key_of(t), title=t, body="", topic=f"topic-{i % 8}",  # type: ignore[operator]
                  type="semantic", confidence=0.8, importance="medium", created=day,
                  holders=("api",), path="api/journal/x.md") for i, t in enumerate(titles())]
    text, shown = render_memory("api", facts, Budget())
    found = [m for line in text.splitlines() if (m := _KEY.search(line))]
    size = len(text.encode())
    return (sum(len(m.group(0)) for m in found) / size, sum(len(m.group(1)) for m in found) / size,
            shown, size)


def rows(runs: int = 1) -> list[Figure]:
    """The key share of a full MEMORY.md with the default keys, against the old rule.

    One computation whatever `runs` is: the figure is a count of bytes, it does not vary.
    """
    old_whole, old_bare, _, _ = share(RULES["old: slug up to 64 chars"])
    whole, bare, shown, size = share(RULES["new: default_key"])
    where = f"a full MEMORY.md ({shown} fact lines, {size} bytes)"
    old = "old keys (title slug, ≤ 64 chars)"
    return [
        Figure(f"keys: ' [key]' share of {where}", f"{whole:.1%}", old, f"{old_whole:.1%}",
               "–", None),
        Figure(f"keys: the key alone, share of {where}", f"{bare:.1%}", old, f"{old_bare:.1%}",
               "–", None),
    ]


def main() -> None:
    """Print the figure for the old and the new default keys."""
    for name, rule in RULES.items():
        whole, bare, shown, size = share(rule)
        print(f"{name}: ' [key]' is {whole:.1%}, the key alone {bare:.1%} of {size} bytes "
              f"({shown} fact lines)")


if __name__ == "__main__":
    main()
