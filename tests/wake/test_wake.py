"""`jmem wake`: the pack from the main checkout, pending lessons, corrections, budget, query."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import base_env, jmem

from journal_mem.names import default_key

MEM = Path(".claude/agent-memory")


def write_memory(root: Path, agent: str, lines: list[str]) -> Path:
    path = root / MEM / agent / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def lesson(cwd: Path, agent: str, title: str, *extra: str) -> str:
    proc = jmem(cwd, "write", "--agent", agent, "--topic", "testing", "--title", title,
                "--body", "detail", *extra)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_worktree_pack_shows_main_memory_pending_lesson_and_not_corrected_fact(
        repo: Path, worktree: Path) -> None:
    write_memory(worktree, "api", ["# api memory (old)", "- Older fact [older-fact]"])
    write_memory(repo, "api", ["# api memory", "- Newer fact [newer-fact]",
                               "- Tests may run in random order [random-order]"])
    lesson(worktree, "api", "Run the API tests with -p no:randomly",
           "--supersedes", "random-order")

    proc = jmem(worktree, "wake", "--agent", "api")

    assert proc.returncode == 0, proc.stderr
    assert "- Newer fact [newer-fact]" in proc.stdout
    assert "Older fact" not in proc.stdout
    assert "Run the API tests with -p no:randomly" in proc.stdout
    assert "Tests may run in random order" not in proc.stdout
    new_key = default_key("Run the API tests with -p no:randomly")  # listed: its key names it
    assert f"do not rely on: random-order (superseded by {new_key})" in proc.stdout
    # order: MEMORY.md, then pending lessons, then corrections
    text = proc.stdout
    assert text.index("Newer fact") < text.index("-p no:randomly") < text.index("do not rely")


def test_folded_lessons_are_not_pending_and_newest_comes_first(repo: Path) -> None:
    first = lesson(repo, "api", "First lesson")
    lesson(repo, "api", "Second lesson")
    lesson(repo, "api", "Third lesson")
    state = {"schema": 1, "date": "2026-01-01",
             "folded": [str(Path(first).relative_to(repo / MEM))]}
    (repo / MEM / "distill-state.json").write_text(json.dumps(state))

    text = jmem(repo, "wake", "--agent", "api").stdout

    assert "First lesson" not in text
    assert text.index("Third lesson") < text.index("Second lesson")


def test_lessons_of_other_agents_only_when_they_apply(repo: Path) -> None:
    lesson(repo, "web", "Only for web")
    lesson(repo, "web", "For everyone", "--applies-to", "all")
    text = jmem(repo, "wake", "--agent", "api").stdout
    assert "For everyone" in text
    assert "Only for web" not in text


def test_outbox_lessons_are_pending(repo: Path, worktree: Path) -> None:
    lesson(worktree, "api", "Sandboxed lesson", "--outbox")
    assert "Sandboxed lesson" in jmem(worktree, "wake", "--agent", "api").stdout


def test_budget_cuts_whole_lines_lowest_ranked_first(repo: Path) -> None:
    memory = ["# api memory"] + [f"- Fact number {i:03d} about something [fact-{i:03d}]"
                                 for i in range(300)]
    write_memory(repo, "api", memory)
    lesson(repo, "api", "A pending lesson that must survive", "--supersedes", "gone-key")

    text = jmem(repo, "wake", "--agent", "api", "--max-chars", "2000").stdout

    assert len(text) <= 2000
    lines = text.rstrip("\n").split("\n")
    assert lines[-1].startswith("[jmem: cut ") and "lines of MEMORY.md" in lines[-1]
    assert "- Fact number 000 about something [fact-000]" in lines
    assert "- Fact number 299 about something [fact-299]" not in lines
    assert "A pending lesson that must survive" in text
    assert "do not rely on: gone-key" in text
    for line in lines:
        if line.startswith("- Fact"):
            assert line in memory  # never cut mid-line


def test_budget_cuts_oldest_pending_lessons_after_memory(repo: Path) -> None:
    write_memory(repo, "api", ["- Memory line [m]"])
    for i in range(30):
        lesson(repo, "api", f"Pending lesson {i:02d} " + "x" * 60)
    text = jmem(repo, "wake", "--agent", "api", "--max-chars", "1500").stdout
    assert len(text) <= 1500
    assert "Memory line" not in text
    assert "Pending lesson 29" in text
    assert "Pending lesson 00" not in text
    assert "pending lessons" in text.rstrip("\n").split("\n")[-1]


def test_query_adds_best_matching_facts_above_min_confidence(repo: Path) -> None:
    for args in (
        ["--key", "run-the-api-tests", "--title", "Run the API tests with -p no:randomly",
         "--body", "They share one database fixture; random order makes them flaky."],
        ["--key", "flaky-guess", "--type", "procedural", "--confidence", "0.6",
         "--title", "Flaky tests come from shared fixtures", "--body", "A guess."],
        ["--key", "deploys-need-a-tag", "--title", "Deploys need a tag", "--topic", "ops"],
        ["--key", "web-only", "--agent", "web", "--title", "Flaky web tests need a retry"],
    ):
        agent = [] if "--agent" in args else ["--agent", "api"]
        topic = [] if "--topic" in args else ["--topic", "testing"]
        assert jmem(repo, "write", *agent, *topic, *args).returncode == 0

    text = jmem(repo, "wake", "--agent", "api", "--query", "why are the API tests flaky").stdout

    assert "## Facts for: why are the API tests flaky" in text
    assert ("- Run the API tests with -p no:randomly [run-the-api-tests]: They share one "
            "database fixture; random order makes them flaky. (.claude/agent-memory/api/"
            "journal/") in text
    assert "Flaky tests come from shared fixtures" not in text.split("## Facts for")[1]
    assert "Deploys need a tag" not in text.split("## Facts for")[1]  # no word in common
    assert "Flaky web tests" not in text  # web's fact, not api's
    low = jmem(repo, "wake", "--agent", "api", "--query", "flaky tests",
               "--min-confidence", "0.5").stdout
    assert "Flaky tests come from shared fixtures [flaky-guess]" in low


def test_json_and_unknown_agent(repo: Path) -> None:
    lesson(repo, "api", "A lesson")
    data = json.loads(jmem(repo, "wake", "--agent", "api", "--json").stdout)
    assert data["agent"] == "api"
    assert [p["title"] for p in data["pending"]] == ["A lesson"]
    assert "a-lesson" in data["keys"]
    proc = jmem(repo, "wake", "--agent", "nobody")
    assert proc.returncode == 1
    assert "no memory for agent 'nobody'" in proc.stderr


def test_wake_records_only_the_keys_of_fact_lines(repo: Path) -> None:
    """The header's "KEY is in [brackets]" and brackets inside a title are not keys."""
    lesson(repo, "api", "Use list[int] in the [typing] docs", "--key", "typing-docs")
    assert jmem(repo, "distill").returncode == 0
    memory = (repo / MEM / "api" / "MEMORY.md").read_text()
    assert "KEY is in [brackets]" in memory
    data = json.loads(jmem(repo, "wake", "--agent", "api", "--json").stdout)
    assert data["keys"] == ["typing-docs"]


