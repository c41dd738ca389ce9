"""`jmem recall`: live facts ranked for a question, from an index that follows the journal."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from helpers import jmem

from journal_mem.journal.entry import build
from journal_mem.journal.files import record
from journal_mem.recall.index import connect, index_path, update
from journal_mem.recall.query import _weighty, match_expression
from journal_mem.repo import open_context

LESSONS = [
    ("api", "testing", "api-tests-serial", "Run the API tests serially with -p no:randomly",
     "They share one database fixture; random order makes them flaky."),
    ("api", "database", "migrations-alembic", "Create migrations with alembic revision",
     "Never edit a migration that was merged; add a new revision."),
    ("web", "build", "node-memory", "The web build needs NODE_OPTIONS=--max-old-space-size=4096",
     "Webpack runs out of heap on the production bundle otherwise."),
    ("web", "styling", "tailwind-purge", "Tailwind purges classes built from strings",
     "Write class names out in full so the purge step keeps them."),
    ("api", "auth", "jwt-clock-skew", "Token validation allows 30 seconds of clock skew",
     "CI runners drift; without leeway, JWT tests fail at random."),
    ("web", "testing", "playwright-headless", "Playwright needs --no-sandbox as root in CI",
     "Chromium refuses to start as root without it."),
    ("api", "logging", "structlog-json", "Logs are structlog JSON, one event per line",
     "The log shipper parses one JSON object per line."),
    ("web", "i18n", "lingui-extract", "Run lingui extract before committing new strings",
     "Untranslated ids break the release check."),
]
QUESTIONS = [
    ("why are the api tests flaky", "api-tests-serial"),
    ("how do I add a database migration", "migrations-alembic"),
    ("web build out of memory heap", "node-memory"),
    ("tailwind classes missing in production", "tailwind-purge"),
    ("jwt token tests fail randomly clock", "jwt-clock-skew"),
    ("chromium will not start in CI", "playwright-headless"),
    ("what format are the logs", "structlog-json"),
    ("translations strings release", "lingui-extract"),
]


def write(repo: Path, agent: str, topic: str, key: str, title: str, body: str,
          **fields: object) -> None:
    """File a lesson through the same writer as `jmem write` (in-process: faster)."""
    record(open_context(str(repo)).layout,
           build(agent=agent, topic=topic, key=key, title=title, body=body, **fields))


@pytest.fixture
def memory(repo: Path) -> Path:
    for lesson in LESSONS:
        write(repo, *lesson)
    return repo


def recall(repo: Path, *args: str) -> list[dict[str, object]]:
    proc = jmem(repo, "recall", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    hits: list[dict[str, object]] = json.loads(proc.stdout)
    return hits


def test_expected_fact_ranks_first_on_a_labelled_set(memory: Path) -> None:
    for question, key in QUESTIONS:
        hits = recall(memory, question)
        assert hits and hits[0]["key"] == key, (question, [h["key"] for h in hits])


def test_hit_carries_key_agents_topic_date_and_path(memory: Path) -> None:
    hit = recall(memory, "flaky", "api", "tests")[0]
    assert hit["agents"] == ["api"] and hit["topic"] == "testing"
    assert hit["date"] == dt.datetime.now(dt.UTC).date().isoformat()
    assert str(hit["path"]).startswith(".claude/agent-memory/api/journal/")
    assert (memory / str(hit["path"])).is_file()
    text = jmem(memory, "recall", "flaky api tests").stdout
    assert text.startswith("1. Run the API tests serially with -p no:randomly [api-tests-serial]")


def test_agent_filter_and_limit(memory: Path) -> None:
    assert {h["key"] for h in recall(memory, "testing", "--agent", "web")} == {
        "playwright-headless"}
    assert len(recall(memory, "the a run build tests web api", "--limit", "2")) == 2


def test_corrections_are_followed_without_rebuild(memory: Path) -> None:
    assert recall(memory, "flaky api tests")[0]["key"] == "api-tests-serial"
    write(memory, "web", "testing", "api-tests-parallel", "API tests run in parallel now",
          "Each worker gets its own database; flaky order no longer matters.",
          supersedes=["api-tests-serial"], applies_to=["api"])
    keys = [h["key"] for h in recall(memory, "flaky api tests")]
    assert keys[0] == "api-tests-parallel" and "api-tests-serial" not in keys
    assert recall(memory, "flaky api tests", "--agent", "api")[0]["agents"] == ["api", "web"]
    write(memory, "api", "logging", "retract-logs", "Logs format is being reworked",
          "", retracts=["structlog-json"])
    assert "structlog-json" not in [h["key"] for h in recall(memory, "log format json")]


def test_index_updates_incrementally_and_rebuild_agrees(memory: Path) -> None:
    ctx = open_context(str(memory))
    day = dt.datetime.now(dt.UTC).date()
    conn = connect(index_path(ctx.layout))
    try:
        assert update(ctx, conn, day) == len(LESSONS)
        assert update(ctx, conn, day) == 0
        write(memory, "api", "cache", "redis-ttl", "Cache entries expire after 300 s", "")
        ctx = open_context(str(memory))
        assert update(ctx, conn, day) == 1
    finally:
        conn.close()
    incremental = recall(memory, "cache expire redis api tests")
    assert recall(memory, "cache expire redis api tests", "--rebuild") == incremental


def test_expired_facts_are_not_returned(memory: Path) -> None:
    write(memory, "api", "ops", "old-window", "Deploys are frozen on Fridays", "",
          valid_until="2000-01-01")
    assert "old-window" not in [h["key"] for h in recall(memory, "deploys frozen fridays")]


def test_question_of_only_stopwords_finds_nothing(memory: Path) -> None:
    assert match_expression("what is the") == ""
    assert recall(memory, "what is the") == []
    assert jmem(memory, "recall", "what is the").stdout.strip() == "no live fact matches"


def test_warm_query_answers_without_click_or_pydantic(memory: Path) -> None:
    import subprocess
    import sys

    from helpers import base_env

    code = ("import sys; from journal_mem.main import main; code = main(['recall', 'flaky',"
            " 'api', 'tests', '--limit', '1']);"
            "print('heavy:', sorted({'click', 'pydantic', 'journal_mem.journal.fold'}"
            " & set(sys.modules)))")

    def run() -> list[str]:
        proc = subprocess.run([sys.executable, "-c", code], cwd=memory, env=base_env(),
                              capture_output=True, text=True, check=True)
        return proc.stdout.splitlines()

    cold = run()  # no index yet: the full command builds it
    assert cold[0].startswith("1. Run the API tests serially") and "'click'" in cold[-1]
    warm = run()
    assert warm[:-1] == cold[:-1] and warm[-1] == "heavy: []"
    write(memory, "api", "testing", "api-tests-ci", "API tests in CI use a fresh database", "")
    stale = run()  # a new lesson: the index is stale, the full command updates it
    assert "'click'" in stale[-1]
    assert run()[-1] == "heavy: []"


def test_facts_holding_every_word_rank_first(memory: Path) -> None:
    write(memory, "api", "noise", "noise", "Database database database database", "database")
    hits = recall(memory, "database migration alembic", "--limit", "3")
    assert hits[0]["key"] == "migrations-alembic"
    assert "noise" in [h["key"] for h in hits]  # filled in from the partial matches


def test_words_half_the_facts_hold_fill_only_when_nothing_else_is_found(memory: Path) -> None:
    def weighty(*words: str) -> list[str]:
        recall(memory, "deploy", "--limit", "1")  # the index brought up to date
        conn = connect(index_path(open_context(str(memory)).layout))
        try:
            return _weighty(conn, list(words))
        finally:
            conn.close()

    for i in range(8):
        write(memory, "ops", "deploy", f"deploy-{i}", f"Deploy step {i} runs the checks",
              f"Stage {i} of the deploy.")
    assert weighty("deploy", "alembic", "zanzibar") == ["alembic", "zanzibar"]  # 8 of 16
    write(memory, "web", "build", "zlib", "Vendor the zlib headers", "")
    assert weighty("deploy", "alembic") == ["deploy", "alembic"]  # 8 of 17: under half
    write(memory, "ops", "deploy", "deploy-8", "Deploy step 8 runs the checks", "")
    assert weighty("deploy", "alembic", "step") == ["alembic"]  # 9 of 18
    only = recall(memory, "deploy migration alembic", "--limit", "5")
    assert [h["key"] for h in only] == ["migrations-alembic"]  # no deploy-only fact pads it
    fallback = recall(memory, "deploy zanzibar", "--limit", "5")  # the weighty word finds none
    assert len(fallback) == 5 and {str(h["key"]) for h in fallback} <= {
        f"deploy-{i}" for i in range(9)}
