"""Which lesson a flagged fact's line names, and what of its words survive a tight line.

A team's memory holds many facts of one shape ("The search retry limit is Q2252", "The
chat retry limit is Q4283"): several newer lessons are close to one fact, and the line
must name the one that replaces it, with the words that say what changed (the team's
day, bench/bench_team_day.py, is where these rules were found)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from distill_helpers import MEM, memory_md
from helpers import git, jmem

from journal_mem.journal.entry import Entry, render
from journal_mem.journal.render import clip_news

NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)


def put(repo: Path, agent: str, key: str, title: str, body: str, topic: str, *,
        minutes: int = 0, **kw: object) -> Path:
    created = NOW + dt.timedelta(minutes=minutes)
    entry = Entry(agent=agent, key=key, title=title, topic=topic, created=created, body=body,
                  **kw)  # type: ignore[arg-type]
    folder = repo / MEM / agent / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{created.date()}-{key}.md"
    path.write_text(render(entry))
    return path


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A", MEM)
    git(repo, "commit", "-q", "-m", message)


def line_of(text: str, key: str) -> str:
    return next(x for x in text.splitlines() if x.endswith(f"[{key}]"))


def test_a_cut_correction_keeps_what_it_changes() -> None:
    old = "The maps batch size is Q1178 since the upgrade"
    new = "The maps batch size is Q6332 since the upgrade"
    assert "Q6332" in clip_news(new, 30, old) and len(clip_news(new, 30, old)) <= 30
    # no digit: the last word the old fact never says
    cut = clip_news("We switched the package manager to bun for installs in CI", 30,
                    "Use pnpm for installs")
    assert "bun" in cut and cut.startswith("…"), cut
    assert clip_news(new, 80, old) == new  # it fits: whole


def test_the_lesson_about_the_same_subject_wins_over_a_closer_neighbour(repo: Path) -> None:
    """"The chat retry limit is Q4283" reads closer to the search fact (the same body)
    than the real correction does; the line names the correction, and its value."""
    put(repo, "web", "search-limit", "The search retry limit is Q2252",
        "Set in deploy/search.toml; ask the owners first.", "search", minutes=-30,
        applies_to=("api", "web"))
    put(repo, "api", "chat-limit", "The chat retry limit is Q4283",
        "Set in deploy/chat.toml; ask the owners first.", "chat", minutes=-5)
    put(repo, "api", "search-fix", "Search has a retry limit of Q7229",
        "The old value caused timeouts under load.", "search", minutes=-10)
    commit(repo, "lessons")
    assert jmem(repo, "distill").returncode == 0
    line = line_of(memory_md(repo, "web"), "search-limit")
    assert line.startswith("- possibly outdated by [search-fix]: “Search has a retry limit of "
                           "Q7229”"), line


def test_a_later_correction_of_a_correction_is_the_one_named(repo: Path) -> None:
    """Two wordings of one new value came one after the other: the fact's line names the
    newest (it has seen the first), not the first."""
    put(repo, "web", "pool", "The stream pool size is Q2154",
        "Measured on staging last week: Q2154.", "stream", minutes=-60, applies_to=("api",))
    put(repo, "api", "pool-2", "The stream pool size is Q2255",
        "Measured on staging last week: Q2255.", "stream", minutes=-20)  # the closer one
    put(repo, "api", "pool-3", "Stream has a pool size of Q7197 now",
        "We moved stream to Q7197.", "stream", minutes=-10)
    commit(repo, "lessons")
    assert jmem(repo, "distill").returncode == 0
    assert "Q7197" in line_of(memory_md(repo, "api"), "pool")


def test_history_says_which_of_two_facts_is_newer_whatever_the_clocks(repo: Path) -> None:
    """A lesson written by hand with its clock three days behind, committed after
    another agent's fact: it is the newer one. Its words mark the older fact, and the
    older fact never marks it."""
    put(repo, "web", "ttl", "The session cache TTL is 300 seconds",
        "Measured on staging last week.", "cache", minutes=-60, applies_to=("api", "web"))
    commit(repo, "the fact")
    put(repo, "api", "ttl-hand", "The session cache TTL is 900 seconds since the upgrade",
        "Changed in the cache release this morning.", "cache", minutes=-3 * 24 * 60,
        applies_to=("api", "web"))
    commit(repo, "a hand-written correction, its clock behind")
    assert jmem(repo, "distill").returncode == 0
    text = memory_md(repo, "web")
    assert line_of(text, "ttl").startswith("- possibly outdated by [ttl-hand]: "), text
    assert line_of(text, "ttl-hand").startswith("- [The session cache TTL is 900"), text
    assert jmem(repo, "check").returncode == 0


def test_a_retraction_marks_another_wording_of_the_fact_it_retracts(repo: Path) -> None:
    """The fact was reworded by another agent without its key, then retracted by key:
    the rewording's holders see the retraction's words on its line."""
    put(repo, "web", "port", "The upload port is Q1000", "Set in deploy/upload.toml.", "upload",
        minutes=-60)
    put(repo, "api", "port-2", "Upload has a port of Q5485", "We moved upload to Q5485.",
        "upload", minutes=-30, applies_to=("api", "web"))
    put(repo, "web", "port-gone", "The upload port setting is gone",
        "upload no longer has a port.", "upload", minutes=-10, retracts=("port",))
    commit(repo, "lessons")
    assert jmem(repo, "distill").returncode == 0
    text = memory_md(repo, "api")
    assert line_of(text, "port-2").startswith(
        "- possibly outdated by [port-gone]: “The upload port setting is gone”"), text
    assert jmem(repo, "check").returncode == 0
    # a retraction's own value words never mark a fact: "Retracted by hand: Fact 1" is no
    # correction of "Fact 0"
    put(repo, "api", "n0", "Fact number 0 of the queue", "x", "queue", minutes=-50)
    put(repo, "api", "n1", "Fact number 1 of the queue", "y", "queue", minutes=-49)
    put(repo, "api", "n1-gone", "Retracted by hand: Fact number 1 of the queue", "", "queue",
        minutes=-1, retracts=("n1",))
    commit(repo, "more")
    assert jmem(repo, "distill").returncode == 0
    assert line_of(memory_md(repo, "api"), "n0").startswith("- [Fact number 0")


def test_a_pending_correction_with_its_clock_behind_hides_the_fact_it_names(
        repo: Path, worktree: Path) -> None:
    """Both pending, the hand-written supersede's clock three days behind the fact it
    names: the pack already treats the fact as corrected, with the correction's words,
    and the distill agrees."""
    jmem(worktree, "write", "--agent", "web", "--topic", "billing", "--title",
         "The billing retry limit is Q6127", "--applies-to", "api", "--key", "billing-limit",
         "--body", "Measured on staging.")
    put(repo, "api", "hand-fix", "The billing retry limit is Q1139 since the upgrade",
        "Confirmed with the service owners.", "billing", minutes=-3 * 24 * 60,
        supersedes=("billing-limit",))
    pack = jmem(repo, "wake", "--agent", "api").stdout
    assert "do not rely on: billing-limit (superseded by hand-fix" in pack, pack
    assert "Q6127" not in pack.replace("billing-limit", ""), pack
    commit(repo, "lessons")
    assert jmem(repo, "distill").returncode == 0
    text = memory_md(repo, "api")
    assert "Q1139" in text and "[billing-limit]" not in text, text


def test_a_pending_neighbour_does_not_replace_a_better_mark(repo: Path) -> None:
    """The distill marked the fact with its correction; a pending lesson about another
    subject, as close to the fact, leaves the mark as it is in the pack."""
    put(repo, "web", "search-limit", "The search retry limit is Q2252",
        "Set in deploy/search.toml; ask the owners first.", "search", minutes=-30,
        applies_to=("api", "web"))
    put(repo, "api", "search-fix", "Search has a retry limit of Q7229",
        "The old value caused timeouts under load.", "search", minutes=-10)
    commit(repo, "lessons")
    assert jmem(repo, "distill").returncode == 0
    put(repo, "api", "chat-limit", "The chat retry limit is Q4283",
        "Set in deploy/chat.toml; ask the owners first.", "chat", minutes=-1)
    pack = jmem(repo, "wake", "--agent", "web").stdout
    assert line_of(pack, "search-limit").startswith("- possibly outdated by [search-fix]"), pack


def test_a_retraction_marks_a_rewording_that_itself_says_changed(repo: Path) -> None:
    """The rewording says "was changed to" (a change word of its own); the retraction's
    "is gone" still marks it."""
    put(repo, "web", "port", "The auth port is Q1000", "Set in deploy/auth.toml.", "auth",
        minutes=-60)
    put(repo, "web", "port-2", "The auth port was changed to Q3918", "Confirmed.", "auth",
        minutes=-30, applies_to=("api", "web"))
    put(repo, "api", "port-gone", "The auth port setting is gone (Q7001)",
        "auth no longer has a port.", "auth", minutes=-10, retracts=("port",))
    commit(repo, "lessons")
    assert jmem(repo, "distill").returncode == 0
    line = line_of(memory_md(repo, "web"), "port-2")
    assert line.startswith("- possibly outdated by [port-gone]: "), line


def test_of_two_pending_wordings_the_later_written_is_the_newer_whatever_the_clocks(
        repo: Path) -> None:
    """Two agents reword one fact before any distill; the first machine's clock is three
    days ahead. The second lesson was written knowing the first (it was on disk, close to
    it), so the fact's line names the second, with its value."""
    put(repo, "web", "limit", "The maps timeout in ms is Q4080",
        "Measured on staging last week.", "maps", minutes=-600, applies_to=("api", "web"))
    commit(repo, "the fact")
    assert jmem(repo, "distill").returncode == 0
    put(repo, "api", "first", "Maps timeout in ms set to Q5842", "From the dashboards.",
        "project", minutes=3 * 24 * 60)
    proc = jmem(repo, "write", "--agent", "web", "--topic", "project", "--title",
                "Maps timeout in ms set to Q9895", "--body", "After the second rollout.")
    assert proc.returncode == 0, proc.stderr
    text = next(p.read_text() for p in (repo / MEM / "web" / "journal").iterdir()
                if "q9895" in p.name)
    assert "api/journal/" in text.split("knew:", 1)[1].split("\n", 1)[0], text
    pack = jmem(repo, "wake", "--agent", "api").stdout
    assert "Q9895" in line_of(pack, "limit"), pack
    commit(repo, "lessons")
    assert jmem(repo, "distill").returncode == 0
    assert "Q9895" in line_of(memory_md(repo, "api"), "limit")


