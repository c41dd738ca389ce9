"""Memory adopted as the team wrote it: nothing inverted, nothing dropped, nothing mangled.

Our own text, in the shapes public repositories keep agent memory in: a "Do NOT" list
under a heading, a "Never do these:" lead-in, task lists, an ASCII flow with `-->`, a
variable reference beside a real password, a section holding only a code block, and a
heading with nothing under it. Every fact is counted before and after."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import git, jmem

MEMORY = """# Platform memory

## Do NOT do these
- Edit `db/schema.prisma` directly: generate it with `make schema`
- Force-push to the release branch

Never do these:
- Restart the queue workers during a deploy
- Truncate the audit table

## Builds
- [ ] Run the migrations before the integration tests
- [x] Pin **uv** to the version in `.tool-versions`
- Requests flow API --> queue --> worker --> store
- The worker reads its secret from `password: settings.queue.password`
- The staging database is postgresql://svc:Vq7-pR2x-9Lm@db.staging:5432/app

## Example retry loop

```python
for attempt in range(3):
    send()
```

## The cache warms for ten seconds after a deploy
"""

NEGATED = ["Edit `db/schema.prisma` directly", "Force-push to the release branch",
           "Restart the queue workers during a deploy", "Truncate the audit table"]


def _facts(repo: Path) -> list[dict[str, str]]:
    proc = jmem(repo, "export")
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout)["facts"])


def test_a_hand_written_memory_is_adopted_faithfully(repo: Path) -> None:
    folder = repo / ".claude" / "agent-memory" / "platform"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text(MEMORY)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the team's memory")
    proc = jmem(repo, "init", "--agent", "platform", "--no-claude", "--no-git-hooks")
    said = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 0, said
    facts = _facts(repo)
    titles = sorted(f["title"] for f in facts)
    # 11 items and sections in the file; one holds a real password and is refused, named
    assert len(titles) == 10, titles
    assert "line 16: title: password in a URL in the title" in said
    # no fact says the opposite of its source: each negated item keeps its negation
    for item in NEGATED:
        [title] = [t for t in titles if item in t]
        assert title.startswith(("Do NOT do these:", "Never do these:")), title
    assert "Never do these:" not in titles  # the lead-in is part of its items, no fact
    assert "To do: Run the migrations before the integration tests" in titles  # open box
    assert "Pin **uv** to the version in `.tool-versions`" in titles
    assert "Requests flow API --> queue --> worker --> store" in titles
    assert "The worker reads its secret from `password: settings.queue.password`" in titles
    [code] = [f for f in facts if f["title"] == "Example retry loop"]
    assert "for attempt in range(3):" in code["body"]  # the code is the body, never a title
    assert "The cache warms for ten seconds after a deploy" in titles
    # the file still holds the password: a distill refuses until the team takes it out
    assert jmem(repo, "distill").returncode == 1
    memory = folder / "MEMORY.md"
    memory.write_text("\n".join(x for x in MEMORY.split("\n") if "postgresql://" not in x))
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(_facts(repo)) == 10
    hits = jmem(repo, "recall", "may", "I", "edit", "the", "prisma", "schema", "directly",
                "--json")
    assert hits.returncode == 0, hits.stderr
    top = json.loads(hits.stdout)[0]["title"]
    assert top.startswith("Do NOT do these: Edit `db/schema.prisma` directly"), top
