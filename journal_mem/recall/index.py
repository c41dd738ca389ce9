"""The `jmem recall` index: an SQLite FTS5 table of the live facts, kept current.

The index (`<git-common-dir>/journal-mem/index/recall.sqlite`) is machine-local
and disposable: it holds the live facts of the main checkout's journal as the
distiller folds them (`fold.fold`, so retracted, superseded and expired facts
are never held), with the team-wide key, the agents holding each fact, its
topic, date and journal entry. `signature` is cheap (the journal folders'
mtimes, the config inputs, the date); only when it changed is the index
brought up to date, in one of two ways:

* appending (`refresh._append`): when the only change is new entry files that sort
  after every entry indexed (the common case: a lesson was written), only
  those files are read, and each is folded onto the rows it touches. The
  index keeps what that needs: the entry files it has seen, every key the
  journal has used, each fact's normalised title, the fold's same-title
  merges, and the newest entry. A lone lesson that supersedes, retracts or
  drops keys is folded onto their rows as the replay applies it; a lesson
  with the title of a live fact of its own writer (under another key) takes
  that fact and its holders in, as the fold's rules merge them. Any case
  whose outcome depends on more than those rows (a correction of a key with
  no row or one a merge stands behind, a key seen before but not live, a
  merged key restated under another title, by another writer or dropped, the
  first entry of a key an indexed entry names, a
  journal whose order broke a cycle, a plain entry, a removed or replaced
  file, a new agent or config, a HEAD that moved by commits that changed what
  a fact depends on) is left to the full update, so both ways give the same
  rows (tests/recall/test_append.py checks it on random journals). A HEAD that moved on
  keeps appending when its commits leave every fact as it was
  (`refresh.kept_by`: no cited path added or deleted, journal entries
  committed only by one distill): an agent's commit of code, or a distill.
  A new day keeps appending too: the index keeps the first day on which each
  fact may drop by date (`rules.next_change`: the day after its `valid_until`,
  the day an episodic record passes its time), for the facts and the keys merged
  into them; on a later date those due are removed (a merged one is left to the
  full update) and every other fact stands as it was.
* the full update re-reads the journal (parsed entries come from the
  distiller's cache), folds it, and changes the rows that differ.

Standard library only at import: the warm `jmem recall` reads the index
through it, and imports `refresh.py` (the journal reader, the fold) only when the
signature says the journal changed.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from collections.abc import Iterable

from journal_mem.layout import Layout
from journal_mem.settings import CONFIG_FILE, DEFAULTS, env_name

TYPE_CHECKING = False  # `typing` costs a warm recall ~2.5 ms: annotations only
if TYPE_CHECKING:
    from journal_mem.journal.fold import Fold
    from journal_mem.journal.reader import Journal
    from journal_mem.repo import Context

# 12: the day each fact may drop by date (11: made in one transaction with its schema's
# row; 10: the entries not committed yet)
SCHEMA_VERSION = "12"


def index_path(layout: Layout) -> str:
    """Where the index of this repository lives (machine-local, under the git dir)."""
    return os.path.join(layout.state_dir, "index", "recall.sqlite")


def connect(path: str) -> sqlite3.Connection:
    """The index at `path`, created or rebuilt empty when missing or of another schema.

    The schema's row is written in the transaction that makes its tables, so an
    index whose row says this schema has them all: a warm one is only asked.
    """
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    # A commit is not synced to disk (a checkpoint is): a power loss may undo the last
    # updates, never tear one (WAL), and the signature goes with each update, so the
    # next command makes a lost one again. Five syncs of a `write` were ~0.4 ms.
    conn.execute("PRAGMA synchronous=NORMAL")
    if _schema(conn) != SCHEMA_VERSION:  # disposable: made again, empty, in the new shape
        conn.execute("BEGIN IMMEDIATE")
        try:
            if _schema(conn) != SCHEMA_VERSION:  # not made by another process meanwhile
                for statement in (_DROP + _TABLES).split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return conn


def _schema(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise  # a locked or unreadable index is no reason to make it again, empty
        return None  # no meta table: a new index
    return None if row is None else str(row[0])


_DROP = ("DROP TABLE IF EXISTS fts; DROP TABLE IF EXISTS facts; DROP TABLE IF EXISTS files;"
         " DROP TABLE IF EXISTS keys; DROP TABLE IF EXISTS mentions; DROP TABLE IF EXISTS refs;"
         " DROP TABLE IF EXISTS merged; DROP TABLE IF EXISTS uncommitted;"
         " DROP TABLE IF EXISTS expires; DROP TABLE IF EXISTS meta;")
_TABLES = """
        CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS facts (
            id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, title TEXT NOT NULL,
            tags TEXT NOT NULL, topic TEXT NOT NULL, body TEXT NOT NULL,
            holders TEXT NOT NULL, created TEXT NOT NULL, path TEXT NOT NULL,
            confidence REAL NOT NULL, type TEXT NOT NULL, stamp TEXT NOT NULL,
            norm TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS facts_norm ON facts (norm) WHERE norm != '';
        CREATE TABLE IF NOT EXISTS files (agent TEXT NOT NULL, name TEXT NOT NULL,
            PRIMARY KEY (agent, name)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS keys (key TEXT PRIMARY KEY, norm TEXT NOT NULL)
            WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS keys_norm ON keys (norm) WHERE norm != '';
        CREATE TABLE IF NOT EXISTS mentions (key TEXT NOT NULL, role TEXT NOT NULL,
            rel TEXT NOT NULL, by TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS mentions_key ON mentions (key, role);
        CREATE TABLE IF NOT EXISTS refs (path TEXT PRIMARY KEY) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS merged (loser TEXT PRIMARY KEY, winner TEXT NOT NULL)
            WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS merged_winner ON merged (winner);
        CREATE TABLE IF NOT EXISTS uncommitted (rel TEXT PRIMARY KEY) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS expires (key TEXT PRIMARY KEY, day TEXT NOT NULL)
            WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS expires_day ON expires (day);
        CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
            title, tags, topic, body, content='facts', content_rowid='id',
            tokenize='porter unicode61');
        """


# The JMEM_* variables of every setting the live facts may depend on: all but the hooks',
# the loop points' and the curator's. An orchestrator that turns a loop point on by its
# variable (JMEM_HOOKS_PRE_WORK=1) must not make the next plain `recall` rebuild the index.
_FACT_SETTINGS = frozenset(
    env_name(key, sub) if sub else env_name("", key)
    for key, default in DEFAULTS.items() if key not in ("hooks", "loop", "consolidate")
    for sub in (default if isinstance(default, dict) else [""]))


def signature(layout: Layout, date: dt.date) -> str:
    """What the live facts depend on, cheaply: journal folder mtimes, config inputs, date.

    Creating or removing an entry file changes its folder's mtime; committed
    entries are never edited in place (the guard and `check` see to that).
    The config enters as its inputs (file bytes, the `JMEM_*` variables of the
    settings facts depend on), so that no config needs to be loaded to compare.

    Lines: the date; the Python literal of the other inputs (one line: `repr` escapes
    every line break); then `AGENT MTIME` for each agent folder (`-`: none). Each part is
    read back without a parser (`refresh._signed`): `ast` costs a `write` ~2.5 ms.
    """
    (day, inputs), folders = _parts(layout, date)
    return "".join([day, "\n", inputs, "\n", *(f"{agent} {'-' if mtime is None else mtime}\n"
                                             for agent, mtime in sorted(folders.items()))])


def _parts(layout: Layout, date: dt.date) -> tuple[list[str], dict[str, int | None]]:
    """([the date, the other inputs besides the journal folders as one Python literal],
    each agent folder's mtime)."""
    try:
        with open(os.path.join(layout.repo.main_root, CONFIG_FILE), "rb") as fh:
            config_bytes = fh.read().hex()
    except OSError:
        config_bytes = ""
    env = sorted((k, v) for k, v in os.environ.items() if k in _FACT_SETTINGS)
    head = [date.isoformat(), repr([SCHEMA_VERSION, config_bytes, env])]
    folders: dict[str, int | None] = {}
    for agent in layout.agents_on_disk():
        try:
            folders[agent] = os.stat(layout.journal_dir(agent)).st_mtime_ns
        except OSError:
            folders[agent] = None
    return head, folders


def update(ctx: Context, conn: sqlite3.Connection, date: dt.date, rebuild: bool = False) -> int:
    """Bring the index up to date with the journal; returns how many rows changed. A
    current index costs a `stat` per agent; reading entries is `refresh.py`'s."""
    sig = signature(ctx.layout, date)
    if current(conn, sig) and not rebuild:
        return 0
    return _refreshed(ctx, conn, date, sig, rebuild)


def _refreshed(ctx: Context, conn: sqlite3.Connection, date: dt.date, sig: str, rebuild: bool,
               given: tuple[Journal, Fold, str] | None = None) -> int:
    """`refresh.refresh` (`given`: a distill's journal, fold and HEAD)."""
    from journal_mem.recall import refresh  # the journal reader: only when it changed

    return refresh.refresh(ctx, conn, date, sig, rebuild, given)


def distilled(ctx: Context, journal: Journal, folded: Fold, date: dt.date, sig: str,
              head: str) -> int:
    """Bring the index, where there is one, up to date with a distill's fold: `journal` as
    the distill read it (`sig`: the signature taken before it was read; a file filed
    since is new to the index), `folded` its fold on `date`, with refs judged against
    `head`. Nothing when the index is current for `sig` (lessons written with
    `jmem write` were appended as they came). Otherwise the next `write`, `recall` or
    hook would fold and read the journal again (after lessons filed as files, at 100k
    lessons ~3.5 s). The rows changed."""
    path = index_path(ctx.layout)
    if not os.path.exists(path):
        return 0  # no index yet: the first `recall` makes it
    conn = connect(path)
    try:
        if current(conn, sig):
            return 0
        return _refreshed(ctx, conn, date, sig, False, (journal, folded, head))
    finally:
        conn.close()


def mentioning(conn: sqlite3.Connection, key: str) -> list[str]:
    """Paths of the entries that wrote, superseded or retracted `key`, and of every entry
    superseding a key that supersedes it, transitively (what `jmem log KEY` reads)."""
    rels = {rel for (rel,) in conn.execute("SELECT rel FROM mentions WHERE key = ? AND "
                                           "role != 'drops'", (key,))}
    todo, seen = [key], {key}
    while todo and len(seen) < 1000:
        for rel, by in conn.execute("SELECT rel, by FROM mentions WHERE key = ? AND "
                                    "role = 'supersedes'", (todo.pop(),)).fetchall():
            rels.add(rel)
            if by not in seen:
                seen.add(by)
                todo.append(by)
    return sorted(rels)


def concerning(conn: sqlite3.Connection, keys: Iterable[str], *,
               own: bool = False) -> set[str]:
    """Paths of the entries that concern any of `keys` (write, supersede, retract or drop
    it; with `own`, only those whose own key it is)."""
    role = " AND role = 'key'" if own else ""
    out: set[str] = set()
    for key in keys:
        out.update(rel for (rel,) in conn.execute(
            f"SELECT rel FROM mentions WHERE key = ?{role}", (key,)))
    return out


def mentioned_keys(conn: sqlite3.Connection) -> list[str]:
    """Every key some entry concerns."""
    return [key for (key,) in conn.execute("SELECT DISTINCT key FROM mentions ORDER BY key")]


def current(conn: sqlite3.Connection, sig: str) -> bool:
    """True when the index was last updated for signature `sig`."""
    row = conn.execute("SELECT value FROM meta WHERE name = 'signature'").fetchone()
    return row is not None and bool(row[0] == sig)
