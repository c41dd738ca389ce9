"""The fold and render step of a distill, and the fold the last distill made.

The previous fold's facts are what the commit message and the report compare
against; they are cached under the fold's signature (`cache.FoldCache`, as
plain rows: the comparison never makes a `Fact` of an unchanged one) so that
an unchanged journal is not folded twice. The topic renderings are kept beside
them, under the token of the fold they were rendered from: the next render
reuses a topic whose facts equal those rows (`render.Earlier`).
"""

from __future__ import annotations

import datetime as dt
import json
import operator

from journal_mem import hashes
from journal_mem.distill.files import digest, fs_clock, settled_stamp
from journal_mem.gitops import gitcore, memgit
from journal_mem.journal.cache import (
    FoldCache,
    NearStore,
    ReplayCache,
    RulesStore,
    TopicStore,
    changed_among,
    changed_rows,
    save_replay_head,
)
from journal_mem.journal.fold import FACT_FIELDS, FactRow, Fold, fact_row
from journal_mem.journal.foldstate import FoldState, parse_state
from journal_mem.journal.kept import kept_replay, replay_key
from journal_mem.journal.reader import Journal
from journal_mem.journal.render import Earlier, Rendered, Stamp, TopicCache, code_key, render
from journal_mem.journal.replay import Kept, files_digest
from journal_mem.layout import TOPICS
from journal_mem.repo import Context
from journal_mem.tuples import NamedTuple


class Step(NamedTuple):
    """One fold and render of the journal, with the fold it replaces."""

    date: dt.date
    agents: list[str]
    after: Fold  # the new fold
    rows: dict[str, FactRow]  # its facts as rows (`fact_row`)
    rendered: Rendered
    state: FoldState | None  # the distill state on disk
    base: FoldState | None  # the state the commit changes (HEAD's when committing)
    before: dict[str, FactRow]  # the facts of the fold `base` made, as rows
    folded: tuple[str, ...]  # every valid entry, sorted
    token: str = ""  # the fold cache's token for `after` ("" when not kept)
    replay: str = ""  # the token of its replay as kept (`cache.ReplayCache`; "" if not)
    changed: set[str] | None = None  # the keys of `rows` whose row differs from `before`'s
    topics: TopicStore | None = None  # the topic renderings `rendered` reused, as loaded
    memory: TopicStore | None = None  # and the MEMORY.md files


class Loaded:
    """The caches `fold_step` reads, loaded when made: the distiller makes it while `git
    status` runs, which at 10k lessons leaves its process waiting ~30-80 ms."""

    __slots__ = ("fold", "memory", "near", "replays", "rules", "topics")

    def __init__(self, ctx: Context, *, save: bool, rebuild: bool = False) -> None:
        state_dir = ctx.layout.state_dir
        self.replays = (ReplayCache(state_dir, replay_key(ctx.agents, ctx.policy.key))
                        if save else None)
        self.fold = FoldCache(state_dir)
        self.rules = RulesStore(state_dir)
        self.topics = TopicStore(state_dir, code_key())
        self.memory = TopicStore(state_dir, code_key(), MEMORY)
        self.near = NearStore(state_dir)
        if self.replays is not None and not rebuild:  # what going on from it reads
            self.replays.load()
            self.rules.read()
            self.near.read()


def fold_step(ctx: Context, journal: Journal, date: dt.date, *, committing: bool,
              save: bool, rebuild: bool = False, loaded: Loaded | None = None) -> Step:
    """Fold `journal` on `date` for every agent and render it; with `save`, keep the fold
    for the next distill (its renderings are kept once written: `keep_topics`) and its
    replay, going on from the replay the last one kept unless `rebuild`. `loaded`: the
    caches it reads, loaded already (with the same `save` and `rebuild`)."""
    agents = ctx.agents
    loaded = loaded or Loaded(ctx, save=save, rebuild=rebuild)
    replays, kept, rules = loaded.replays, loaded.fold, loaded.rules
    after = ctx.fold(journal.entries, date, agents=agents,
                     files=files_digest(journal.items, journal.digest) if save else None,
                     kept=(lambda: _kept_replay(ctx, replays, kept, rules, loaded.near))
                     if replays and not rebuild else None, settle=False, keep_near=save)
    try:
        step = _rendered(ctx, journal, date, after, agents, loaded,
                         committing=committing, save=save)
    finally:  # the near-duplicates were found in a child meanwhile
        after.settle()
    if save and after.signatures is not None:  # with the replay it goes with
        loaded.near.save(after.signatures, step.replay)
    return step