# --- the pack shows exactly what the next distill would fold ---------------------


def hand_entry(repo: Path, agent: str, name: str, text: str) -> Path:
    path = repo / MEM / agent / "journal" / name
    path.write_text(text, encoding="utf-8")
    return path


def hook_pack(cwd: Path, agent: str) -> str:
    proc = jmem(cwd, "wake", "--hook", "claude", "--agent", agent,
                stdin='{"hook_event_name": "SessionStart"}')
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def test_non_ascii_titles_get_distinct_keys_and_both_show(repo: Path) -> None:
    # hand-written entries name no key: it comes from the title
    hand_entry(repo, "api", "2026-03-01-de.md",
               "---\nagent: api\ntopic: testing\n---\n\n# 测试在夜间运行\n")
    hand_entry(repo, "api", "2026-03-02-ru.md",
               "---\nagent: api\ntopic: testing\n---\n\n# Тесты запускаются ночью\n")
    for text in (jmem(repo, "wake", "--agent", "api").stdout, hook_pack(repo, "api")):
        assert "测试在夜间运行" in text
        assert "Тесты запускаются ночью" in text
        assert "[]" not in text  # every pending lesson shows its real key


def test_entry_distill_rejects_is_named_invalid_and_never_applied(repo: Path) -> None:
    write_memory(repo, "api", ["# api memory", "- Tests may run in random order [random-order]"])
    hand_entry(repo, "api", "2026-03-01-bad.md",
               "---\nagent: api\ntopic: testing\nsupersedes: [random-order]\npriority: high\n"
               "confidence: lots\n---\n\n# Run tests in a fixed order\n")
    distill = jmem(repo, "distill", "--dry-run")
    assert distill.returncode == 1 and "2026-03-01-bad.md" in distill.stdout + distill.stderr
    for text in (jmem(repo, "wake", "--agent", "api").stdout, hook_pack(repo, "api")):
        assert "- Tests may run in random order [random-order]" in text
        assert "Run tests in a fixed order" not in text
        assert "do not rely on: random-order" not in text
        assert "2026-03-01-bad.md" in text and "unknown field" in text


