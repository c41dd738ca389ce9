"""Bringing a stale recall index up to date (`index.update` calls it when the journal's
signature changed): by appending the new entry files, else in full. See `index.py`."""

from __future__ import annotations

import datetime as dt
import operator
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable

from journal_mem import jsonc
from journal_mem.errors import InvalidEntry
from journal_mem.gitops import gitcore, memgit
from journal_mem.journal.anchor import split as split_ref
from journal_mem.journal.cache import FoldCache, NearStore, ReplayCache, RulesStore
from journal_mem.journal.citing import recorded_refs
from journal_mem.journal.kept import kept_replay, replay_key
from journal_mem.journal.listing import MISNAMED
from journal_mem.journal.reader import Journal, file_digest, read_journal
from journal_mem.journal.replay import files_digest
from journal_mem.journal.similar import normalise_title
from journal_mem.journal.validate import parse_valid
from journal_mem.layout import JOURNAL, Layout
from journal_mem.names import ENTRY_NAME_RE
from journal_mem.progress import track

TYPE_CHECKING = False  # `typing` is not on `write`'s path (~3 ms of a start)
if TYPE_CHECKING:
    from journal_mem.journal.entry import Entry
    from journal_mem.journal.fold import Fact, Fold
    from journal_mem.repo import Context

# more new files than this at once: the full update costs no more than appending them
APPEND_LIMIT = 200


def refresh(ctx: Context, conn: sqlite3.Connection, date: dt.date, sig: str,
            rebuild: bool, given: tuple[Journal, Fold, str] | None = None) -> int:
    """Bring a stale index up to date (appending, else in full); the rows changed.
    `given`: a distill's journal, its fold and the HEAD it judged refs against, which
    the full update takes instead of reading and folding the journal itself."""
    if given is not None:
        return _full(ctx, conn, *given, sig)
    if not rebuild:
        appended = _append(ctx, conn, date, sig)
        if appended is not None:
            return appended

    journal = read_journal(ctx.layout, ctx.policy, use_cache=not rebuild)
    # the distiller's rule (refs judged against HEAD): recall returns what MEMORY.md may
    # hold; going on from the replay the last distill kept, as the next distill will
    folded = (ctx.fold(journal.entries, date) if rebuild
              else kept_fold(ctx, journal, date))
    return _full(ctx, conn, journal, folded, _head(ctx), sig, rebuild)


def _full(ctx: Context, conn: sqlite3.Connection, journal: Journal, folded: Fold, head: str,
          sig: str, rebuild: bool = False) -> int:
    """The full update, of `journal` folded as `folded` with refs judged against `head`."""
    layout = ctx.layout
    live = folded.facts
    pending = _not_committed(ctx, journal, head)
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
        _remember(conn, journal, ctx.policy.key, whole=rebuild)
        conn.execute("DELETE FROM uncommitted")
        conn.executemany("INSERT INTO uncommitted VALUES (?)", ((rel,) for rel in pending))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('uncommitted', 'known')")
        conn.execute("DELETE FROM merged")
        conn.executemany("INSERT INTO merged VALUES (?, ?)", sorted(folded.merged.items()))
        _remember_expiry(conn, folded)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('cycles', ?)",
                     (jsonc.dumps(folded.cycles),))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('signature', ?)", (sig,))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return changed


def _remember_expiry(conn: sqlite3.Connection, folded: Fold) -> None:
    """Keep the first day on which each fact, and each key merged into one, may drop by
    date (the rules' `expires`): what a later date needs to know (`_next_day`)."""
    conn.execute("DELETE FROM expires")
    ruled = folded.ruled
    if ruled is None:
        conn.execute("DELETE FROM meta WHERE name = 'expires'")
        return
    live = folded.facts.keys() | folded.merged.keys()
    conn.executemany("INSERT INTO expires VALUES (?, ?)",
                     sorted((key, day.isoformat()) for key, day in ruled.expires.items()
                            if key in live))
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('expires', 'known')")


