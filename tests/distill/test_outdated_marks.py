"""Probable corrections reach every holder on the fact's own line: every flagged fact of
an agent's MEMORY.md says "possibly outdated by [KEY]: “…”", however many there are (the
section at the top shows five); a hand edit never reads the mark as content."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from distill_helpers import MEM, memory_md
from helpers import jmem, journal_files

from journal_mem.journal.entry import Entry, render

SERVICES = ["billing", "search", "auth", "media", "mail", "maps", "chat", "feeds"]


def write(repo: Path, agent: str, key: str, title: str, hours: int, **kw: object) -> None:
    created = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(hours=hours)
    entry = Entry(agent=agent, key=key, title=title, topic="deploy", created=created,
                  body=f"{title}.", **kw)  # type: ignore[arg-type]
    folder = repo / MEM / agent / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{created.date()}-{key}.md").write_text(render(entry))


def test_every_flagged_fact_is_marked_on_its_own_line(repo: Path) -> None:
    for n, name in enumerate(SERVICES):
        write(repo, "web", f"old-{name}", f"The {name} service deploys from the main branch",
              48, applies_to=("api", "web"))
        write(repo, "api", f"new-{name}", f"The {name} service deploys from the release branch, "
              "not main", n + 1)
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = memory_md(repo, "web")
    for name in SERVICES:
        line = next(x for x in text.splitlines() if x.endswith(f"[old-{name}]"))
        assert line.startswith(f"- possibly outdated by [new-{name}]: “The {name} service "
                               "deploys from the release branch"), line
    assert "… and 3 more" in text  # the section keeps its cap; the lines do not
    entries = journal_files(repo, "web")
    again = jmem(repo, "distill")  # its own marks are no hand edit
    assert again.returncode == 0 and journal_files(repo, "web") == entries
    settle = jmem(repo, "write", "--agent", "web", "--topic", "deploy", "--title",
                  "The billing service deploys from the release branch now",
                  "--supersedes", "old-billing")
    assert settle.returncode == 0, settle.stderr
    assert jmem(repo, "distill").returncode == 0
    assert "by [new-billing]" not in memory_md(repo, "web")
    assert jmem(repo, "check").returncode == 0


def test_a_tight_line_cuts_the_old_title_before_the_correction_s_words() -> None:
    from journal_mem.journal.fold import Fact
    from journal_mem.journal.render import MIN_OLD_TITLE, fact_line

    old = Fact(key="old-ttl", title="Access tokens of the driver app live fifteen minutes and "
               "are renewed by the refresh token", body="", topic="auth", type="semantic",
               confidence=0.8, importance="medium",
               created=dt.datetime(2026, 1, 1, tzinfo=dt.UTC), holders=("api",),
               path="api/journal/x.md")
    newer = ("new-ttl", "Driver app access tokens live an hour now")
    # cut, the correction's words keep what it changes ("an hour"), not its first words
    for width, said in ((150, "Driver app access tokens live an hour now” — was: [Access"),
                        (120, "…app access tokens live an hour now” — was: [Access")):
        line = fact_line(old, width, False, "auth#access-tokens", newer)
        assert line is not None and len(line) <= width, (width, line)
        assert line.startswith("- possibly outdated by [new-ttl]: “" + said), (width, line)
        assert line.endswith("[old-ttl]")
        was = line.split("— was: [", 1)[1]
        assert len(was.split("](", 1)[0]) >= MIN_OLD_TITLE, line  # the old title cut first
    whole = fact_line(old._replace(title="Access tokens live 15 minutes"), 150,
                      False, "auth#access-tokens", newer)
    assert whole is not None and "— was: [Access tokens live 15 minutes](" in whole, whole
    narrow = fact_line(old, 90, False, "auth#access-tokens", newer)
    # narrower still, what it changes is all that is left of its words
    assert narrow is not None and len(narrow) <= 90 and "by [new-ttl]: “…an hour…”" in narrow
    tiny = fact_line(old, 60, False, "auth#access-tokens", newer)  # no room for the words
    assert tiny is not None and tiny.startswith("- possibly outdated by [new-ttl]: Access"), tiny
