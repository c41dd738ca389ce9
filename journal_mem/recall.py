"""`jmem recall`: ranked live facts for a question, from an SQLite FTS5 index.

The index (`<git-common-dir>/journal-mem/index/recall.sqlite`) is machine-local
and disposable: it holds the live facts of the main checkout's journal as the
distiller folds them (`fold.fold`, so retracted, superseded and expired facts
are never returned), with the team-wide key, the agents holding each fact,
its topic, date and journal entry. A query first compares a cheap signature
(the journal folders' mtimes, the config snapshot, the date); only when it
changed is the journal re-read (parsed entries come from the distiller's
cache) and the index updated row by row: unchanged facts are left alone.
Ranking is FTS5's bm25 over title, tags, topic and body (porter stemming).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sqlite3
from dataclasses import dataclass

from journal_mem.context import Context
from journal_mem.fold import Fact
from journal_mem.layout import Layout

SCHEMA_VERSION = "1"
# bm25 weights, in the FTS column order: title, tags, topic, body
WEIGHTS = (8.0, 4.0, 2.0, 1.0)
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it not of on or should the "
    "this to use we what when where which who why with you".split()
)
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    """One ranked fact."""

    key: str
    title: str
    agents: tuple[str, ...]
    topic: str
    date: str
    path: str  # repository-relative path of the journal entry that states it
    confidence: float
    score: float
    body: str = ""

    def as_json(self) -> dict[str, object]:
        return {"key": self.key, "title": self.title, "agents": list(self.agents),
                "topic": self.topic, "date": self.date, "path": self.path,
                "confidence": self.confidence, "score": round(self.score, 4)}


def index_path(layout: Layout) -> str:
    return os.path.join(layout.state_dir, "index", "recall.sqlite")


def _connect(path: str) -> sqlite3.Connection:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS facts (
            id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, title TEXT NOT NULL,
            tags TEXT NOT NULL, topic TEXT NOT NULL, body TEXT NOT NULL,
            holders TEXT NOT NULL, created TEXT NOT NULL, path TEXT NOT NULL,
            confidence REAL NOT NULL, stamp TEXT NOT NULL);
        CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
            title, tags, topic, body, content='facts', content_rowid='id',
            tokenize='porter unicode61');
        """
    )
    return conn


def signature(ctx: Context, date: dt.date) -> str:
    """What the live facts depend on, cheaply: journal folder mtimes, config, date.

    Creating or removing an entry file changes its folder's mtime; committed
    entries are never edited in place (the guard and `check` see to that).
    """
    layout = ctx.layout
    parts: list[object] = [SCHEMA_VERSION, date.isoformat(), ctx.config.as_dict()]
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
    sig = signature(ctx, date)
    row = conn.execute("SELECT value FROM meta WHERE name = 'signature'").fetchone()
    if row is not None and row[0] == sig and not rebuild:
        return 0
    from journal_mem.entrycache import read_journal
    from journal_mem.fold import fold

    layout, config = ctx.layout, ctx.config
    journal = read_journal(layout, config.budget.entry_bytes, use_cache=not rebuild)
    agents = sorted(set(config.agents) | set(layout.agents_on_disk()))
    root = ctx.repo.main_root
    live = fold(journal.entries, agents=agents, date=date, config=config,
                ref_exists=lambda p: os.path.lexists(os.path.join(root, p))).facts
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
        for key, fact in live.items():
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
        " stamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (fact.key, fact.title, " ".join(fact.tags), fact.topic, fact.body,
         " ".join(fact.holders), fact.created.date().isoformat(), path, fact.confidence,
         _stamp(fact)),
    )
    conn.execute("INSERT INTO fts(rowid, title, tags, topic, body) VALUES (?, ?, ?, ?, ?)",
                 (cur.lastrowid, fact.title, " ".join(fact.tags), fact.topic, fact.body))


def match_expression(question: str) -> str:
    """An FTS5 query for a natural-language question: its content words, OR-ed."""
    words = [w.lower() for w in _WORD_RE.findall(question)]
    terms = sorted({w for w in words if w not in STOPWORDS and len(w) > 1})
    return " OR ".join(f'"{t}"' for t in terms)


def search(conn: sqlite3.Connection, question: str, agent: str | None, limit: int) -> list[Hit]:
    """The `limit` best live facts for `question`, best first (held by `agent` if given)."""
    expression = match_expression(question)
    if not expression:
        return []
    sql = (
        "SELECT f.key, f.title, f.holders, f.topic, f.created, f.path, f.confidence,"
        f" bm25(fts, {', '.join(str(w) for w in WEIGHTS)}) AS score, f.body"
        " FROM fts JOIN facts f ON f.id = fts.rowid WHERE fts MATCH ?"
    )
    params: list[object] = [expression]
    if agent:
        sql += " AND (' ' || f.holders || ' ') LIKE ?"
        params.append(f"% {agent} %")
    sql += " ORDER BY score, f.key LIMIT ?"
    params.append(limit)
    rows = conn.execute(sql, params).fetchall()
    return [Hit(key, title, tuple(holders.split()), topic, created, path, confidence, -score,
                body)
            for key, title, holders, topic, created, path, confidence, score, body in rows]


def recall(ctx: Context, question: str, *, agent: str | None = None, limit: int = 5,
           rebuild: bool = False, date: dt.date | None = None) -> list[Hit]:
    """Update the index if the journal changed, then rank live facts for `question`."""
    day = date or dt.datetime.now(dt.UTC).date()
    conn = _connect(index_path(ctx.layout))
    try:
        update(ctx, conn, day, rebuild=rebuild)
        return search(conn, question, agent, limit)
    finally:
        conn.close()


def render(hits: list[Hit]) -> list[str]:
    """Human-readable lines, one block per hit."""
    if not hits:
        return ["no live fact matches"]
    out = []
    for rank, hit in enumerate(hits, 1):
        out.append(f"{rank}. {hit.title} [{hit.key}]")
        out.append(f"   {', '.join(hit.agents)} · {hit.topic} · {hit.date} · {hit.path}")
    return out
