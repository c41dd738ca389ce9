"""`jmem recall`: ranked live facts for a question, from an SQLite FTS5 index.

The index of the live facts (`recall/index.py`) is brought up to date
first when its cheap signature changed, so retracted, superseded and expired
facts are never returned.

Ranking is FTS5's bm25 over title, tags, topic and body (porter stemming):
facts holding every content word of the question first, then, if fewer than
asked, facts holding some of the words that fewer than half the facts hold
(bm25 gives the others no weight); only when those find nothing, facts holding
some of any. bm25 costs per matching row, and an OR of common words matches
most of a large journal, so these two passes are what keep a warm query over
100k facts within tens of milliseconds.

A status line — `DONE: …`, `TODO: …`, an open task ("To do: …") — says what
was or will be worked on, not how things are: it ranks after the facts the
search found, unless the question asks for status ("what is left to do").
When the facts holding every word are mostly such lines, the facts holding
some of the words are searched too, so a fact that answers the question
("Compilation via …" for "how is compilation to WASM done") is not crowded
out by roadmap lines that share its words (`_rerank`).

`fast_main` answers a warm query from `main.py` with the standard library
only (no click, no pydantic, no fold); a stale or missing index falls back
to the full command, which updates it.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3

from journal_mem.layout import Layout
from journal_mem.names import LESSON_TYPES
from journal_mem.options import Option, parse
from journal_mem.recall.index import connect, current, index_path, signature, update
from journal_mem.repo import light_context

TYPE_CHECKING = False  # `typing` costs a warm recall ~2.5 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    from journal_mem.repo import Context

__all__ = ["Filters", "Hit", "by_key", "candidates", "content_words", "fast_main", "index_path",
           "listed", "lookup", "match_expression", "recall", "recall_each", "render", "search",
           "signature", "update"]
# bm25 weights, in the FTS column order: title, tags, topic, body
WEIGHTS = (8.0, 4.0, 2.0, 1.0)
STOPWORDS = frozenset(
    "a an and are as at be by can do does done for from how i in is it not of on or should "
    "the this to use we what when where which who why with you".split()
)
# a title opening with one of these and a colon (or dash) states what was or will be done,
# not how things are ("TODO: …"; "Next.js builds …" is a fact)
_STATUS_RE = re.compile(
    r"^\W*(?:done|todo|to do|wip|in progress|planned|next)(?:\s*:|\s+[-–—]\s)", re.IGNORECASE)
# a question with one of these asks for status: status lines are its answers
_ASKS_STATUS = frozenset("todo left remaining status progress planned plan roadmap next "
                         "pending finished completed".split())
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


def content_words(question: str) -> list[str]:
    """The words of a question worth searching for, lower-case, sorted, unique."""
    words = {w.lower() for w in _WORD_RE.findall(question)}
    return sorted(w for w in words if w not in STOPWORDS and len(w) > 1)


def match_expression(question: str, joiner: str = "OR") -> str:
    """An FTS5 query for a natural-language question: its content words joined."""
    return _joined(content_words(question), joiner)


def _joined(words: list[str], joiner: str) -> str:
    return f" {joiner} ".join(f'"{t}"' for t in words)


def search(conn: sqlite3.Connection, question: str, agent: str | None, limit: int,
           filters: Filters | None = None) -> list[Hit]:
    """The `limit` best live facts for `question`, best first (held by `agent` if given).

    Facts holding every content word come first; the rest are filled from
    facts holding some of them: some of the words that fewer than half the
    facts hold (`_weighty`), or, when those find nothing, some of any.
    `filters` narrows the facts searched.
    """
    where = filters or Filters()
    if agent:
        where = Filters(agent, where.type, where.tag, where.since)
    words = content_words(question)
    pool = limit if _ASKS_STATUS & set(words) else 2 * limit
    hits = _ranked(conn, _joined(words, "AND"), where, pool)
    facts = [h for h in hits if not is_status(h.title)]
    if len(facts) < limit and len(words) > 1:
        seen = {h.key for h in hits}
        weighty = _weighty(conn, words)
        more = [h for h in _ranked(conn, _joined(weighty, "OR"), where, pool + len(hits))
                if h.key not in seen]
        if not hits and not more and len(weighty) < len(words):
            more = _ranked(conn, _joined(words, "OR"), where, pool)
        hits += more
    return _rerank(hits, words)[:limit]


def _weighty(conn: sqlite3.Connection, words: list[str]) -> list[str]:
    """The words that fewer than half the indexed facts hold.

    bm25 weighs a word by how few facts hold it, and FTS5 gives a word that
    half the facts or more hold no weight at all (its idf is clamped to 1e-6).
    A fact that shares only such words with a question is no answer to it, and
    ranking every fact that holds "test" or "use" costs a query over 10k facts
    ~25 ms: the fill leaves those facts out while a word with weight finds any.
    """
    half = (conn.execute("SELECT count(*) FROM facts").fetchone()[0] + 1) // 2
    count = "SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)"
    return [w for w in words if conn.execute(count, (f'"{w}"', half)).fetchone()[0] < half]


def is_status(title: str) -> bool:
    """True for a title that says what was or will be done: `DONE: …`, `TODO: …`."""
    return _STATUS_RE.match(title) is not None


def _rerank(hits: list[Hit], words: list[str]) -> list[Hit]:
    """`hits` in search order (every word first, then some), status lines after the
    facts unless the question asks for status."""
    if _ASKS_STATUS & set(words):
        return hits
    return sorted(hits, key=lambda h: is_status(h.title))  # stable: search order kept


_COLUMNS = "f.key, f.title, f.holders, f.topic, f.created, f.path, f.confidence"


_BM25 = f"bm25(fts, {', '.join(str(w) for w in WEIGHTS)})"
# Without a filter on the facts: each match scored once (`s`), and only those scoring at
# most the `limit`-th best score (ties included, so the key still breaks them) joined with
# their facts. Joining every match first, as the filtered form must, took a third of a
# query's time (208 matches: 3.4 ms, 2.8 ms so).
_RANKED = (f"WITH s AS (SELECT rowid AS id, {_BM25} AS score FROM fts WHERE fts MATCH ?)"
           f" SELECT {_COLUMNS}, s.score, f.body, f.type, f.tags FROM s JOIN facts f"
           " ON f.id = s.id WHERE s.score <= IFNULL((SELECT score FROM s ORDER BY score"
           " LIMIT 1 OFFSET ?), 1e308) ORDER BY s.score, f.key LIMIT ?")


def _ranked(conn: sqlite3.Connection, expression: str, where: Filters,
            limit: int) -> list[Hit]:
    """The `limit` best facts matching `expression`, bm25 order, then key."""
    if not expression:
        return []
    extra, params = where.sql()
    if extra:
        sql = (f"SELECT {_COLUMNS}, {_BM25} AS score, f.body, f.type, f.tags FROM fts JOIN"
               f" facts f ON f.id = fts.rowid WHERE fts MATCH ?{extra} ORDER BY score, f.key"
               " LIMIT ?")
        rows = conn.execute(sql, [expression, *params, limit]).fetchall()
    else:
        rows = conn.execute(_RANKED, (expression, limit - 1, limit)).fetchall()
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
    if not content_words(question) and filters is not None and filters.narrows():
        where = Filters(agent or filters.agent, filters.type, filters.tag, filters.since)
        day = date or dt.datetime.now(dt.UTC).date()
        conn = connect(index_path(ctx.layout))
        try:
            update(ctx, conn, day, rebuild=rebuild)
            return listed(conn, where, limit)
        finally:
            conn.close()
    return recall_each(ctx, [question], agent=agent, limit=limit, rebuild=rebuild, date=date,
                       filters=filters)[0]


def recall_each(ctx: Context, questions: list[str], *, agent: str | None = None,
                limit: int = 5, rebuild: bool = False, date: dt.date | None = None,
                filters: Filters | None = None) -> list[list[Hit]]:
    """`search` for each question, on one connection to the index, updated once."""
    day = date or dt.datetime.now(dt.UTC).date()
    conn = connect(index_path(ctx.layout))
    try:
        update(ctx, conn, day, rebuild=rebuild)
        return [search(conn, question, agent, limit, filters) for question in questions]
    finally:
        conn.close()


def candidates(ctx: Context, text: str, limit: int = 20) -> list[Hit]:
    """Live facts sharing any content word with `text`, bm25 order (index updated first)."""
    day = dt.datetime.now(dt.UTC).date()
    conn = connect(index_path(ctx.layout))
    try:
        update(ctx, conn, day)
        return _ranked(conn, match_expression(text, "OR"), Filters(), limit)
    finally:
        conn.close()


def by_key(ctx: Context, key: str) -> Hit | None:
    """The live fact with `key`, or None (index updated first)."""
    day = dt.datetime.now(dt.UTC).date()
    conn = connect(index_path(ctx.layout))
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
        if not current(conn, signature(layout, date)):
            return None
        return search(conn, question, agent, limit)
    except sqlite3.Error:  # a damaged index: the full command rebuilds it
        return None
    finally:
        conn.close()


OPTIONS = (
    Option("--agent", dest="agent", metavar="NAME", help="Only facts this agent holds."),
    Option("--type", dest="type_", kind="choice", choices=LESSON_TYPES,
           help="Only facts of this type."),
    Option("--tag", dest="tag", metavar="TAG", help="Only facts carrying this tag."),
    Option("--since", dest="since", kind="date", metavar="YYYY-MM-DD",
           help="Only facts written on or after this date."),
    Option("--limit", dest="limit", kind="int", low=1, high=10_000, default=5,
           show_default=True, help="How many facts."),
    Option("--rebuild", dest="rebuild", flag=True, help="Rebuild the index from the journal "
           "first."),
    Option("--json", dest="as_json", flag=True, help="Print the facts as JSON."),
)


def fast_main(args: list[str]) -> int | None:
    """`jmem recall …` on a warm index without click or pydantic; None hands over to click.

    Plain words and --agent/--limit/--json only; other arguments, or a missing,
    stale or damaged index, go to the full command. Errors (no repository, a
    broken config) go to the error boundary like the full command's.
    """
    got = parse(args, OPTIONS, accept={"agent", "limit", "as_json"}, words=True)
    if got is None or not got["words"]:
        return None
    words, agent, limit, as_json = got["words"], got["agent"], got["limit"], got["as_json"]

    layout = light_context(os.getcwd()).layout
    hits = lookup(layout, " ".join(words), agent, limit, dt.datetime.now(dt.UTC).date())
    if hits is None:
        return None
    if as_json:
        import json  # only here: a warm recall without --json never loads it

        print(json.dumps([h.as_json() for h in hits], indent=2, ensure_ascii=False))
    else:
        print("\n".join(render(hits)))
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