def test_a_body_line_of_dashes_does_not_change_the_title(repo: Path) -> None:
    hand_entry(repo, "api", "2026-03-02-dashes.md",
               "---\nagent: api\ntopic: testing\n---\n\n# The real title\n\nAbove.\n\n---\n\n"
               "# Not a title\n")
    for text in (jmem(repo, "wake", "--agent", "api").stdout, hook_pack(repo, "api")):
        assert f"- The real title [{default_key('The real title')}]" in text
        assert "Not a title" not in text


def test_hook_reads_unchanged_entries_from_the_cache_without_the_parser(repo: Path) -> None:
    lesson(repo, "api", "A cached lesson")
    # single quotes are not the shape `jmem` writes: this one needs PyYAML (the lesson
    # written by `jmem` does not: `frontmatter.simple`)
    hand_entry(repo, "api", "2026-03-01-bad.md",
               "---\nagent: api\nnope: 'x y'\n---\n\n# Bad\n")
    code = ("import io, sys; from journal_mem import main; "
            "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"hook_event_name\": \"SessionStart\"}'));"
            "main.main(['wake', '--hook', 'claude', '--agent', 'api']);"
            "print('LOADED', sorted({'yaml', 'journal_mem.journal.entry'} & set(sys.modules)))")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=repo, env=base_env(),
                           capture_output=True, text=True, check=True).stdout
            for _ in range(2)]
    assert "LOADED ['journal_mem.journal.entry', 'yaml']" in runs[0]  # judged once
    assert "LOADED []" in runs[1]  # then read from the cache: standard library only
    for out in runs:
        assert "A cached lesson" in out and "2026-03-01-bad.md" in out


def test_the_first_hook_after_a_write_finds_the_lesson_judged(repo: Path) -> None:
    """`jmem write` (and every other way in) judges what it filed into the hooks' cache:
    the next agent's wake-up, in a worktree or not, imports no parser for it."""
    lesson(repo, "api", "An earlier lesson")
    code = ("import io, sys; from journal_mem import main; "
            "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"hook_event_name\": \"SessionStart\"}'));"
            "main.main(['wake', '--hook', 'claude', '--agent', 'api']);"
            "print('LOADED', sorted({'yaml', 'journal_mem.journal.entry'} & set(sys.modules)))")
    for title in ("A lesson filed just now", "Another lesson \u2014 with a dash"):
        lesson(repo, "web", title, "--applies-to", "api")
        out = subprocess.run([sys.executable, "-c", code], cwd=repo, env=base_env(),
                             capture_output=True, text=True, check=True).stdout
        assert "LOADED []" in out and title in out and "An earlier lesson" in out


def test_a_teammates_correction_for_other_agents_comes_with_its_words(repo: Path) -> None:
    """A pending `--supersedes` written for another agent is not in this holder's list of
    lessons: its "do not rely on" line carries the correction's title, or the holder is
    told a fact is wrong without what replaces it."""
    write_memory(repo, "api", ["# api memory", "- The cache listens on 6380 [cache-port]"])
    lesson(repo, "web", "The cache moved to port 6390", "--supersedes", "cache-port")
    lesson(repo, "web", "The old queue is gone", "--retracts", "old-queue")
    proc = jmem(repo, "wake", "--agent", "api")
    assert proc.returncode == 0, proc.stderr
    new_key = default_key("The cache moved to port 6390")
    assert (f"do not rely on: cache-port (superseded by {new_key}: The cache moved to port "
            "6390)") in proc.stdout
    assert "6380" not in proc.stdout
    assert proc.stdout.count("The cache moved to port 6390") == 1
    assert f"do not rely on: old-queue (retracted by {default_key('The old queue is gone')}: " \
        "The old queue is gone)" in proc.stdout