def test_the_words_of_a_change_are_no_part_of_the_subject(repo: Path) -> None:
    """"was changed to" says what happened to the batch size, not what the fact is about:
    a later lesson on the batch size that does not say "changed" is the one named, not a
    lesson on another setting of the service that happens to say "was changed to"."""
    put(repo, "web", "feeds-batch", "The feeds batch size was changed to Q3105",
        "Confirmed with the service owners.", "feeds", minutes=-30, applies_to=("api",))
    for n, setting in enumerate(("pool size", "retry limit", "port", "queue depth")):
        put(repo, "web", f"feeds-{n}", f"The feeds {setting} is Q{5000 + n}",
            "From the runbook.", "feeds", minutes=-29)
    commit(repo, "facts")
    put(repo, "api", "feeds-batch-new", "Feeds batch size set to Q8496",
        "The old value caused timeouts under load.", "feeds", minutes=-20)
    put(repo, "api", "feeds-timeout", "The feeds timeout in ms was changed to Q5473",
        "Confirmed with the service owners.", "feeds", minutes=-10)
    commit(repo, "corrections")
    assert jmem(repo, "distill").returncode == 0
    line = line_of(memory_md(repo, "web"), "feeds-batch")
    assert line.startswith("- possibly outdated by [feeds-batch-new]: “Feeds batch size set to "
                           "Q8496”"), line