def _next_day(conn: sqlite3.Connection, old_base: list[str], base: list[str],
              date: dt.date) -> int:
    """Carry the rows from the date the index was signed on to `date`, a later one with
    the same config (`old_base`, `base`: the signatures' [date, other inputs]): remove
    the facts due to drop by then; the rows changed. `_Full` when another input changed,
    the date went back, the days are not known (an index an older version made) or a
    key due is merged with another (its group is judged again)."""
    if old_base[1] != base[1] or not old_base[0] < base[0]:
        raise _Full  # another config or version, or an earlier date
    if _meta(conn, "expires") != "known":
        raise _Full
    due = [key for (key,) in conn.execute("SELECT key FROM expires WHERE day <= ? ORDER BY key",
                                          (date.isoformat(),))]
    changed = 0
    for key in due:
        if _merged(conn, key):
            raise _Full  # a group of one writer's same titles: who wins may change
        if conn.execute("SELECT 1 FROM facts WHERE key = ?", (key,)).fetchone():
            _delete(conn, key)
            changed += 1
    conn.execute("DELETE FROM expires WHERE day <= ?", (date.isoformat(),))
    return changed


def kept_fold(ctx: Context, journal: Journal, date: dt.date) -> Fold:
    """The fold a distill would make of `journal` on `date`, going on (as the distiller
    does) from the replay the last distill kept, and keeping nothing itself. After a
    distill, lessons the index could not append (a new day, lessons a pull or the
    outbox brought, memory adopted) made `write` and `recall` fold the whole journal
    again: at 100k lessons, ~11 s."""
    layout, agents = ctx.layout, ctx.agents
    state = layout.state_dir
    replays = ReplayCache(state, replay_key(agents, ctx.policy.key))
    folded = ctx.fold(journal.entries, date, agents=agents,
                      files=files_digest(journal.items, journal.digest),
                      kept=lambda: kept_replay(ctx.repo.main_root, ctx.repo.common_dir,
                                               layout.memory_root, replays, FoldCache(state),
                                               RulesStore(state), NearStore(state)))
    folded.kept = None  # the distill keeps its own replay: nothing of this one is saved
    return folded


def _stamp(fact: Fact) -> str:
    """What makes a stored row stale: the entry that states the fact, and who holds it."""
    return f"{fact.path}|{' '.join(fact.holders)}|{fact.title}"


def _remember(conn: sqlite3.Connection, journal: Journal, policy_key: object,
              whole: bool = False) -> None:
    """Keep what appending needs: the files seen, every key used, the newest entry, every
    path an entry cites, and the agents with plain entries (their topics depend on the
    rest of the journal). Only the files the index has not seen are added when every
    file it has is still there with the bytes it had, judged under the same policy
    (`remembered`), and not `whole`: at 100k lessons, reading every entry again took ~4 s."""
    files = [rel for rel, _ in journal.entries]
    files += [rel for rel, why in journal.invalid.items() if why != (MISNAMED,)]
    xor = files_digest(journal.items, journal.digest)
    seen = None if whole else _seen(conn, journal, xor, policy_key)
    if seen is None:
        _remember_all(conn, files, journal.entries)
        told = xor(files)
    else:
        new = [rel for rel in files if rel not in seen]
        _remember_new(conn, new, journal)
        told = int(str(_meta(conn, "remembered")).split(" ")[-1], 16) ^ xor(new)
    _tell(conn, policy_key, told)
    agents = sorted({rel.split("/", 1)[0] for rel in journal.plain})
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('plain', ?)", (jsonc.dumps(agents),))


