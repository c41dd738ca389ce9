"""One agent cannot rewrite another's facts by editing its own memory: a deleted line drops
only that agent as a holder, and the one-third limit counts an agent's files together."""

from __future__ import annotations

from pathlib import Path

from distill_helpers import MEM, lesson, memory_md
from helpers import jmem


def distill(repo: Path) -> None:
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_deleting_a_shared_facts_line_drops_only_that_agent(repo: Path) -> None:
    lesson(repo, "web", "shared", applies_to=("api", "web"), title="CDN purge takes an hour")
    distill(repo)
    path = repo / MEM / "api" / "MEMORY.md"
    text = path.read_text()
    line = next(x for x in text.splitlines() if "[shared]" in x)
    path.write_text(text.replace(line + "\n", ""))
    distill(repo)
    assert "[shared]" not in memory_md(repo, "api")
    assert "[shared]" in memory_md(repo, "web")  # the writer still holds it
    found = jmem(repo, "recall", "CDN purge", "--agent", "web")
    assert "CDN purge takes an hour" in found.stdout
    # The writer deleting its own line retracts it for everyone.
    path = repo / MEM / "web" / "MEMORY.md"
    text = path.read_text()
    line = next(x for x in text.splitlines() if "[shared]" in x)
    path.write_text(text.replace(line + "\n", ""))
    distill(repo)
    assert "[shared]" not in memory_md(repo, "web")


def test_deletions_split_across_an_agents_files_count_together(repo: Path) -> None:
    for n in range(6):
        lesson(repo, "api", f"f{n}", n, title=f"Fact number {n} about builds", topic="builds")
    distill(repo)
    memory = repo / MEM / "api" / "MEMORY.md"
    text = memory.read_text()
    for key in ("f0", "f1"):
        line = next(x for x in text.splitlines() if f"[{key}]" in x)
        text = text.replace(line + "\n", "")
    memory.write_text(text)
    topic = repo / MEM / "api" / "topics" / "builds.md"
    sections = topic.read_text().split("\n## ")
    kept = [s for s in sections if "key `f2`" not in s and "key `f3`" not in s]
    topic.write_text("\n## ".join(kept))
    proc = jmem(repo, "distill")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "deletes 4 of its 6 facts across its files" in proc.stderr
    assert all(f"[f{n}]" in memory_md(repo, "api") or n in (0, 1) for n in range(6))