def test_a_retraction_marks_a_wording_that_sets_the_value(repo: Path) -> None:
    """"Mail pool size set to Q6376" is about the pool size: the retraction of the pool
    size names it, not a neighbour that shares "set to" (rarer among the titles than
    "pool", which every service's pool size has)."""
    put(repo, "web", "mail-pool", "The mail pool size is Q1000", "From the runbook.",
        "mail", minutes=-60)
    for n, service in enumerate(("chat", "maps", "feeds", "search", "ledger", "upload")):
        put(repo, "web", f"{service}-pool", f"The {service} pool size is Q{5000 + n}",
            "From the runbook.", service, minutes=-59)
    put(repo, "api", "mail-set", "Mail pool size set to Q6376",
        "The old value caused timeouts under load.", "mail", minutes=-40,
        applies_to=("api", "web"))
    commit(repo, "facts")
    put(repo, "api", "mail-batch", "Mail batch size set to Q4640",
        "The old value caused timeouts under load.", "mail", minutes=-20)
    put(repo, "dee", "mail-gone", "The mail pool size setting is gone (Q7777)",
        "mail no longer has a pool size.", "mail", minutes=-30, retracts=("mail-pool",))
    commit(repo, "corrections")
    assert jmem(repo, "distill").returncode == 0
    line = line_of(memory_md(repo, "web"), "mail-set")
    assert line.startswith("- possibly outdated by [mail-gone]: “The mail pool size setting "
                           "is gone (Q7777)”"), line


def test_a_lesson_of_the_same_shape_about_another_subject_marks_nothing(repo: Path) -> None:
    """Captured memory comes in one shape ("X set to V. Changed in the X release"): two
    such lessons score close on their shared words alone, yet neither names what the
    other is about, so neither marks the other, in the distilled file or in the pack."""
    body = "{0} set to {1}. Changed in the {2} release this morning."
    put(repo, "ben", "maps-port", "Maps port set to Q2332",
        body.format("Maps port", "Q2332", "maps"), "maps", minutes=-30)
    commit(repo, "the maps port")
    put(repo, "cai", "mail-limit", "Mail retry limit set to Q6376",
        body.format("Mail retry limit", "Q6376", "mail"), "mail", minutes=-10)
    proc = jmem(repo, "wake", "--agent", "ben")  # before any distill
    assert proc.returncode == 0 and "possibly outdated" not in proc.stdout, proc.stdout
    commit(repo, "the mail retry limit")
    assert jmem(repo, "distill").returncode == 0
    assert line_of(memory_md(repo, "ben"), "maps-port").startswith(
        "- [Maps port set to Q2332](topics/maps.md"), memory_md(repo, "ben")
    # the same shape about the same subject is still a correction
    put(repo, "cai", "maps-port-2", "Maps port set to Q4410",
        body.format("Maps port", "Q4410", "maps"), "deploy", minutes=-5)
    commit(repo, "the maps port again")
    assert jmem(repo, "distill").returncode == 0
    assert line_of(memory_md(repo, "ben"), "maps-port").startswith(
        "- possibly outdated by [maps-port-2]: “Maps port set to Q4410”"), memory_md(repo, "ben")