def _seen(conn: sqlite3.Connection, journal: Journal, xor: Callable[[Iterable[str]], int],
          policy_key: object) -> set[str] | None:
    """The entry files the index has seen, when each is in `journal` as it was then
    (their digests' XOR, `remembered`, is the same, under the same policy); else None."""
    told = _meta(conn, "remembered")
    if told is None or not told.startswith(repr(policy_key) + " "):
        return None
    seen = set(map(_FIRST, conn.execute("SELECT agent || ? || name FROM files",
                                        (f"/{JOURNAL}/",))))
    if not seen <= journal.items.keys():
        return None  # a file seen is gone
    if told != f"{policy_key!r} {xor(seen):x}":
        return None  # a file seen is not what it was
    return seen


def _tell(conn: sqlite3.Connection, policy_key: object, digest: int | None) -> None:
    """Record the digest of the files the index has seen (None: not known)."""
    if digest is None:
        conn.execute("DELETE FROM meta WHERE name = 'remembered'")
    else:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('remembered', ?)",
                     (f"{policy_key!r} {digest:x}",))


def _remember_all(conn: sqlite3.Connection, files: list[str],
                  entries: list[tuple[str, Entry]]) -> None:
    conn.execute("DELETE FROM files")
    conn.executemany("INSERT OR IGNORE INTO files VALUES (?, ?)",
                     (_split(rel) for rel in files))
    latest: dict[str, tuple[tuple[dt.datetime, str], Entry]] = {}
    for rel, entry in entries:
        seen = latest.get(entry.key)
        if seen is None or (entry.created, rel) > seen[0]:
            latest[entry.key] = ((entry.created, rel), entry)
    conn.execute("DELETE FROM keys")
    conn.executemany("INSERT INTO keys VALUES (?, ?)",
                     ((key, _norm(entry)) for key, (_, entry) in latest.items()))
    conn.execute("DELETE FROM mentions")
    conn.executemany("INSERT INTO mentions VALUES (?, ?, ?, ?)",
                     (row for rel, entry in entries for row in _mentions(rel, entry)))
    conn.execute("DELETE FROM refs")
    conn.executemany("INSERT OR IGNORE INTO refs VALUES (?)",
                     ((path,) for _, entry in entries for path in _cited(entry)))
    newest = max((when for when, _ in latest.values()), default=None)
    last = jsonc.dumps([newest[0].isoformat(), newest[1]] if newest else None)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('last', ?)", (last,))


def _remember_new(conn: sqlite3.Connection, new: list[str], journal: Journal) -> None:
    """`_remember_all`'s rows for the files `new`, over those of the files seen."""
    conn.executemany("INSERT INTO files VALUES (?, ?)", map(_split, new))
    fresh = set(new)
    entries = [(rel, entry) for rel, entry in journal.entries if rel in fresh]
    if not entries:
        return
    by_rel = dict(journal.entries)
    for rel, entry in entries:
        conn.executemany("INSERT INTO mentions VALUES (?, ?, ?, ?)", _mentions(rel, entry))
        conn.executemany("INSERT OR IGNORE INTO refs VALUES (?)",
                         ((path,) for path in _cited(entry)))
    for key in sorted({entry.key for _, entry in entries}):
        rels = [rel for (rel,) in conn.execute(
            "SELECT rel FROM mentions WHERE key = ? AND role = 'key'", (key,))]
        _, rel = max((by_rel[rel].created, rel) for rel in rels)
        conn.execute("INSERT OR REPLACE INTO keys VALUES (?, ?)", (key, _norm(by_rel[rel])))
    last = jsonc.loads(_meta(conn, "last") or "null")
    newest = max((entry.created, rel) for rel, entry in entries)
    if last is None or newest > (dt.datetime.fromisoformat(last[0]), last[1]):
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('last', ?)",
                     (jsonc.dumps([newest[0].isoformat(), newest[1]]),))


def _mentions(rel: str, entry: Entry) -> list[tuple[str, str, str, str]]:
    """(key, role, entry path, the entry's key): each key the entry writes or removes."""
    out = [(entry.key, "key", rel, entry.key)]
    out += [(old, "supersedes", rel, entry.key) for old in entry.supersedes]
    out += [(old, "retracts", rel, entry.key) for old in entry.retracts]
    out += [(old, "drops", rel, entry.key) for old in entry.drops]
    return out