def test_a_pending_lesson_corrected_by_a_newer_pending_one_shows_its_words(
        repo: Path) -> None:
    """Before any distill, a lesson another agent corrects in other words (no key named)
    is listed to its holder with the correction's words, as the next distill marks it;
    an older lesson never marks a newer one, and an agreement marks nothing."""
    lesson(repo, "api", "The search pool size was changed to 12", "--applies-to", "web")
    lesson(repo, "web", "The search pool size is 12 now, as api found")  # agrees
    proc = jmem(repo, "wake", "--agent", "api")
    assert proc.returncode == 0, proc.stderr
    assert "possibly outdated" not in proc.stdout, proc.stdout
    lesson(repo, "web", "Search pool size set to 40 after the load test")
    for agent in ("api", "web"):
        proc = jmem(repo, "wake", "--agent", agent)
        assert proc.returncode == 0, proc.stderr
        key = default_key("Search pool size set to 40 after the load test")
        assert (f"- possibly outdated by [{key}]: “Search pool size set to 40 after the load "
                "test” — was: The search pool size was changed to 12 [") in proc.stdout, \
            proc.stdout
    newest = [x for x in proc.stdout.splitlines() if x.startswith("- Search pool size set")]
    assert len(newest) == 1, proc.stdout  # web's own lesson, listed unmarked


def test_a_distilled_mark_on_a_cut_line_follows_its_lesson_not_a_neighbour(
        repo: Path) -> None:
    """A fact whose line is cut to fit beside its mark is judged by its whole title, so a
    pending lesson on a neighbouring subject does not replace the right mark; and a mark
    quoting a lesson restated since (same key) quotes the newer words; once that lesson is
    retracted, the line shows the fact alone, its whole title again."""
    fact = ("The search retry limit for the nightly reindex of every customer catalogue "
            "is 7472 now")
    lesson(repo, "api", fact, "--key", "search-limit", "--topic", "search")
    lesson(repo, "web", "Search retry limit for the nightly reindex set to 1137",
           "--key", "search-limit-new", "--topic", "search")
    assert jmem(repo, "distill").returncode == 0
    memory = (repo / MEM / "api" / "MEMORY.md").read_text()
    marked = [x for x in memory.splitlines() if x.endswith("[search-limit]")]
    assert len(marked) == 1 and "[search-limit-new]" in marked[0], memory
    assert "](topics/search.md)" in marked[0] and "…" in marked[0].split(" — was: ")[1], \
        marked  # the title cut to fit
    lesson(repo, "api", "The search port was changed to 8460", "--topic", "search")
    proc = jmem(repo, "wake", "--agent", "api")
    assert proc.returncode == 0, proc.stderr
    line = [x for x in proc.stdout.splitlines() if x.endswith("[search-limit]")]
    assert line and "by [search-limit-new]: “" in line[0] and "1137”" in line[0], proc.stdout
    lesson(repo, "web", "Search retry limit for the nightly reindex set to 1190",
           "--key", "search-limit-new", "--topic", "search")
    proc = jmem(repo, "wake", "--agent", "api")
    memory_part = proc.stdout.split("## Lessons since the last distill")[0]
    line = [x for x in memory_part.splitlines() if x.endswith("[search-limit]")]
    assert line and "1190" in line[0] and "1137" not in memory_part, proc.stdout
    assert "— see the newer lesson by web (search-limit-new): Search retry limit for the " \
        "nightly reindex set to 1190" in memory_part, proc.stdout
    lesson(repo, "web", "Retract the reindex retry limit lesson", "--retracts",
           "search-limit-new", "--topic", "search")
    proc = jmem(repo, "wake", "--agent", "api")
    memory_part = proc.stdout.split("## Lessons since the last distill")[0]
    assert f"- [{fact}](topics/search.md) [search-limit]" in memory_part, proc.stdout
    assert "search-limit-new" not in memory_part, proc.stdout


