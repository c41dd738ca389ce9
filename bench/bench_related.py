"""How well `jmem write` names the fact a lesson corrects, on fixtures/corrections.py.

    python bench/bench_related.py

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


def main() -> None:
    """Print both figures and what was missed."""
    with tempfile.TemporaryDirectory() as tmp:
        recall3, quiet, misses = measure(Path(str(build(Path(tmp) / "repo"))))
    print(f"recall@3 {recall3:.0%} of {len(CORRECTIONS)} corrections; "
          f"empty related for {quiet:.0%} of {len(UNRELATED)} unrelated lessons")
    for line in misses:
        print("  ", line)


if __name__ == "__main__":
    main()