def _split(rel: str) -> tuple[str, str]:
    """(agent, file name) of a memory-root-relative entry path."""
    return rel.split("/", 1)[0], rel.rsplit("/", 1)[-1]


def _meta(conn: sqlite3.Connection, name: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


class _Full(Exception):
    """This change needs the full update (see the module docstring)."""


def _append(ctx: Context, conn: sqlite3.Connection, date: dt.date, sig: str) -> int | None:
    """Index only the new entry files; None when the change needs the full update."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        changed = _append_new(ctx, conn, date, sig)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('signature', ?)", (sig,))
        conn.execute("COMMIT")
        return changed
    except _Full:
        conn.execute("ROLLBACK")
        return None
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _append_new(ctx: Context, conn: sqlite3.Connection, date: dt.date, sig: str) -> int:
    stored = _meta(conn, "signature")
    last = jsonc.loads(_meta(conn, "last") or "null")
    if stored is None or last is None or jsonc.loads(_meta(conn, "cycles") or "null") != []:
        raise _Full  # a broken cycle: a new entry may land among the indexed ones
    (old_base, old_folders), (base, folders) = _signed(stored), _signed(sig)
    if old_folders.keys() != folders.keys():
        raise _Full  # another set of agents
    changed = _next_day(conn, old_base, base, date) if old_base != base else 0
    found: list[tuple[str, str]] = []
    for agent, mtime in folders.items():
        if mtime != old_folders[agent]:
            found += _new_files(ctx.layout, conn, agent)
    if len(found) > APPEND_LIMIT:
        raise _Full
    entries = sorted(_read_new(ctx, conn, found, set(jsonc.loads(_meta(conn, "plain") or "[]"))),
                     key=lambda pe: (pe[1].created, pe[0]))
    newest = (dt.datetime.fromisoformat(last[0]), last[1])
    if entries and (entries[0][1].created, entries[0][0]) <= newest:
        raise _Full  # it sorts among the indexed entries: the replay changes
    if len(entries) > 1 and any(e.supersedes or e.retracts or e.drops for _, e in entries):
        raise _Full  # corrections among several new entries: their own order decides
    fresh = {rel for rel, _ in entries}
    if any(fresh.intersection(e.knew) for _, e in entries):
        raise _Full  # one new entry knew another: the clocks may not say their order
    head, indexed_at = _head(ctx), _meta(conn, "head")  # asked last: it costs git calls
    if head != indexed_at:
        if not kept_by(ctx, conn, indexed_at or "", head):
            raise _Full  # refs are judged against HEAD's tree: a commit may have removed some
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
    for rel, entry in entries:  # each newer than every one before it
        if _named_first(conn, entry.key):
            raise _Full  # an indexed entry that names this key comes after its first entry
        conn.executemany("INSERT INTO mentions VALUES (?, ?, ?, ?)", _mentions(rel, entry))
        conn.executemany("INSERT OR IGNORE INTO refs VALUES (?)",
                         ((path,) for path in _cited(entry)))
        conn.execute("INSERT OR IGNORE INTO uncommitted VALUES (?)", (rel,))
        if entry.supersedes or entry.retracts or entry.drops:
            changed += _fold_correction(ctx, conn, rel, entry, date)
        else:
            changed += _fold_one(ctx, conn, rel, entry, date)
        newest = (entry.created, rel)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('last', ?)",
                 (jsonc.dumps([newest[0].isoformat(), newest[1]]),))
    return changed


def _signed(sig: str) -> tuple[list[str], dict[str, int | None]]:
    """([the date, the other inputs], each agent folder's mtime) a signature
    (`index.signature`) was made of; `_Full` when it is not one (an index signed by an
    older version)."""
    lines = sig.split("\n")
    if len(lines) < 3 or len(lines[0]) != 10 or not lines[1].startswith("[") or lines[-1]:
        raise _Full
    day, inputs, *rows = lines
    folders: dict[str, int | None] = {}
    for row in rows[:-1]:
        agent, _, mtime = row.partition(" ")  # a name: no space in it
        if not agent or not (mtime == "-" or (mtime.isascii() and mtime.isdigit())):
            raise _Full
        folders[agent] = None if mtime == "-" else int(mtime)
    return [day, inputs], folders


def _named_first(conn: sqlite3.Connection, key: str) -> bool:
    """Whether a new entry of `key` is the first one, besides itself, of an indexed entry
    that names the key (supersedes or retracts it): the replay puts that entry after the
    new one, whatever the clocks say (`order.causal_order`), so appending would leave it
    too early."""
    return conn.execute(
        "SELECT 1 FROM mentions m WHERE m.key = ? AND m.role IN ('supersedes', 'retracts')"
        " AND NOT EXISTS (SELECT 1 FROM mentions o WHERE o.key = m.key AND o.role = 'key'"
        " AND o.rel != m.rel)", (key,)).fetchone() is not None


def kept_by(ctx: Context, conn: sqlite3.Connection, old: str, new: str) -> bool:
    """Whether HEAD moving from `old` to `new` leaves the indexed facts as they were, so
    appending goes on: `new` descends from `old`, and the files the commits between them
    added or deleted (a rename is both) are no path an indexed entry cites, nor one its
    citation's renames or folder reach (each ref exists as it did; no cited file was
    deleted), and journal entries come in one commit that holds every indexed entry not
    committed before (the distill's commit: entries that were pending are ordered
    after every committed one, as they were). An agent's commit of code and a distill
    keep the index; it is read in full after a pull, a checkout or a commit of a cited
    file's deletion. Two git calls, and a listing of the memory root when entries came."""
    root, prefix = ctx.repo.main_root, ctx.layout.memory_root + "/"
    changes = memgit.files_added_or_deleted(root, old, new)
    if changes is None:
        return False
    cited = {path for (path,) in conn.execute("SELECT path FROM refs")}
    if changes and cited:
        reach = memgit.reached(cited, memgit.renamed_in(root, new, ctx.layout.state_dir))
        if any(_within(path, reach) for _, path in changes):
            return False
    entries = {sha for sha, path in changes
               if path.startswith(prefix) and _is_entry(path[len(prefix):])}
    if not entries:
        return True
    if len(entries) != 1:
        return False
    held = _held(ctx, conn, new, changes)
    if held is None:  # not known which are not committed yet: ask of every indexed entry
        known = set(map(_FIRST, conn.execute(  # built in C: 100k paths at 100k lessons
            "SELECT ? || rel FROM mentions WHERE role = 'key'", (prefix,))))
        held = known <= memgit.tree_files(root, new, prefix)
    if held:  # every indexed entry is committed now
        conn.execute("DELETE FROM uncommitted")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('uncommitted', 'known')")
    return held


ASK_LIMIT = 1000  # entries to look for in a commit one by one, not by listing its journal


def _held(ctx: Context, conn: sqlite3.Connection, new: str,
          changes: list[tuple[str, str]]) -> bool | None:
    """Whether commit `new` holds every indexed entry, asked of only those it may lack:
    the indexed entries not committed yet when the index last looked (`uncommitted`:
    those not in HEAD's tree at the full update, and those appended since), and the
    indexed entries the commits since added or deleted (the rest were committed then,
    and nothing deleted them since). None when the index does not know which are not
    committed yet (an index that lost them), or there are too many to ask one by one."""
    if _meta(conn, "uncommitted") != "known":
        return None
    prefix = ctx.layout.memory_root + "/"
    ask = set(map(_FIRST, conn.execute("SELECT ? || rel FROM uncommitted", (prefix,))))
    for _, path in changes:
        rel = path[len(prefix):]
        if path.startswith(prefix) and _is_entry(rel) and conn.execute(
                "SELECT 1 FROM files WHERE agent = ? AND name = ?", _split(rel)).fetchone():
            ask.add(path)
    if len(ask) > ASK_LIMIT:
        return None
    return not ask or ask <= memgit.tree_has(ctx.repo.main_root, new, sorted(ask))


def _not_committed(ctx: Context, journal: Journal, head: str) -> list[str]:
    """The valid entries of `journal` that commit `head`'s tree does not hold (all of them
    before the first commit): what the next commit of entries is asked for (`_held`)."""
    prefix = ctx.layout.memory_root + "/"
    committed = memgit.tree_files(ctx.repo.main_root, head, prefix) if head else set()
    return [rel for rel, _ in journal.entries if prefix + rel not in committed]


_FIRST = operator.itemgetter(0)


def _within(path: str, paths: set[str]) -> bool:
    """Whether `path` or a folder above it is one of `paths`."""
    while path not in paths:
        if "/" not in path:
            return False
        path = path.rsplit("/", 1)[0]
    return True


def _is_entry(rel: str) -> bool:
    """Whether a memory-root-relative path is a journal entry's (`<agent>/journal/<file>`)."""
    parts = rel.split("/")
    return len(parts) == 3 and parts[1] == JOURNAL


def _cited(entry: Entry) -> set[str]:
    """The repository paths an entry cites (its refs and recorded citations)."""
    return {split_ref(ref)[0].strip("/") for ref in (*entry.refs, *recorded_refs(entry.cited))}


def _head(ctx: Context) -> str:
    """The commit HEAD names ("" before the first): the tree the facts' refs were judged in."""
    known = gitcore.head_from_files(ctx.repo.common_dir)
    if known is not None:
        return known
    res = gitcore.run(["rev-parse", "--verify", "--quiet", "HEAD"], ctx.repo.main_root,
                      clean=True, check=False)
    return res.text().strip() if res.ok else ""


def _new_files(layout: Layout, conn: sqlite3.Connection, agent: str) -> list[tuple[str, str]]:
    """(agent, name) of the entry files of `agent`'s folder the index has not seen."""
    try:
        names = set(os.listdir(layout.journal_dir(agent)))
    except OSError:
        raise _Full from None
    seen = set(map(_FIRST, conn.execute("SELECT name FROM files WHERE agent = ?", (agent,))))
    # every name the index holds is an entry's name: only the new ones are matched (at 5k
    # files a folder, matching every name took a write or a capture ~1 ms)
    new = sorted(filter(ENTRY_NAME_RE.fullmatch, names - seen))
    if seen - names or not new:
        raise _Full  # a file gone, or one replaced under the same name
    return [(agent, name) for name in new]


def _read_new(ctx: Context, conn: sqlite3.Connection, found: list[tuple[str, str]],
              plain: set[str]) -> list[tuple[str, Entry]]:
    """The valid entries of the new files, judged as the journal reader judges them;
    every new file is remembered (an invalid one stays out of the facts)."""
    out = []
    told = _meta(conn, "remembered")
    judged_by = repr(ctx.policy.key)
    xor = (int(told.split(" ")[-1], 16)
           if told is not None and told.startswith(judged_by + " ") else None)
    for agent, name in found:
        path = os.path.join(ctx.layout.journal_dir(agent), name)
        conn.execute("INSERT INTO files VALUES (?, ?)", (agent, name))
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                xor = None  # its digest is the reader's to say: the next full update reads all
                continue  # never read through a link: the reader judges it invalid too
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            raise _Full from None
        rel = f"{agent}/{JOURNAL}/{name}"
        if xor is not None:  # the files seen, for the full update (`_remember`)
            xor ^= int.from_bytes(file_digest(rel, data))
        if not data.removeprefix(b"\xef\xbb\xbf").startswith(b"---"):
            raise _Full  # a plain entry: its topic depends on its agent's other entries
        try:
            entry = parse_valid(data, ctx.policy, filename=name, folder_agent=agent)
        except InvalidEntry:
            continue
        if entry.agent in plain:
            raise _Full  # a new topic may change the topic of that agent's plain entries
        out.append((rel, entry))
    _tell(conn, ctx.policy.key, xor)
    return out


def _fold_correction(ctx: Context, conn: sqlite3.Connection, rel: str, entry: Entry,
                     date: dt.date) -> int:
    """Fold one entry that supersedes, retracts or drops keys, newer than every indexed
    one, onto the rows, as the fold's replay applies it (`fold._replay`): a lesson that
    states a fact takes each superseded live fact's holders and removes it, then removes
    each retracted one; a retraction or drop alone states no fact, removes each retracted
    fact, and takes its writer off each dropped one (which goes when nobody holds it).
    Only where the rows say all that changes (else `_Full`): no key it names was merged
    with another (`merged`), and each key it supersedes has a row (one with none may be
    live under a dated rule, its holders passing on). Returns rows changed."""
    states = bool(entry.supersedes) or not (entry.retracts or entry.drops)
    named = _named_rows(conn, entry, states)
    changed = 0
    passed = {h for key in entry.supersedes if key in named for h in named[key]} if states \
        else set()
    for key in dict.fromkeys((*entry.supersedes, *entry.retracts) if states else entry.retracts):
        if named.pop(key, None) is not None:
            _delete(conn, key)
            changed += 1
    if states:
        return changed + _fold_one(ctx, conn, rel, entry, date, passed)
    for key in dict.fromkeys(entry.drops):
        holders = named.pop(key, None)
        left = [h for h in holders or () if h != entry.agent]
        if holders is None or left == holders:
            continue  # no row (or retracted just now), or not held by the writer
        if left:
            _set_holders(conn, key, left)
        else:
            _delete(conn, key)
        changed += 1
    conn.execute("INSERT OR REPLACE INTO keys VALUES (?, ?)", (entry.key, _norm(entry)))
    return changed


def _named_rows(conn: sqlite3.Connection, entry: Entry, states: bool) -> dict[str, list[str]]:
    """{key the entry corrects: its row's holders}, for the keys with a row; `_Full` when
    the rows do not say what the correction changes."""
    out: dict[str, list[str]] = {}
    for key in sorted({*entry.supersedes, *entry.retracts, *entry.drops} - {entry.key}):
        seen = conn.execute("SELECT norm FROM keys WHERE key = ?", (key,)).fetchone()
        if seen is None:
            continue  # no lesson ever stated it: nothing to correct
        if _merged(conn, key):
            raise _Full  # merged with another key of its title: they may come apart
        row = conn.execute("SELECT holders FROM facts WHERE key = ?", (key,)).fetchone()
        if row is None:
            if states and key in entry.supersedes:
                raise _Full  # live under a dated rule, or not live: its holders may pass on
            continue
        out[key] = row[0].split()
    return out


def _merged(conn: sqlite3.Connection, key: str) -> bool:
    """Whether the fold merged `key` with another of its writer's facts (same title)."""
    return conn.execute("SELECT 1 FROM merged WHERE loser = ? OR winner = ?",
                        (key, key)).fetchone() is not None


def _set_holders(conn: sqlite3.Connection, key: str, holders: list[str]) -> None:
    """A row's holders (and its stamp) changed in place: the full-text row stays."""
    path, title = conn.execute("SELECT path, title FROM facts WHERE key = ?", (key,)).fetchone()
    entry_path = "/".join(str(path).split("/")[-3:])  # <agent>/journal/<file>, as `_stamp`
    text = " ".join(sorted(holders))
    conn.execute("UPDATE facts SET holders = ?, stamp = ? WHERE key = ?",
                 (text, f"{entry_path}|{text}|{title}", key))


def _fold_one(ctx: Context, conn: sqlite3.Connection, rel: str, entry: Entry,
              date: dt.date, passed: set[str] | None = None) -> int:
    """Fold one entry, newer than every indexed one, onto the rows (`passed`: the holders
    of the facts it supersedes); returns rows changed. A live fact of its writer with
    the same title (another key) is merged into it, as the fold's rules merge one
    writer's same titles: the newest wins and takes the holders (`rules.apply`)."""
    seen = conn.execute("SELECT 1 FROM keys WHERE key = ?", (entry.key,)).fetchone()
    row = conn.execute("SELECT holders, norm, path FROM facts WHERE key = ?",
                       (entry.key,)).fetchone()
    if seen and row is None:
        raise _Full  # a key removed or dropped before: its past holders come back with it
    folded = ctx.fold([(rel, entry)], date, report_near=False)
    fact = folded.facts.get(entry.key)
    norm = "" if fact is None else _norm(fact)
    if row is not None and _merged(conn, entry.key) and (
            fact is None or norm != row[1] or _writer(row[2]) != entry.agent):
        raise _Full  # its merged keys split off: dropped, another title or another writer
    conn.execute("INSERT OR REPLACE INTO keys VALUES (?, ?)", (entry.key, _norm(entry)))
    if fact is None:  # dropped on this date (expired, refs gone)
        if row is not None:
            _delete(conn, entry.key)
            return 1
        return 0
    holders = set(fact.holders) | (passed or set())
    if row is not None:
        holders |= set(row[0].split())
    losers = []  # a fact of the same writer and title: merged into this one
    if norm:
        for other, path, held in conn.execute(
                "SELECT key, path, holders FROM facts WHERE norm = ? AND key != ?",
                (norm, entry.key)).fetchall():
            if _writer(path) == entry.agent:  # another writer's same title stays apart
                losers.append(other)
                holders |= set(held.split())
    if row is not None:
        _delete(conn, entry.key)
    for loser in losers:  # its day stays: a merged key that drops splits the group again
        _delete(conn, loser, keep_day=True)
        conn.execute("UPDATE merged SET winner = ? WHERE winner = ?", (entry.key, loser))
        conn.execute("INSERT OR REPLACE INTO merged VALUES (?, ?)", (loser, entry.key))
    _insert(conn, fact._replace(holders=tuple(sorted(holders))), ctx.layout)
    day = folded.ruled.expires.get(entry.key) if folded.ruled is not None else None
    if day is not None:  # its own day (a restated key's earlier entry's no longer counts)
        conn.execute("INSERT OR REPLACE INTO expires VALUES (?, ?)",
                     (entry.key, day.isoformat()))
    return 1 + len(losers)


def _writer(path: str) -> str:
    """The agent whose folder holds a fact's newest entry (`facts.path`:
    `<memory root>/<agent>/journal/<file>`): the writer its same-title group is of."""
    return path.rsplit("/", 3)[-3]


def _norm(fact: Fact | Entry) -> str:
    """The normalised title facts merge by ('' for an episodic record: never merged)."""
    return "" if fact.type == "episodic" else normalise_title(fact.title)


def _delete(conn: sqlite3.Connection, key: str, keep_day: bool = False) -> None:
    """Remove a fact's row, its full-text row and (unless `keep_day`: a key merged into
    another) the day it may drop by date."""
    if not keep_day:
        conn.execute("DELETE FROM expires WHERE key = ?", (key,))
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
        " type, stamp, norm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (fact.key, fact.title, " ".join(fact.tags), fact.topic, fact.body,
         " ".join(fact.holders), fact.created.date().isoformat(), path, fact.confidence,
         fact.type, _stamp(fact), _norm(fact)),
    )
    conn.execute("INSERT INTO fts(rowid, title, tags, topic, body) VALUES (?, ?, ?, ?, ?)",
                 (cur.lastrowid, fact.title, " ".join(fact.tags), fact.topic, fact.body))
