"""How well `jmem write` names the fact a lesson corrects, on fixtures/corrections.py.

    python bench/bench_related.py

(`rows` gives the same two figures to `bench/run_all.py`.)

recall@3: share of the paraphrased corrections whose right key is among the
(at most three) "related" facts; quiet: share of the unrelated lessons whose
"related" is empty. In-process, on a real repository built by the fixture.
"""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))
from runner import Figure  # noqa: E402

from fixtures.corrections import CORRECTIONS, UNRELATED, build  # noqa: E402
from journal_mem.journal.entry import Entry  # noqa: E402
from journal_mem.lessons.related import related  # noqa: E402
from journal_mem.repo import open_context  # noqa: E402

NOW = dt.datetime(2026, 4, 1, tzinfo=dt.UTC)


def measure(repo: Path) -> tuple[float, float, list[str]]:
    """(recall@3, share of unrelated lessons with no related fact, misses)."""
    ctx = open_context(str(repo))
    hits, misses = 0, []
    for agent, topic, title, body, key in CORRECTIONS:
        found = related(ctx, Entry(agent=agent, topic=topic, title=title, body=body,
                                   created=NOW))
        if key in [r.key for r in found]:
            hits += 1
        else:
            misses.append(f"{key}: {title} -> {[r.key for r in found]}")
    quiet = 0
    for agent, topic, title, body in UNRELATED:
        found = related(ctx, Entry(agent=agent, topic=topic, title=title, body=body,
                                   created=NOW))
        quiet += not found
        if found:
            misses.append(f"(unrelated) {title} -> {[r.key for r in found]}")
    return hits / len(CORRECTIONS), quiet / len(UNRELATED), misses


def measured() -> tuple[float, float, list[str]]:
    """`measure` on a fresh repository built by the fixture."""
    with tempfile.TemporaryDirectory() as tmp:
        return measure(Path(str(build(Path(tmp) / "repo"))))


def rows(runs: int = 1) -> list[Figure]:
    """recall@3 and the quiet share, as figures (one measurement: they do not vary)."""
    recall3, quiet, misses = measured()
    wrong = sum(not m.startswith("(unrelated)") for m in misses)
    return [
        Figure(f"related: recall@3 of {len(CORRECTIONS)} paraphrased corrections "
               f"({wrong} missed)", f"{recall3:.0%}", "–", "–", "–", None),
        Figure(f"related: empty for the {len(UNRELATED)} unrelated lessons",
               f"{quiet:.0%}", "–", "–", "–", None),
    ]


def main() -> None:
    """Print both figures and what was missed."""
    recall3, quiet, misses = measured()
    print(f"recall@3 {recall3:.0%} of {len(CORRECTIONS)} corrections; "
          f"empty related for {quiet:.0%} of {len(UNRELATED)} unrelated lessons")
    for line in misses:
        print("  ", line)


if __name__ == "__main__":
    main()
