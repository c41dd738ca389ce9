"""The recall index's file: made in one transaction with its schema's row, so a
connection to a warm index only reads that row, and an index of another schema, or one
whose making failed, is made again empty; and its ranked query."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal_mem.recall import index, query
from journal_mem.recall.index import SCHEMA_VERSION, connect

TABLES = {"meta", "facts", "files", "keys", "mentions", "refs", "merged", "uncommitted", "fts"}


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    finally:
        conn.close()
    return {r[0] for r in rows} & TABLES


def meta(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT name, value FROM meta").fetchall())
    finally:
        conn.close()


def test_a_warm_index_is_kept_and_another_schema_made_again(tmp_path: Path) -> None:
    path = tmp_path / "index" / "recall.sqlite"
    connect(str(path)).close()
    assert tables(path) == TABLES and meta(path) == {"schema": SCHEMA_VERSION}
    conn = connect(str(path))
    conn.execute("INSERT INTO meta VALUES ('signature', 'kept')")
    conn.close()
    connect(str(path)).close()
    assert meta(path) == {"schema": SCHEMA_VERSION, "signature": "kept"}
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '9' WHERE name = 'schema'")
    conn.execute("DROP TABLE uncommitted")  # an older shape
    conn.commit()
    conn.close()
    connect(str(path)).close()
    assert tables(path) == TABLES and meta(path) == {"schema": SCHEMA_VERSION}


def test_a_making_that_fails_leaves_no_schema_row(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "recall.sqlite"
    monkeypatch.setattr(index, "_TABLES", index._TABLES + "; CREATE TABLE facts (x)")
    with pytest.raises(sqlite3.OperationalError):
        connect(str(path))
    assert tables(path) == set()  # rolled back whole: no row says the tables are there
    monkeypatch.undo()
    connect(str(path)).close()
    assert tables(path) == TABLES and meta(path) == {"schema": SCHEMA_VERSION}


def test_only_a_missing_schema_row_makes_the_index_again() -> None:
    class Locked:
        def execute(self, sql: str) -> None:
            raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        index._schema(Locked())  # type: ignore[arg-type]


def test_an_index_made_meanwhile_by_another_process_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "recall.sqlite"
    other = connect(str(path))  # the other process made it and filled it
    other.execute("INSERT INTO meta VALUES ('signature', 'theirs')")
    other.close()
    answers = iter([None])  # this process asked before the other one committed
    real = index._schema
    monkeypatch.setattr(index, "_schema", lambda conn: next(answers, real(conn)))
    connect(str(path)).close()
    assert meta(path) == {"schema": SCHEMA_VERSION, "signature": "theirs"}


WORDS = ["cache", "build", "flaky", "test", "db", "deploy"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1,
                max_size=30),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), st.integers(1, 12),
       st.sampled_from(["AND", "OR"]))
def test_the_ranked_query_equals_ranking_every_match(tmp_path_factory: pytest.TempPathFactory,
                                                     bodies: list[list[str]],
                                                     question: list[str], limit: int,
                                                     joiner: str) -> None:
    """`_ranked` joins only the matches at or above the `limit`-th score with their facts:
    the same facts, in the same order, as joining every match (ties broken by key;
    equal bodies make many ties)."""
    conn = connect(str(tmp_path_factory.mktemp("rank") / "recall.sqlite"))
    try:
        for i, words in enumerate(bodies):
            key = f"k{(i * 7919) % 101:03d}-{i}"  # keys in another order than the rows
            conn.execute("INSERT INTO facts (key, title, tags, topic, body, holders, created,"
                         " path, confidence, type, stamp, norm) VALUES (?, ?, '', 't', ?, 'a',"
                         " '2026-01-01', 'p', 1.0, '', '', '')", (key, words[0], " ".join(words)))
            conn.execute("INSERT INTO fts(rowid, title, tags, topic, body) SELECT id, title,"
                         " tags, topic, body FROM facts WHERE key = ?", (key,))
        expression = f" {joiner} ".join(f'"{w}"' for w in question)
        every = conn.execute(
            f"SELECT f.key, {query._BM25} AS score FROM fts JOIN facts f ON f.id = fts.rowid"
            " WHERE fts MATCH ? ORDER BY score, f.key LIMIT ?", (expression, limit)).fetchall()
        got = query._ranked(conn, expression, query.Filters(), limit)
        assert [(h.key, -h.score) for h in got] == every
        agent = query._ranked(conn, expression, query.Filters(agent="a"), limit)
        assert [h.key for h in agent] == [k for k, _ in every]  # the filtered form
    finally:
        conn.close()