def _rendered(ctx: Context, journal: Journal, date: dt.date, after: Fold, agents: list[str],
              loaded: Loaded, *, committing: bool, save: bool) -> Step:
    """The rest of `fold_step`, once `after` is folded."""
    layout, config = ctx.layout, ctx.config
    replays, kept, rules = loaded.replays, loaded.fold, loaded.rules
    replay = _keep_replay(replays, after) if replays else ""
    disk = _read(layout.distill_state)
    state = parse_state(disk) if disk is not None else None
    base = committed_state(ctx, disk, state) if committing else state
    before = previous_facts(journal, base, agents, ctx, kept)
    # the facts themselves: a fact is the tuple of its row's values, and compares as its
    # row (56k tuples made again took ~60 ms at 100k); the cache saves plain tuples
    rows: dict[str, FactRow] = dict(after.facts)
    # the one comparison of the facts with the last fold's: of those made again alone when
    # the fold went on from these very rows
    changed = (changed_among(before, rows, after.redone)
               if after.redone is not None and after.rows_from is before
               else changed_rows(before, rows))
    store, memory = loaded.topics, loaded.memory
    rendered_from = kept.rows_of(store.token)  # the fold those renderings were made from
    earlier = Earlier(store.topics, rendered_from,
                      changed if rendered_from is before else None,
                      memory.topics if memory.token == store.token else {},
                      kept.order_of(store.token)) if rendered_from is not None else None
    rendered = render(after, agents, config.budget, earlier)
    folded = tuple(sorted(map(_PATH, journal.entries)))  # in C: 100k at 100k lessons
    token = kept.save(fold_signature(FoldState(date, folded), agents, ctx), rows,
                      (before, changed), rendered.order) if save else ""
    if after.ruled is not None:
        rules.save(after.ruled.fields(), replay, token,
                   {key: fact_row(fact) for key, fact in after.staled.items()})
    return Step(date, agents, after, rows, rendered, state, base, before, folded, token,
                replay, changed, store, memory)


_PATH = operator.itemgetter(0)  # an entry's path in `Journal.entries`
MEMORY = "memory"  # the cache of the MEMORY.md files (`cache.TopicStore`)


def _kept_replay(ctx: Context, replays: ReplayCache | None, facts: FoldCache,
                 decided: RulesStore, near: NearStore) -> Kept | None:
    """`kept.kept_replay` of this checkout (None without a replay cache)."""
    if replays is None:
        return None
    return kept_replay(ctx.repo.main_root, ctx.repo.common_dir, ctx.layout.memory_root,
                       replays, facts, decided, near)


def _keep_replay(replays: ReplayCache, after: Fold) -> str:
    """Keep the replay of `after` for the next fold; its token. `after` lets go of it."""
    kept, after.kept = after.kept, None
    return replays.save(kept.fields()) if kept is not None else ""


def keep_replay_head(ctx: Context, step: Step, commit: str | None) -> None:
    """Record the commit the kept replay of `step` was made against: the distill's commit,
    or HEAD when it made none."""
    if not step.replay:
        return
    head = (commit or gitcore.head_from_files(ctx.repo.common_dir)
            or gitcore.resolve(ctx.repo.main_root, "HEAD") or "")
    save_replay_head(ctx.layout.state_dir, step.replay, head)