def test_since_when_a_value_holds_is_not_its_subject(repo: Path) -> None:
    """"… since the upgrade" says when the value holds: a fact's line names the lesson on
    its pool size, not a neighbour on the retry limit that repeats "since the upgrade"
    (the words a team's pool sizes all share weigh little, a rare qualifier much)."""
    for i, service in enumerate(("chat", "feeds", "maps", "quotes", "ledger")):
        put(repo, "ana", f"{service}-pool", f"The {service} pool size is {10 + i}",
            "Measured on staging.", service, minutes=-90)
    put(repo, "dee", "mail-pool", "The mail pool size is Q1481 since the upgrade",
        "The old value caused timeouts under load.", "mail", minutes=-60,
        applies_to=("ben",))
    commit(repo, "facts")
    put(repo, "cai", "mail-limit", "The mail retry limit is Q6799 since the upgrade",
        "Confirmed with the service owners.", "mail", minutes=-30)
    commit(repo, "the retry limit")
    put(repo, "dee", "mail-pool-2", "Mail has a pool size of Q2557",
        "The old value caused timeouts under load.", "mail", minutes=-10)
    commit(repo, "the pool size again")
    assert jmem(repo, "distill").returncode == 0
    line = line_of(memory_md(repo, "ben"), "mail-pool")
    assert line.startswith("- possibly outdated by [mail-pool-2]: “Mail has a pool size of "
                           "Q2557”"), line


def test_a_lesson_naming_its_own_subject_corrects_no_other_one(repo: Path) -> None:
    """"Maps has a batch size of Q2715", filed under maps, shares "batch size" with the
    quotes fact but names its own subject: it corrects the maps fact, not the quotes
    one; a lesson that does not name its topic in its title may still correct a fact of
    another topic."""
    put(repo, "ana", "quotes-batch", "The quotes batch size is Q7023 now",
        "Measured on staging last week.", "quotes", minutes=-60)
    put(repo, "ana", "maps-batch", "The maps batch size is Q1528",
        "Measured on staging last week.", "maps", minutes=-60)
    put(repo, "ana", "pool", "The Postgres pool size is 20",
        "Connections beyond it queue in pgbouncer.", "database", minutes=-60)
    commit(repo, "facts")
    put(repo, "dee", "maps-batch-2", "Maps has a batch size of Q2715",
        "Measured on staging last week.", "maps", minutes=-10)
    put(repo, "dee", "pool-2", "Postgres pool size bumped to 40 in prod",
        "Connections queued in pgbouncer at peak.", "deploy", minutes=-10)
    commit(repo, "corrections")
    assert jmem(repo, "distill").returncode == 0
    memory = memory_md(repo, "ana")
    assert line_of(memory, "quotes-batch").startswith("- [The quotes batch size"), memory
    assert line_of(memory, "maps-batch").startswith(
        "- possibly outdated by [maps-batch-2]: “Maps has a batch size of Q2715”"), memory
    assert line_of(memory, "pool").startswith("- possibly outdated by [pool-2]"), memory


def test_the_verb_joining_a_subject_to_its_value_is_not_its_subject(repo: Path) -> None:
    """"Maps has a retry limit of Q9775": "has" joins the subject to its value; the newest
    lesson on the maps retry limit is named, whether or not it says "has"."""
    put(repo, "ben", "limit-1", "Maps has a retry limit of Q9775",
        "Changed in the maps release this morning.", "maps", minutes=-60)
    commit(repo, "first")
    put(repo, "ana", "limit-2", "Maps has a retry limit of Q5995",
        "We moved maps to Q5995.", "maps", minutes=-40)
    commit(repo, "second")
    put(repo, "dee", "limit-3", "The maps retry limit is Q6504 now",
        "Changed in the maps release this morning.", "maps", minutes=-20)
    commit(repo, "third")
    assert jmem(repo, "distill").returncode == 0
    assert line_of(memory_md(repo, "ben"), "limit-1").startswith(
        "- possibly outdated by [limit-3]"), memory_md(repo, "ben")
