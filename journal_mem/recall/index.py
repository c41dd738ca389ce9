"""The `jmem recall` index: an SQLite FTS5 table of the live facts, kept current.

The index (`<git-common-dir>/journal-mem/index/recall.sqlite`) is machine-local
and disposable: it holds the live facts of the main checkout's journal as the
distiller folds them (`fold.fold`, so retracted, superseded and expired facts
are never held), with the team-wide key, the agents holding each fact, its
topic, date and journal entry. `signature` is cheap (the journal folders'
mtimes, the config inputs, the date); only when it changed does `update`
re-read the journal (parsed entries come from the distiller's cache) and
change the rows that differ: unchanged facts are left alone. Standard library
only at import: the warm `jmem recall` reads the index through it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
from typing import TYPE_CHECKING

from journal_mem.layout import Layout
from journal_mem.settings import CONFIG_FILE

if TYPE_CHECKING:
    from journal_mem.journal.fold import Fact
    from journal_mem.repo import Context

SCHEMA_VERSION = "3"


def index_path(layout: Layout) -> str:
    """Where the index of this repository lives (machine-local, under the git dir)."""
    return os.path.join(layout.state_dir, "index", "recall.sqlite")


def connect(path: str) -> sqlite3.Connection:
    """The index at `path`, created or rebuilt empty when missing or of another schema."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    row = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
    if row is None or row[0] != SCHEMA_VERSION:  # disposable: rebuilt in the new shape
        conn.executescript("DROP TABLE IF EXISTS fts; DROP TABLE IF EXISTS facts;"
                           " DELETE FROM meta;")
        conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
    conn.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS facts (
            id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, title TEXT NOT NULL,
            tags TEXT NOT NULL, topic TEXT NOT NULL, body TEXT NOT NULL,
            holders TEXT NOT NULL, created TEXT NOT NULL, path TEXT NOT NULL,
            confidence REAL NOT NULL, type TEXT NOT NULL, stamp TEXT NOT NULL);
        CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
            title, tags, topic, body, content='facts', content_rowid='id',
            tokenize='porter unicode61');
        """
    )
    return conn


def signature(layout: Layout, date: dt.date) -> str:
    """What the live facts depend on, cheaply: journal folder mtimes, config inputs, date.

    Creating or removing an entry file changes its folder's mtime; committed
    entries are never edited in place (the guard and `check` see to that).
    The config enters as its inputs (file bytes, `JMEM_*` variables), so that
    no config needs to be loaded to compare.
    """
    try:
        with open(os.path.join(layout.repo.main_root, CONFIG_FILE), "rb") as fh:
            config_bytes = fh.read().hex()
    except OSError:
        config_bytes = ""
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("JMEM_"))
    parts: list[object] = [SCHEMA_VERSION, date.isoformat(), config_bytes, env]
    for agent in layout.agents_on_disk():
        try:
            parts.append((agent, os.stat(layout.journal_dir(agent)).st_mtime_ns))
        except OSError:
            parts.append((agent, None))
    return json.dumps(parts, sort_keys=True, default=str)


def _stamp(fact: Fact) -> str:
    """What makes a stored row stale: the entry that states the fact, and who holds it."""
    return f"{fact.path}|{' '.join(fact.holders)}|{fact.title}"


def update(ctx: Context, conn: sqlite3.Connection, date: dt.date, rebuild: bool = False) -> int:
    """Bring the index up to date with the journal; returns how many rows changed."""
    sig = signature(ctx.layout, date)
    if current(conn, sig) and not rebuild:
        return 0
    from journal_mem.journal.reader import read_journal
    from journal_mem.progress import track

    layout = ctx.layout
    journal = read_journal(layout, ctx.policy, use_cache=not rebuild)
    # the distiller's rule (refs judged against HEAD): recall returns what MEMORY.md may hold
    live = ctx.fold(journal.entries, date).facts
    changed = 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        if rebuild:
            conn.execute("DELETE FROM facts")
            conn.execute("INSERT INTO fts(fts) VALUES('delete-all')")
        stored = dict(conn.execute("SELECT key, stamp FROM facts").fetchall())
        for key in stored.keys() - live.keys():
            _delete(conn, key)
            changed += 1
        for key, fact in track(live.items(), "indexing facts", "facts"):
            if stored.get(key) == _stamp(fact):
                continue
            if key in stored:
                _delete(conn, key)
            _insert(conn, fact, layout)
            changed += 1
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('signature', ?)", (sig,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return changed


def current(conn: sqlite3.Connection, sig: str) -> bool:
    """True when the index was last updated for signature `sig`."""
    row = conn.execute("SELECT value FROM meta WHERE name = 'signature'").fetchone()
    return row is not None and bool(row[0] == sig)


def _delete(conn: sqlite3.Connection, key: str) -> None:
    row = conn.execute("SELECT id, title, tags, topic, body FROM facts WHERE key = ?",
                       (key,)).fetchone()
    if row is None:
        return
    conn.execute("INSERT INTO fts(fts, rowid, title, tags, topic, body) "
                 "VALUES('delete', ?, ?, ?, ?, ?)", row)
    conn.execute("DELETE FROM facts WHERE id = ?", (row[0],))


def _insert(conn: sqlite3.Connection, fact: Fact, layout: Layout) -> None:
    path = f"{layout.memory_root}/{fact.path}"
    cur = conn.execute(
        "INSERT INTO facts (key, title, tags, topic, body, holders, created, path, confidence,"
        " type, stamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (fact.key, fact.title, " ".join(fact.tags), fact.topic, fact.body,
         " ".join(fact.holders), fact.created.date().isoformat(), path, fact.confidence,
         fact.type, _stamp(fact)),
    )
    conn.execute("INSERT INTO fts(rowid, title, tags, topic, body) VALUES (?, ?, ?, ?, ?)",
                 (cur.lastrowid, fact.title, " ".join(fact.tags), fact.topic, fact.body))