def keep_topics(ctx: Context, step: Step) -> None:
    """Keep the topic renderings of `step` for the next distill, once its files are on
    disk: under the token of its fold (none: nothing is kept, the renderings on disk name
    another fold), each file with its stamp when it has settled (`files.settled_stamp`),
    else with the digest of the bytes it was rendered as (`files.digest`), which the next
    distill compares with the file's instead of rendering it again; a reused file not
    rendered again keeps the stamp it was found to hold. Each agent's MEMORY.md is kept
    as its text (`render.MemoryCache`)."""
    if not step.token:
        return
    layout = ctx.layout
    try:
        now = fs_clock(layout)
    except OSError:
        return  # no cache to keep them in: only slower next time
    rendered = step.rendered
    topics: TopicCache = {}

    def stamp(rel: str, name: str) -> Stamp | None:
        data = rendered.files.get(rel)
        held: Stamp | None = None
        if data is None and rel in rendered.kept:
            held, again, _ = rendered.kept[rel]
            data = again.rendered(name)
            if data is None and isinstance(held, tuple):
                # not rendered again: the file held `held` (`_changed`), a stamp already
                # (no `lstat` of ~1k reused files; a change since is a stamp it lacks)
                return held
        settled = settled_stamp(layout, rel, now)
        if settled is not None:
            return settled
        if data is None:  # not rendered again: the file held its digest `held`, so it
            return held  # still does; distills seconds apart render it no more
        return digest(data)

    for (agent, topic), (keys, inputs, names, evicted, where) in rendered.topics.items():
        stamped = [(name, stamp(f"{agent}/{TOPICS}/{name}.md", name)) for name, _ in names]
        topics[(agent, topic)] = (keys, inputs, stamped, evicted, where)
    store = step.topics or TopicStore(layout.state_dir, code_key())
    store.save(topics, step.token)
    memory = step.memory or TopicStore(layout.state_dir, code_key(), MEMORY)
    memory.save(rendered.memory, step.token)


def committed_state(ctx: Context, disk: bytes | None = None,
                    parsed: FoldState | None = None) -> FoldState | None:
    """The distill state in HEAD (None before the first committed distill). `disk`: the
    bytes of the state file on disk, and `parsed` their parse: when HEAD holds those very
    bytes (as after every distill that committed), they are not read from git and parsed
    again (at 100k lessons the 8 MB file took ~85 ms, its hash and a `rev-parse` ~12)."""
    path = ctx.layout.rel(ctx.layout.distill_state)
    root = ctx.repo.main_root
    if disk is not None:
        head = gitcore.run(["rev-parse", "--verify", "--quiet", f"HEAD:{path}"], root,
                           clean=True, check=False)
        if head.ok and head.text().strip() == memgit.blob_id(disk):
            return parsed
    res = gitcore.run(["cat-file", "blob", f"HEAD:{path}"], root, clean=True, check=False)
    return parse_state(res.stdout) if res.ok else None


def _read(path: str) -> bytes | None:
    """A file's bytes, or None when it is missing or unreadable."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def previous_facts(journal: Journal, state: FoldState | None, agents: list[str],
                   ctx: Context, kept: FoldCache | None = None) -> dict[str, FactRow]:
    """The facts of the fold the last distill made (its folded entries on its date), as
    rows: from `kept` (the fold cache) when it holds them."""
    if state is None:
        return {}
    kept = kept or FoldCache(ctx.layout.state_dir)
    cached = kept.facts(fold_signature(state, agents, ctx))
    if cached is not None:
        return cached
    was = set(state.folded)
    entries = [(rel, e) for rel, e in journal.entries if rel in was]
    fold = ctx.fold(entries, state.date, agents=agents, report_near=False)
    return {key: fact_row(fact) for key, fact in fold.facts.items()}


def fold_signature(state: FoldState, agents: list[str], ctx: Context) -> str:
    """What a fold depends on besides entry contents and refs: folded set, date, agents,
    config; and the fields a kept fact's values stand for (`fact_row`)."""
    head = json.dumps([state.date.isoformat(), agents, ctx.config.as_dict(), FACT_FIELDS])
    digest = hashes.sha256_bulk(head.encode())  # JSON has no NUL: the paths, NUL between
    digest.update(("\0" + "\0".join(sorted(state.folded))).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


