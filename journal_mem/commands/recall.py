"""`jmem recall`: ranked live facts for a question, from an SQLite FTS5 index.

The index (`<git-common-dir>/journal-mem/index/recall.sqlite`) is machine-local
and disposable: it holds the live facts of the main checkout's journal as the
distiller folds them (`fold.fold`, so retracted, superseded and expired facts
are never returned), with the team-wide key, the agents holding each fact,
its topic, date and journal entry. A query first compares a cheap signature
(the journal folders' mtimes, the config inputs, the date); only when it
changed is the journal re-read (parsed entries come from the distiller's
cache) and the index updated row by row: unchanged facts are left alone.

Ranking is FTS5's bm25 over title, tags, topic and body (porter stemming):
facts holding every content word of the question first, then, if fewer than
asked, facts holding some of them. bm25 costs per matching row, and an OR of
common words matches most of a large journal, so the AND pass is what keeps
a warm query over 100k facts within tens of milliseconds.

`fast_main` answers a warm query from `main.py` with the standard library
only (no click, no pydantic, no fold); a stale or missing index falls back
to the full command, which updates it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sqlite3
from typing import TYPE_CHECKING, Any

from journal_mem.config.settings import CONFIG_FILE
from journal_mem.store.layout import Layout

if TYPE_CHECKING:
    from journal_mem.model.fold import Fact
    from journal_mem.store.context import Context

SCHEMA_VERSION = "3"
# bm25 weights, in the FTS column order: title, tags, topic, body
WEIGHTS = (8.0, 4.0, 2.0, 1.0)
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it not of on or should the "
    "this to use we what when where which who why with you".split()
)
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


class Filters:
    """Optional limits on which facts a search returns (all must hold)."""

    __slots__ = ("agent", "since", "tag", "type")

    def __init__(self, agent: str | None = None, type: str | None = None,
                 tag: str | None = None, since: str | None = None) -> None:
        self.agent = agent  # held by this agent
        self.type = type  # principle | semantic | procedural | episodic | reflective
        self.tag = tag  # carries this tag
        self.since = since  # created on or after this YYYY-MM-DD

    def narrows(self) -> bool:
        """True when a type, tag or date limits the facts (the agent alone does not)."""
        return bool(self.type or self.tag or self.since)

    def sql(self) -> tuple[str, list[object]]:
        """A WHERE fragment over `facts f` (starting with " AND") and its parameters."""
        sql, params = "", list[object]()
        for column, value in (("holders", self.agent), ("tags", self.tag)):
            if value:
                sql += f" AND (' ' || f.{column} || ' ') LIKE ?"
                params.append(f"% {value} %")
        if self.type:
            sql += " AND f.type = ?"
            params.append(self.type)
        if self.since:
            sql += " AND f.created >= ?"
            params.append(self.since)
        return sql, params


class Hit:
    """One ranked fact (a plain class: `dataclasses` costs the fast path ~8 ms)."""

    __slots__ = ("agents", "body", "confidence", "date", "key", "path", "score", "tags",
                 "title", "topic", "type")

    def __init__(self, key: str, title: str, agents: tuple[str, ...], topic: str, date: str,
                 path: str, confidence: float, score: float, body: str = "",
                 type: str = "", tags: tuple[str, ...] = ()) -> None:
        self.key = key
        self.title = title
        self.agents = agents
        self.topic = topic
        self.date = date
        self.path = path  # repository-relative path of the journal entry that states it
        self.confidence = confidence
        self.score = score
        self.body = body
        self.type = type
        self.tags = tags

    def as_json(self) -> dict[str, object]:
        return {"key": self.key, "title": self.title, "agents": list(self.agents),
                "topic": self.topic, "date": self.date, "path": self.path, "type": self.type,
                "tags": list(self.tags), "confidence": self.confidence,
                "score": round(self.score, 4)}


def index_path(layout: Layout) -> str:
    return os.path.join(layout.state_dir, "index", "recall.sqlite")


def _connect(path: str) -> sqlite3.Connection:
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
    if _current(conn, sig) and not rebuild:
        return 0
    from journal_mem.model.fold import fold
    from journal_mem.store.progress import track
    from journal_mem.store.reader import read_journal

    layout, config = ctx.layout, ctx.config
    journal = read_journal(layout, ctx.policy, use_cache=not rebuild)
    agents = sorted(set(config.agents) | set(layout.agents_on_disk()))
    from journal_mem.store.distill.folding import ref_checker

    # the distiller's rule (refs judged against HEAD): recall returns what MEMORY.md may hold
    live = fold(journal.entries, agents=agents, date=date, config=config,
                ref_exists=ref_checker(ctx.repo.main_root, "HEAD")).facts
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


def _current(conn: sqlite3.Connection, sig: str) -> bool:
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


def content_words(question: str) -> list[str]:
    """The words of a question worth searching for, lower-case, sorted, unique."""
    words = {w.lower() for w in _WORD_RE.findall(question)}
    return sorted(w for w in words if w not in STOPWORDS and len(w) > 1)


def match_expression(question: str, joiner: str = "OR") -> str:
    """An FTS5 query for a natural-language question: its content words joined."""
    return f" {joiner} ".join(f'"{t}"' for t in content_words(question))


def search(conn: sqlite3.Connection, question: str, agent: str | None, limit: int,
           filters: Filters | None = None) -> list[Hit]:
    """The `limit` best live facts for `question`, best first (held by `agent` if given).

    Facts holding every content word come first; the rest are filled from
    facts holding some of them. `filters` narrows the facts searched.
    """
    where = filters or Filters()
    if agent:
        where = Filters(agent, where.type, where.tag, where.since)
    hits = _ranked(conn, match_expression(question, "AND"), where, limit)
    if len(hits) < limit and len(content_words(question)) > 1:
        seen = {h.key for h in hits}
        more = _ranked(conn, match_expression(question, "OR"), where, limit + len(hits))
        hits += [h for h in more if h.key not in seen][: limit - len(hits)]
    return hits


_COLUMNS = "f.key, f.title, f.holders, f.topic, f.created, f.path, f.confidence"


def _ranked(conn: sqlite3.Connection, expression: str, where: Filters,
            limit: int) -> list[Hit]:
    if not expression:
        return []
    sql = (
        f"SELECT {_COLUMNS}, bm25(fts, {', '.join(str(w) for w in WEIGHTS)}) AS score,"
        " f.body, f.type, f.tags FROM fts JOIN facts f ON f.id = fts.rowid WHERE fts MATCH ?"
    )
    extra, params = where.sql()
    sql += extra + " ORDER BY score, f.key LIMIT ?"
    rows = conn.execute(sql, [expression, *params, limit]).fetchall()
    return [_hit(row[:7], -row[7], row[8:]) for row in rows]


def _hit(head: tuple[Any, ...], score: float, tail: tuple[Any, ...]) -> Hit:
    key, title, holders, topic, created, path, confidence = head
    body, type_, tags = tail
    return Hit(key, title, tuple(holders.split()), topic, created, path, confidence, score,
               body, type_, tuple(tags.split()))


def listed(conn: sqlite3.Connection, filters: Filters, limit: int) -> list[Hit]:
    """Facts matching `filters` alone (no question), newest first."""
    extra, params = filters.sql()
    sql = (f"SELECT {_COLUMNS}, 0.0, f.body, f.type, f.tags FROM facts f WHERE 1 = 1{extra}"
           " ORDER BY f.created DESC, f.key LIMIT ?")
    rows = conn.execute(sql, [*params, limit]).fetchall()
    return [_hit(row[:7], 0.0, row[8:]) for row in rows]


def recall(ctx: Context, question: str, *, agent: str | None = None, limit: int = 5,
           rebuild: bool = False, date: dt.date | None = None,
           filters: Filters | None = None) -> list[Hit]:
    """Update the index if the journal changed, then rank live facts for `question`.

    An empty question with `filters` lists the matching facts, newest first.
    """
    day = date or dt.datetime.now(dt.UTC).date()
    conn = _connect(index_path(ctx.layout))
    try:
        update(ctx, conn, day, rebuild=rebuild)
        if not content_words(question) and filters is not None and filters.narrows():
            where = Filters(agent or filters.agent, filters.type, filters.tag, filters.since)
            return listed(conn, where, limit)
        return search(conn, question, agent, limit, filters)
    finally:
        conn.close()


def candidates(ctx: Context, text: str, limit: int = 20) -> list[Hit]:
    """Live facts sharing any content word with `text`, bm25 order (index updated first)."""
    day = dt.datetime.now(dt.UTC).date()
    conn = _connect(index_path(ctx.layout))
    try:
        update(ctx, conn, day)
        return _ranked(conn, match_expression(text, "OR"), Filters(), limit)
    finally:
        conn.close()


def by_key(ctx: Context, key: str) -> Hit | None:
    """The live fact with `key`, or None (index updated first)."""
    day = dt.datetime.now(dt.UTC).date()
    conn = _connect(index_path(ctx.layout))
    try:
        update(ctx, conn, day)
        row = conn.execute("SELECT key, title, holders, topic, created, path, confidence, body"
                           " FROM facts WHERE key = ?", (key,)).fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    key, title, holders, topic, created, path, confidence, body = row
    return Hit(key, title, tuple(holders.split()), topic, created, path, confidence, 0.0, body)


def lookup(layout: Layout, question: str, agent: str | None, limit: int,
           date: dt.date) -> list[Hit] | None:
    """The answer from the index as it stands, or None when it is missing or stale."""
    path = index_path(layout)
    if not os.path.exists(path):
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        if not _current(conn, signature(layout, date)):
            return None
        return search(conn, question, agent, limit)
    except sqlite3.Error:  # a damaged index: the full command rebuilds it
        return None
    finally:
        conn.close()


def fast_main(args: list[str]) -> int | None:
    """`jmem recall …` on a warm index without click or pydantic; None hands over to click.

    Plain words and --agent/--limit/--json only; other arguments, or a missing,
    stale or damaged index, go to the full command. Errors (no repository, a
    broken config) go to the error boundary like the full command's.
    """
    words, agent, limit, as_json = [], None, 5, False
    it = iter(args)
    for arg in it:
        if arg in ("--agent", "--limit"):
            value = next(it, None)
            if value is None:
                return None
            if arg == "--agent":
                agent = value
            elif value.isdigit() and int(value) > 0:
                limit = int(value)
            else:
                return None
        elif arg == "--json":
            as_json = True
        elif arg.startswith("-"):
            return None
        else:
            words.append(arg)
    if not words:
        return None
    from journal_mem.config import settings
    from journal_mem.gitops import gitfacts

    repo = gitfacts.locate(os.getcwd())
    layout = Layout(repo, settings.Settings(repo.main_root).memory_root)
    hits = lookup(layout, " ".join(words), agent, limit, dt.datetime.now(dt.UTC).date())
    if hits is None:
        return None
    print(json.dumps([h.as_json() for h in hits], indent=2, ensure_ascii=False) if as_json
          else "\n".join(render(hits)))
    return 0


def render(hits: list[Hit]) -> list[str]:
    """Human-readable lines, one block per hit."""
    if not hits:
        return ["no live fact matches"]
    out = []
    for rank, hit in enumerate(hits, 1):
        out.append(f"{rank}. {hit.title} [{hit.key}]")
        out.append(f"   {', '.join(hit.agents)} · {hit.topic} · {hit.date} · {hit.path}")
    return out
