"""The recall index's file: made in one transaction with its schema's row, so a
connection to a warm index only reads that row, and an index of another schema, or one
whose making failed, is made again empty."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from journal_mem.recall import index
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
