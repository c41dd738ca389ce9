"""Citations: what a fact's anchored refs cite, recorded when it is filed and followed
through git at every distill (docs/DESIGN.md, "Memory that checks the code it cites").

**At filing** (`journal/citing.py`: `stamp`), each ref with an anchor (`PATH#L10-L12`,
`PATH#name`) records `COMMIT DIGEST clean|dirty REF` in the entry's `cited`: the
writer's HEAD, the digest of the cited text, and whether that text came from a file
with uncommitted changes. A hand-written entry with no record is judged from the commit
that added it.

**At a distill** (`follow`), each citation is judged at the distilled commit. A
renamed file is followed (git's rename detection); cited lines still there, wherever
they moved, or a symbol whose body is unchanged, say nothing. When the text is gone,
the commit that changed it is the last one, in the history since the citation, after
which the text is no longer there: the fact is then marked with the path and that
commit. Text that was never in this branch's history (a worktree's branch not merged
yet, a dirty file never committed) is not judged yet.

Cost: one `git cat-file --batch-check` of the cited files per distill; a file whose
blob did not change since the last judgement is not read again (`citations.json` in
the state dir); only a citation whose text is gone walks its file's history, once,
beside the other walks of that distill (`_presences`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable

from journal_mem.fsutil import replace_atomic
from journal_mem.gitops import gitcore, lineage, memgit
from journal_mem.gitops.history import object_ids, read_objects
from journal_mem.journal.anchor import (
    CodeChange,
    digest_at,
    line_range,
    split,
    still_there,
    stripped_lines,
)
from journal_mem.journal.citing import Cited, parse, recorded_refs
from journal_mem.journal.fold import Fact, Fold, stale
from journal_mem.schema import Config

CACHE = "citations.json"
CACHE_SCHEMA = 1
SUBJECT_CHARS = 72
_SUBJECT_JUNK = re.compile(r"[`\[\]<>\x00-\x1f]")  # never markup on a fact's line
WALK_LIMIT = 2000  # commits of one file's history read for a citation never recorded


# --- at a distill ------------------------------------------------------------------


class _Cache:
    """{citation: [blob judged, verdict or None]} in the state dir; a cache only."""

    def __init__(self, state_dir: str | None) -> None:
        self.path = os.path.join(state_dir, CACHE) if state_dir else None
        self.old: dict[str, list[object]] = {}
        self.new: dict[str, list[object]] = {}
        if self.path is None:
            return
        try:
            with open(self.path, encoding="utf-8") as fh:
                raw = json.load(fh)
            if raw.get("schema") == CACHE_SCHEMA and isinstance(raw.get("cites"), dict):
                self.old = raw["cites"]
        except (OSError, ValueError, AttributeError):
            self.old = {}

    def save(self) -> None:
        if self.path is None or self.new == self.old:
            return
        try:
            replace_atomic(self.path, json.dumps({"schema": CACHE_SCHEMA, "cites": self.new},
                                                 sort_keys=True))
        except OSError:
            pass  # a cache: the next distill judges again


def _change(raw: object) -> CodeChange | None:
    if isinstance(raw, list) and len(raw) == 4 and all(isinstance(x, str) for x in raw):
        return CodeChange(raw[0], raw[1], raw[2], raw[3] == "gone")
    return None


class _Git:
    """The git reads of one follow, each made once."""

    def __init__(self, root: str, rev: str, state_dir: str | None = None, *,
                 known: bool = False) -> None:
        self.root, self.rev, self.state_dir = root, rev, state_dir
        self.head = rev if known else gitcore.resolve(root, rev) or ""
        self._renames: dict[str, str] | None = None
        self._tree: frozenset[str] | None = None
        # what each commit is to `head`, asked once: the citations of one write share their
        # commit (five walks from one commit asked git the same three questions five times)
        self._asked: dict[tuple[str, str], object] = {}

    def blobs(self, paths: set[str]) -> dict[str, str]:
        """path → object id at `rev` of the paths that exist there (files and folders),
        each looked up on its own: `ls-tree` given a folder and a file inside it lists
        the file, not the folder."""
        if not paths or not self.head:
            return {}
        names = sorted(paths)
        found = object_ids(self.root, [f"{self.head}:{p}" for p in names])
        return {p: obj[0] for p, obj in zip(names, found, strict=True)
                if obj is not None and obj[1] in ("blob", "tree")}

    def moved(self, path: str) -> str | None:
        """Where a path gone from `rev` was renamed to, or None."""
        if self._renames is None:
            self._renames = memgit.renamed_in(self.root, self.head, self.state_dir)
            self._tree = memgit.tree_paths(self.root, self.head)
        assert self._tree is not None
        return memgit.moved_to(path, self._renames, self._tree)

    def _once(self, question: str, commit: str, ask: Callable[[], object]) -> object:
        """`ask()`, asked of git once per `question` about `commit`."""
        if (question, commit) not in self._asked:
            self._asked[(question, commit)] = ask()
        return self._asked[(question, commit)]

    def is_ancestor(self, commit: str) -> bool:
        return self._once("ancestor", commit, lambda: gitcore.run(
            ["merge-base", "--is-ancestor", commit, self.head], self.root, clean=True,
            check=False).returncode == 0) is True

    def exists(self, commit: str) -> bool:
        return self._once("exists", commit, lambda: gitcore.run(
            ["cat-file", "-e", f"{commit}^{{commit}}"], self.root, clean=True,
            check=False).ok) is True

    def merge_base(self, commit: str) -> str | None:
        def ask() -> str | None:
            res = gitcore.run(["merge-base", commit, self.head], self.root, clean=True,
                              check=False)
            return res.text().strip() or None if res.ok else None

        found = self._once("base", commit, ask)
        return found if isinstance(found, str) else None

    def log(self, args: list[str], paths: list[str]) -> list[tuple[str, str]]:
        """(commit, subject) of `git log ARGS -- PATHS`, oldest first."""
        return self.logs([(args, paths)])[0]

    def logs(self, asked: list[tuple[list[str], list[str]]]) -> list[list[tuple[str, str]]]:
        """`log` of each (ARGS, PATHS), the git processes run side by side
        (`gitcore.run_all`).

        Walks of one range with no merge in it are one `git log --name-only` of all
        their paths, split by path: there each path's history is the commits of the
        range that changed it, in the same order. Five citations gone since one
        write walked five logs, each diffing every commit of the range. A range with
        a merge keeps a log per walk, as git's history simplification picks a merge's
        parent by the paths it is given."""
        ranges: dict[str, list[int]] = {}
        for i, (args, paths) in enumerate(asked):
            if len(args) == 1 and ".." in args[0] and not any(map(_magic, paths)):
                ranges.setdefault(args[0], []).append(i)
        shared = [r for r, walks in ranges.items() if len(walks) > 1]
        alone = sorted(set(range(len(asked))) - {i for r in shared for i in ranges[r]})
        # each shared range's merge check beside its log: a range with a merge (rare
        # in the walks of one write) has its walks logged again, one by one
        results = gitcore.run_all(
            [["rev-list", "--min-parents=2", "-n", "1", r, "--"] for r in shared]
            + [[*_LOG, "--name-only", "-z", r, "--",
                *sorted({p for i in ranges[r] for p in asked[i][1]})] for r in shared]
            + [[*_LOG, *asked[i][0], "--", *asked[i][1]] for i in alone],
            self.root, clean=True)
        merges, together = results[:len(shared)], results[len(shared):2 * len(shared)]
        out: list[list[tuple[str, str]]] = [[] for _ in asked]
        for i, res in zip(alone, results[2 * len(shared):], strict=True):
            out[i] = _commits(res.stdout)
        again = []
        for r, merge, res in zip(shared, merges, together, strict=True):
            if not merge.ok or merge.stdout.strip():
                again += ranges[r]
                continue
            touched = _touched(res.stdout)
            for i in ranges[r]:
                out[i] = [commit for commit, names in touched
                          if any(_under(name, p) for name in names for p in asked[i][1])]
        for i, res in zip(again, gitcore.run_all(
                [[*_LOG, *asked[i][0], "--", *asked[i][1]] for i in again], self.root,
                clean=True), strict=True):
            out[i] = _commits(res.stdout)
        return out


_LOG = ["log", "--reverse", "--topo-order", "--no-renames", "--format=%x01%H%x00%s"]


def _magic(path: str) -> bool:
    """Whether git would read `path` as more than itself (a glob, a magic pathspec)."""
    return path.startswith(":") or any(c in path for c in "*?[\\")


def _under(name: str, path: str) -> bool:
    """Whether the pathspec `path` (no magic) matches the file `name`."""
    return name == path or name.startswith(path.rstrip("/") + "/")


def _commits(out: bytes) -> list[tuple[str, str]]:
    """(commit, subject) of each commit `_Git.logs` printed."""
    commits = []
    for chunk in out.decode("utf-8", "replace").split("\x01")[1:]:
        sha, _, subject = chunk.strip("\n").partition("\0")
        commits.append((sha, _subject(subject)))
    return commits


def _touched(out: bytes) -> list[tuple[tuple[str, str], list[str]]]:
    """((commit, subject), the paths it changed) of each commit a `git log --name-only
    -z` printed: `\\x01SHA\\0SUBJECT\\0\\nPATH\\0PATH\\0…`."""
    found = []
    for chunk in out.split(b"\x01")[1:]:
        sha, subject, *names = chunk.split(b"\0")
        if names:
            names[0] = names[0].removeprefix(b"\n")
        found.append(((sha.decode("ascii", "replace"),
                       _subject(subject.decode("utf-8", "replace"))),
                      [n.decode("utf-8", "surrogateescape") for n in names if n]))
    return found


def _subject(subject: str) -> str:
    return _SUBJECT_JUNK.sub("", subject).strip()[:SUBJECT_CHARS]


def _since(git: _Git, cite: Cited) -> tuple[bool, list[str]]:
    """(whether the cited text was known to be there at the citation, the `git log`
    arguments of the history since it)."""
    if git.is_ancestor(cite.commit):  # so it exists: one git process less
        return not cite.dirty, [f"{cite.commit}..{git.head}"]
    if git.exists(cite.commit):
        base = git.merge_base(cite.commit)  # a rebased or unmerged branch: where they met
        return False, [f"{base}..{git.head}"] if base else [git.head, "-n", str(WALK_LIMIT)]
    return False, [git.head, "-n", str(WALK_LIMIT)]


WALK_NAMES = 2000  # files at commits read by one `git cat-file` of `_presences`


def _presences(git: _Git, wanted: list[tuple[Cited, str]],
               ) -> list[tuple[bool, list[tuple[str, str, bool]]]]:
    """For each (citation, the path of its file now): whether the cited text was known to
    be there at the citation, then every commit since that touched its file, oldest
    first, with whether the text is there after it. Each file's history since its
    citation is listed by a `git log` of its own, run side by side (`_Git.logs`), and the
    file is read at each of those commits in a few `git cat-file` batches: five
    citations gone in one distill asked git ten times, one after the other."""
    plans = [(cite, now, *_since(git, cite)) for cite, now in wanted]
    histories = git.logs([(args, sorted({cite.path, now})) for cite, now, _, args in plans])
    out: list[tuple[bool, list[tuple[str, str, bool]]]] = []
    start = 0
    while start < len(plans):
        end, count = start, 0
        while end < len(plans) and (end == start or count + 2 * len(histories[end])
                                     <= WALK_NAMES):
            count += 2 * len(histories[end])
            end += 1
        names = sorted({f"{sha}:{path}" for (cite, now, _, _), commits
                        in zip(plans[start:end], histories[start:end], strict=True)
                        for sha, _ in commits for path in (now, cite.path)})
        objects = dict(zip(names, read_objects(git.root, names), strict=True))
        for (cite, now, present, _), commits in zip(plans[start:end], histories[start:end],
                                                   strict=True):
            out.append((present, [(sha, subject, _there(cite, objects[f"{sha}:{now}"]
                                                          or objects[f"{sha}:{cite.path}"]))
                                  for sha, subject in commits]))
        start = end
    return out


def _there(cite: Cited, obj: tuple[str, bytes] | None) -> bool:
    """Whether the text `cite` cites is in the file `obj` (None: no file there)."""
    if obj is None or not cite.anchor:
        return obj is not None
    return still_there(obj[1].decode("utf-8", "surrogateescape"), cite.anchor, cite.digest,
                       (line_range(cite.anchor) or (1, 1))[0]) is not None


def _walks(git: _Git, wanted: list[tuple[Cited, str]]) -> list[CodeChange | None]:
    """For each (citation, the path of its file now): the last commit after which the
    cited text is gone, or None when the history since the citation never held it (not
    in this branch yet)."""
    out: list[CodeChange | None] = []
    for (cite, _), (present, commits) in zip(wanted, _presences(git, wanted), strict=True):
        last: CodeChange | None = None
        for sha, subject, here in commits:
            if present and not here:
                last = CodeChange(cite.ref, sha, subject)
            present = here
        out.append(None if present else last)
    return out


def _deleted(git: _Git, cite: Cited) -> CodeChange | None:
    """The commit that deleted a cited file since the citation, or None when this
    history never held it since (a branch not merged yet, a file never committed)."""
    since: str | None = cite.commit
    if not git.is_ancestor(cite.commit):  # an ancestor exists
        since = git.merge_base(cite.commit) if git.exists(cite.commit) else None
    commits = git.log(["--diff-filter=D", "-n", "1", f"{since}..{git.head}" if since
                       else git.head], [cite.path])
    if not commits:
        return None
    sha, subject = commits[-1]
    return CodeChange(cite.ref, sha, subject, gone=True)


def follow(root: str, rev: str, facts: Iterable[tuple[str, tuple[str, ...]]], *,
           state_dir: str | None = None,
           unrecorded: Callable[[str, str], Cited | None] | None = None,
           known: bool = False) -> dict[str, list[CodeChange]]:
    """{fact key: the changes of its cited code} at `rev`, for (key, cited) pairs.

    `unrecorded(key, ref)` makes a citation for an anchored ref its entry did not
    record (hand-written): judged from the commit that added the entry. `known`: `rev`
    is a commit id already resolved."""
    cites: list[tuple[str, Cited]] = []
    for key, items in facts:
        for item in items:
            cite = parse(item)
            if cite is not None:
                cites.append((key, cite))
            elif unrecorded is not None:
                made = unrecorded(key, item)
                if made is not None:
                    cites.append((key, made))
    if not cites:
        return {}
    git = _Git(root, rev, state_dir, known=known)
    if not git.head:
        return {}
    cache = _Cache(state_dir)
    blobs = git.blobs({c.path for _, c in cites})
    where: dict[str, str | None] = {}
    for _, c in cites:
        if c.path not in where:
            where[c.path] = c.path if c.path in blobs else git.moved(c.path)
    extra = {p for p in where.values() if p and p not in blobs}
    blobs.update(git.blobs(extra))
    out: dict[str, list[CodeChange]] = {}
    todo: list[tuple[str, Cited, str, str]] = []
    for key, c in cites:
        now = where[c.path]
        if now is None or now not in blobs:
            gone = _deleted(git, c)
            if gone is not None:
                out.setdefault(key, []).append(gone)
            continue
        if not c.anchor:
            continue  # a whole file: it is there, under this name or its new one
        seen = cache.old.get(c.ident)
        if isinstance(seen, list) and len(seen) == 2 and seen[0] == blobs[now]:
            cache.new[c.ident] = seen
            change = _change(seen[1])
            if change is not None:
                out.setdefault(key, []).append(change)
            continue
        todo.append((key, c, now, blobs[now]))
    wanted = sorted({b for *_, b in todo})
    texts = dict(zip(wanted, read_objects(root, wanted), strict=True))
    lines_of: dict[str, list[str]] = {}
    judged: list[tuple[str, Cited, str, CodeChange | None]] = []
    walked: list[tuple[str, Cited, str, str]] = []  # gone, with no change known: walked
    for key, c, now, blob in todo:
        if blob not in lines_of:
            obj = texts[blob]
            lines_of[blob] = stripped_lines(obj[1].decode("utf-8", "surrogateescape")
                                         if obj is not None else "")
        text = lines_of[blob]
        start = (line_range(c.anchor) or (1, 1))[0]
        change = None
        if still_there(text, c.anchor, c.digest, start) is None:
            seen = cache.old.get(c.ident)
            change = _change(seen[1]) if isinstance(seen, list) and len(seen) == 2 else None
            if change is None or change.gone:
                walked.append((key, c, now, blob))
                continue
        judged.append((key, c, blob, change))
    changes = _walks(git, [(c, now) for _, c, now, _ in walked])
    judged += ((key, c, blob, change) for (key, c, _, blob), change
               in zip(walked, changes, strict=True))
    for key, c, blob, change in judged:
        cache.new[c.ident] = [blob, change.as_list() if change is not None else None]
        if change is not None:
            out.setdefault(key, []).append(change)
    cache.save()
    return {key: sorted(changes, key=lambda ch: ch.ref) for key, changes in out.items()}


def recorded_at(root: str, commit: str, key: str, ref: str) -> Cited | None:
    """A citation for `ref` as the file was in `commit` (a hand-written entry's)."""
    path, anchor = split(ref)
    if not anchor:
        return None
    found = read_objects(root, [f"{commit}:{path}"])
    if not found or found[0] is None:
        return None
    got = digest_at(found[0][1].decode("utf-8", "surrogateescape"), anchor)
    return None if got is None else Cited(ref, commit, got[0], dirty=False)


def judge(result: Fold, root: str, rev: str, memory_root: str, state_dir: str,
          config: Config, *, known: bool = False) -> None:
    """Judge the citations of a fold's facts at `rev` (`result.code`, `result.judged`),
    then apply `distill.stale_refs` to facts whose refs are all gone by their history. A
    hand-written citation is judged from the commit that added its entry. `known`: `rev`
    is the commit id, read already (no git asks it again)."""
    facts = list(result.facts.values())
    # most cite nothing: nothing is called for them
    recorded: dict[str, set[str]] = {}  # each fact's recorded refs, parsed once
    pairs = [(f.key, refs) for f in facts
             if (f.cited or f.refs) and (refs := _to_follow(f, recorded))]
    head = (rev if known else gitcore.resolve(root, rev)) if pairs else None
    if head is None:
        return
    added: list[dict[str, str]] = []

    def unrecorded(key: str, ref: str) -> Cited | None:
        if not added:
            added.append(lineage.read(root, head, memory_root, state_dir).added)
        return recorded_at(root, added[0].get(result.facts[key].path) or head, key, ref)

    result.judged = head
    result.code = follow(root, head, pairs, state_dir=state_dir, unrecorded=unrecorded,
                         known=True)
    # a fact with recorded citations is one of `pairs`: the others are not walked again
    _stale_facts(result, [result.facts[key] for key, _ in pairs], recorded, root, head,
                 config)


def _to_follow(fact: Fact, recorded: dict[str, set[str]]) -> tuple[str, ...]:
    """What `follow` judges of a fact: its recorded citations (their refs kept in
    `recorded` by fact key), then each ref with an anchor that none of them records."""
    anchored = [r for r in fact.refs if split(r)[1]]
    if fact.cited:
        refs = recorded[fact.key] = recorded_refs(fact.cited)
        anchored = [r for r in anchored if r not in refs]
    return (*fact.cited, *anchored)


def _stale_facts(result: Fold, facts: list[Fact], recorded: dict[str, set[str]], root: str,
                 head: str, config: Config) -> None:
    """Facts with recorded citations whose refs are all gone (`facts`: those that may
    have some; `recorded`: the refs their citations record, by fact key)."""
    gone: dict[str, list[str]] = {}
    with memgit.ref_checker(root, head) as exists:
        for fact in facts:
            if not fact.cited:
                continue
            deleted = {c.ref for c in result.code.get(fact.key, ()) if c.gone}
            if all(r in deleted if r in recorded[fact.key] else not exists(split(r)[0])
                   for r in fact.refs):
                gone[fact.key] = list(fact.refs)
    stale(result, gone, config)


def history(root: str, rev: str, items: Iterable[str]) -> list[dict[str, object]]:
    """`jmem log KEY`: each recorded citation, where it was recorded, what it is now
    (there, changed, deleted, not in this branch yet) and every commit since that
    touched its file, saying whether the cited text was still there after it."""
    git = _Git(root, rev)
    out: list[dict[str, object]] = []
    for cite in (c for c in map(parse, items) if c is not None):
        now = cite.path if git.blobs({cite.path}) else git.moved(cite.path)
        known, commits = (_presences(git, [(cite, now or cite.path)])[0] if git.head
                          else (False, []))
        change = follow(root, rev, [("", (cite.render(),))]).get("", [])
        state = ("deleted" if change and change[0].gone else "changed" if change
                 else "there" if known or any(here for *_, here in commits) else "pending")
        out.append({"ref": cite.ref, "recorded": cite.commit, "dirty": cite.dirty,
                    "path": now, "state": state,
                    "commits": [{"commit": sha, "subject": subject, "cited_text": here}
                                for sha, subject, here in commits]})
    return out