def test_a_cut_distilled_mark_gives_way_only_to_a_lesson_saying_the_whole_subject(
        repo: Path) -> None:
    """A mark cut to fit its line shows only the end of the correction's words ("…batch
    size was changed to 6400", without "quotes"): a pending supersede of a neighbouring
    fact that names "quotes" does not replace what the distiller chose on the whole
    words."""
    config = repo / ".claude" / "journal-mem.toml"
    config.write_text(config.read_text().replace("# line_chars = 150", "line_chars = 138"))
    for service in ("chat", "maps", "mail", "feeds", "media", "auth"):
        lesson(repo, "api", f"The {service} batch size is 40", "--topic", service)
    lesson(repo, "api", "The quotes batch size is 6547", "--key", "batch", "--topic", "quotes")
    lesson(repo, "api", "The quotes pool size is 1874", "--key", "pool", "--topic", "quotes")
    lesson(repo, "web", "The quotes batch size was changed to 6400", "--key", "batch-new",
           "--topic", "quotes")
    assert jmem(repo, "distill").returncode == 0
    memory = (repo / MEM / "api" / "MEMORY.md").read_text()
    marked = next(x for x in memory.splitlines() if x.endswith("[batch]"))
    assert marked.startswith("- possibly outdated by [batch-new]: “…batch size"), memory
    lesson(repo, "web", "The quotes pool size is 5628 now", "--supersedes", "pool",
           "--topic", "quotes")
    proc = jmem(repo, "wake", "--agent", "api")
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.endswith("[batch]"))
    assert line == marked, proc.stdout


def test_a_superseded_fact_is_told_with_the_newest_words_that_replace_it(
        repo: Path) -> None:
    """A fact superseded since the last distill leaves the pack, its "possibly outdated"
    summary line too; its "do not rely on" line names the superseding lesson and, when a
    newer pending lesson probably corrects that one in turn, that lesson's words."""
    lesson(repo, "api", "The billing retry limit is 7802", "--key", "limit", "--topic",
           "billing")
    lesson(repo, "web", "Billing retry limit set to 8411", "--key", "limit-web", "--topic",
           "billing")
    assert jmem(repo, "distill").returncode == 0
    memory = (repo / MEM / "api" / "MEMORY.md").read_text()
    assert "- possibly outdated: [limit] — see the newer lesson by web (limit-web)" in memory
    lesson(repo, "web", "The billing retry limit is 4957 now", "--supersedes", "limit",
           "--topic", "billing")
    lesson(repo, "web", "The billing retry limit was changed to 6648", "--topic", "billing")
    proc = jmem(repo, "wake", "--agent", "api")
    assert proc.returncode == 0, proc.stderr
    assert "[limit]" not in proc.stdout and "8411" not in proc.stdout, proc.stdout
    told = next(x for x in proc.stdout.splitlines() if x.startswith("do not rely on: limit "))
    assert "4957 now" in told and "— possibly outdated by [" in told and "6648”" in told, told


def test_a_teammate_restating_a_held_key_is_in_the_holders_pack_before_any_distill(
        repo: Path) -> None:
    """Keys are team-wide: web fixing api's fact under its own key (a hand edit of its
    MEMORY.md line is filed so) replaces api's line in api's pack at once, with its
    words, as the next distill will."""
    lesson(repo, "api", "The media timeout in ms is 7868", "--key", "media-timeout",
           "--applies-to", "web")
    assert jmem(repo, "distill").returncode == 0
    lesson(repo, "web", "The media timeout in ms is 2417", "--key", "media-timeout")
    proc = jmem(repo, "wake", "--agent", "api")
    assert proc.returncode == 0, proc.stderr
    assert "7868" not in proc.stdout, proc.stdout
    assert "- The media timeout in ms is 2417 [media-timeout]" in proc.stdout, proc.stdout
    assert jmem(repo, "distill").returncode == 0
    memory = (repo / MEM / "api" / "MEMORY.md").read_text()
    assert "2417" in memory and "7868" not in memory, memory
