"""The distill commit's tree: only the memory root's folder is built in the private
index, which is kept while it holds HEAD's folder, and put into HEAD's tree; the
result is always the tree a whole private index (`read-tree HEAD`) would give."""

from __future__ import annotations

import functools
import os
import random
import subprocess
from pathlib import Path

import pytest
from helpers import base_env, git, make_repo

from journal_mem.errors import GitError
from journal_mem.gitops import gitcore, indexlock, memgit

ROOTS = [".claude/agent-memory", "mem", "deep/er/memory root é"]


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexlock, "wait_quiet",
                        functools.partial(indexlock.wait_quiet, quiet_s=0.0))


class Spy:
    """The git subcommands run, in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        real = gitcore.run

        def run(args: list[str], cwd: str, **kw: object) -> gitcore.GitResult:
            at = 0
            while args[at] == "-c":  # a setting for this call: the subcommand follows
                at += 2
            self.calls.append(args[at])
            return real(args, cwd, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(gitcore, "run", run)


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def tree(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", f"{rev}^{{tree}}").stdout.strip()


def whole_index_tree(repo: Path, base: str, paths: list[str], scratch: Path) -> str:
    """The tree the distill commit had before: `base` read whole into a private index,
    `paths` set from disk (or removed), `write-tree`."""
    env = base_env(GIT_INDEX_FILE=str(scratch / "whole-index"))
    subprocess.run(["git", "read-tree", base], cwd=repo, env=env, check=True)
    blobs: memgit.Blobs = {}
    for path in paths:
        file = repo / path
        if file.is_file():
            blob = git(repo, "hash-object", "-w", "--", path).stdout.strip()
            blobs[path] = ("100755" if os.access(file, os.X_OK) else "100644", blob)
        else:
            blobs[path] = None
    subprocess.run(["git", "update-index", "-z", "--index-info"], cwd=repo, env=env,
                   input=memgit._index_info(blobs, None), check=True)
    out = subprocess.run(["git", "write-tree"], cwd=repo, env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def distill_commit(repo: Path, prefix: str, paths: list[str], state: Path) -> str:
    return memgit.commit(str(repo), prefix, paths, "jmem distill: test", str(state))


def write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("prefix", ROOTS)
@pytest.mark.parametrize("seed", range(3))
def test_every_commit_gives_the_tree_a_whole_private_index_gives(
        tmp_path: Path, prefix: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    spy = Spy(monkeypatch)
    parent = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
    memory: set[str] = set()
    built = 0
    kept = False  # whether the kept index holds HEAD's memory folder
    for step in range(12):
        action = rng.choice(["code", "code", "sibling", "user-memory", "distill", "distill",
                             "distill", "tamper"])
        if action == "code":  # an agent commits code: the memory folder is as it was
            write(repo, f"src/m{rng.randrange(6)}.py", f"# {step}\n")
            git(repo, "add", "-A", "src")
            git(repo, "commit", "-q", "-m", f"code {step}")
        elif action == "sibling" and parent:  # a file beside the memory root
            write(repo, f"{parent}/settings-{rng.randrange(2)}.json", f"{{\"s\": {step}}}\n")
            git(repo, "add", "-A", parent)
            git(repo, "commit", "-q", "-m", f"settings {step}")
        elif action == "user-memory":  # memory committed by hand: the kept index is stale
            rel = f"{prefix}/agent-{rng.randrange(3)}/notes.md"
            write(repo, rel, f"by hand {step}\n")
            git(repo, "add", "--", rel)
            git(repo, "commit", "-q", "-m", f"hand {step}")
            memory.add(rel)
            kept = False
        elif action == "tamper":
            kept = False
            index = state / "distill-index"
            if rng.random() < 0.5:
                index.unlink(missing_ok=True)
            elif index.exists():
                git(repo, "read-tree", "--empty", env=base_env(GIT_INDEX_FILE=str(index)))
        else:
            paths = []
            for _ in range(rng.randrange(1, 5)):
                rel = f"{prefix}/agent-{rng.randrange(3)}/journal/e{rng.randrange(8)}.md"
                if rel in memory and rng.random() < 0.4:
                    (repo / rel).unlink()
                    memory.discard(rel)
                else:
                    write(repo, rel, f"lesson {step} {rng.random()}\n")
                    memory.add(rel)
                paths.append(rel)
            if memory and rng.random() < 0.15:  # everything goes: the folder too
                for rel in sorted(memory):
                    (repo / rel).unlink()
                paths += sorted(memory)
                memory.clear()
            base = head(repo)
            want = whole_index_tree(repo, base, sorted(set(paths)), tmp_path)
            spy.calls.clear()
            made = distill_commit(repo, prefix, sorted(set(paths)), state)
            there = git(repo, "rev-parse", "-q", "--verify", f"{base}:{prefix}",
                        check=False).returncode == 0
            assert spy.calls.count("read-tree") == (0 if kept or not there else 1)
            kept = True
            built += 1
            assert tree(repo) == want
            assert (made == "") == (want == tree(repo, base))
            if made:
                assert head(repo) == made and git(repo, "rev-parse", "HEAD~1").stdout.strip() \
                    == base
            status = git(repo, "status", "--porcelain", "--", prefix).stdout
            assert status == ""
    assert built  # every seed distils at least once
    # `write-tree --missing-ok` checks no object: every one each commit names is there
    git(repo, "fsck", "--connectivity-only", "--no-dangling")


def test_the_kept_index_is_read_again_only_when_memory_changed_outside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    prefix = ".claude/agent-memory"
    spy = Spy(monkeypatch)
    write(repo, f"{prefix}/a/journal/one.md", "one\n")
    assert distill_commit(repo, prefix, [f"{prefix}/a/journal/one.md"], state)
    assert "read-tree" not in spy.calls  # HEAD had no memory folder: nothing to read

    for n in range(2):  # code committed between distills: the kept index still holds it
        write(repo, "src/app.py", f"v{n}\n")
        git(repo, "add", "src/app.py")
        git(repo, "commit", "-q", "-m", "code")
        write(repo, f"{prefix}/a/journal/more{n}.md", f"{n}\n")
        spy.calls.clear()
        assert distill_commit(repo, prefix, [f"{prefix}/a/journal/more{n}.md"], state)
        assert "read-tree" not in spy.calls
        assert git(repo, "show", "HEAD:src/app.py").stdout == f"v{n}\n"

    write(repo, f"{prefix}/a/hand.md", "by hand\n")  # memory changed by somebody else
    git(repo, "add", f"{prefix}/a/hand.md")
    git(repo, "commit", "-q", "-m", "hand")
    write(repo, f"{prefix}/a/journal/last.md", "last\n")
    spy.calls.clear()
    assert distill_commit(repo, prefix, [f"{prefix}/a/journal/last.md"], state)
    assert spy.calls.count("read-tree") == 1
    assert git(repo, "show", f"HEAD:{prefix}/a/hand.md").stdout == "by hand\n"
    names = git(repo, "ls-tree", "-r", "--name-only", "HEAD").stdout.split()
    assert names == sorted(["README", "src/app.py", f"{prefix}/a/hand.md",
                            *(f"{prefix}/a/journal/{n}.md"
                              for n in ("last", "more0", "more1", "one"))])


def test_a_kept_index_edited_behind_its_record_is_not_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    prefix = "mem"
    write(repo, "mem/a/journal/one.md", "one\n")
    distill_commit(repo, prefix, ["mem/a/journal/one.md"], state)
    index = state / "distill-index"
    env = base_env(GIT_INDEX_FILE=str(index))
    write(repo, "junk.txt", "junk\n")
    junk = git(repo, "hash-object", "-w", "junk.txt").stdout.strip()
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{junk},mem/x.md"],
                   cwd=repo, env=env, check=True)
    write(repo, "mem/a/journal/two.md", "two\n")
    spy = Spy(monkeypatch)
    distill_commit(repo, prefix, ["mem/a/journal/two.md"], state)
    assert spy.calls.count("read-tree") == 1
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD", "mem").stdout.split() == [
        "mem/a/journal/one.md", "mem/a/journal/two.md"]


def test_the_last_memory_file_gone_takes_its_empty_folders_and_keeps_their_siblings(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    prefix = ".claude/agent-memory"
    write(repo, ".claude/settings.json", "{}\n")
    write(repo, f"{prefix}/a/MEMORY.md", "m\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    (repo / prefix / "a" / "MEMORY.md").unlink()
    assert distill_commit(repo, prefix, [f"{prefix}/a/MEMORY.md"], state)
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD").stdout.split() == [
        ".claude/settings.json", "README"]
    (repo / ".claude" / "settings.json").unlink()  # the parent folder goes next time
    git(repo, "commit", "-q", "-am", "no settings")
    write(repo, f"{prefix}/a/MEMORY.md", "again\n")
    assert distill_commit(repo, prefix, [f"{prefix}/a/MEMORY.md"], state)
    (repo / prefix / "a" / "MEMORY.md").unlink()
    assert distill_commit(repo, prefix, [f"{prefix}/a/MEMORY.md"], state)
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD").stdout.split() == ["README"]
    assert distill_commit(repo, prefix, [f"{prefix}/a/MEMORY.md"], state) == ""


def test_a_file_where_a_folder_above_the_memory_root_goes_is_replaced(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    write(repo, ".claude", "a file, committed\n")
    git(repo, "add", ".claude")
    git(repo, "commit", "-q", "-m", "a file named .claude")
    (repo / ".claude").unlink()
    prefix = ".claude/agent-memory"
    write(repo, f"{prefix}/a/MEMORY.md", "m\n")
    base = head(repo)
    want = whole_index_tree(repo, base, [f"{prefix}/a/MEMORY.md", ".claude"], tmp_path)
    assert distill_commit(repo, prefix, [f"{prefix}/a/MEMORY.md"], state)
    assert tree(repo) == want


def test_a_path_outside_the_memory_root_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    write(repo, "mem/a.md", "a\n")
    with pytest.raises(GitError, match="not under the memory root mem: README"):
        distill_commit(repo, "mem", ["mem/a.md", "README"], state)
    assert git(repo, "log", "--format=%s").stdout.splitlines() == ["first"]


@pytest.mark.parametrize("config", [["core.splitIndex", "true"], ["index.version", "4"],
                                    ["feature.manyFiles", "true"], ["index.version", "2"]])
def test_the_kept_index_works_whatever_index_format_the_repository_asks_for(
        tmp_path: Path, config: list[str]) -> None:
    repo = make_repo(tmp_path / "r")
    git(repo, "config", *config)
    state = tmp_path / "state"
    state.mkdir()
    prefix = ".claude/agent-memory"
    paths = []
    for n in range(4):  # a split index keeps its first entries in a shared index file:
        # before, no distill commit landed (each attempt saw the git dir change)
        for m in range(3):
            rel = f"{prefix}/a/journal/e{n}-{m}.md"
            write(repo, rel, f"{n} {m}\n")
            paths.append(rel)
        base = head(repo)
        want = whole_index_tree(repo, base, paths[-3:], tmp_path)
        assert distill_commit(repo, prefix, paths[-3:], state)
        assert tree(repo) == want
        assert git(repo, "status", "--porcelain").stdout == ""
        write(repo, f"src/n{n}.py", "code\n")  # the user's own commits go on as ever
        git(repo, "add", "src")
        git(repo, "commit", "-q", "-m", f"code {n}")
    (repo / paths[0]).unlink()
    version = index_version(repo / ".git" / "index")
    assert distill_commit(repo, prefix, [paths[0]], state)
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD", prefix).stdout.split() == sorted(
        paths[1:])
    assert git(repo, "status", "--porcelain").stdout == ""
    assert git(repo, "ls-files", prefix).stdout.split() == sorted(paths[1:])
    # the private index is always version 4 (smaller); the checkout's keeps its own
    assert index_version(state / "distill-index") == 4
    assert index_version(repo / ".git" / "index") == version


def index_version(path: Path) -> int:
    """The version in an index file's header (`DIRC`, then 4 bytes big-endian)."""
    head = path.read_bytes()[:8]
    assert head[:4] == b"DIRC", head
    return int.from_bytes(head[4:], "big")


def test_every_kind_of_entry_beside_the_memory_root_is_kept(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    write(repo, ".claude/run.sh", "#!/bin/sh\n")
    (repo / ".claude" / "run.sh").chmod(0o755)
    os.symlink("run.sh", repo / ".claude" / "link")
    os.symlink("README", repo / "top-link")
    git(repo, "add", "-A")
    commit = head(repo)  # a submodule's commit, as a gitlink beside and above the root
    for path in (".claude/sub", "vendor/sub"):
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{commit},{path}")
    git(repo, "commit", "-q", "-m", "kinds")
    before = git(repo, "ls-tree", "-r", "HEAD").stdout
    write(repo, ".claude/agent-memory/a/MEMORY.md", "m\n")
    assert distill_commit(repo, ".claude/agent-memory", [".claude/agent-memory/a/MEMORY.md"],
                          state)
    after = git(repo, "ls-tree", "-r", "HEAD").stdout
    assert [line for line in after.splitlines() if "agent-memory" not in line] == \
        before.splitlines()
    assert "160000 commit" in after and "120000 blob" in after and "100755 blob" in after


@pytest.mark.parametrize("case", ["file where a folder goes", "folder where a file goes",
                                  "removals of what is not there", "every kind kept inside",
                                  "a folder emptied beside a kept one"])
def test_inside_the_memory_root_the_tree_is_the_one_an_index_makes(
        tmp_path: Path, case: str) -> None:
    """The cases a build of the memory root's folder alone could get wrong, each against
    the tree a whole private index of the repository gives (`whole_index_tree`): a file
    where a folder of a changed path goes, a folder where a changed file goes, removals
    of paths not there, entries of every kind (executable, symbolic link, submodule)
    beside the changed ones, a folder emptied beside a kept one."""
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    prefix = "deep/mem ory"
    write(repo, f"{prefix}/a/keep.md", "keep\n")
    write(repo, f"{prefix}/b/journal/x.md", "x\n")
    if case == "file where a folder goes":
        write(repo, f"{prefix}/a/journal", "a file named journal\n")
    elif case == "folder where a file goes":
        write(repo, f"{prefix}/a/notes/one.md", "one\n")
        write(repo, f"{prefix}/a/notes/deeper/two.md", "two\n")
    elif case == "every kind kept inside":
        write(repo, f"{prefix}/a/run.sh", "#!/bin/sh\n")
        (repo / prefix / "a" / "run.sh").chmod(0o755)
        os.symlink("keep.md", repo / prefix / "a" / "link")
    git(repo, "add", "-A")
    if case == "every kind kept inside":
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head(repo)},{prefix}/a/sub")
    git(repo, "commit", "-q", "-m", "before")
    paths = [f"{prefix}/a/journal/new.md"]
    if case == "file where a folder goes":
        (repo / prefix / "a" / "journal").unlink()
        write(repo, paths[0], "new\n")
    elif case == "folder where a file goes":
        for gone in ("notes/one.md", "notes/deeper/two.md"):
            (repo / prefix / "a" / gone).unlink()
        (repo / prefix / "a" / "notes" / "deeper").rmdir()
        (repo / prefix / "a" / "notes").rmdir()
        write(repo, f"{prefix}/a/notes", "now a file\n")
        paths = [f"{prefix}/a/notes"]
    elif case == "removals of what is not there":
        paths = [f"{prefix}/a/journal/absent.md", f"{prefix}/z/journal/absent.md",
                 f"{prefix}/a/keep.md/under-a-file.md"]
    elif case == "a folder emptied beside a kept one":
        (repo / prefix / "b" / "journal" / "x.md").unlink()
        write(repo, paths[0], "new\n")
        paths.append(f"{prefix}/b/journal/x.md")
    else:
        write(repo, paths[0], "new\n")
    base = head(repo)
    want = whole_index_tree(repo, base, paths, tmp_path)
    made = distill_commit(repo, prefix, paths, state)
    assert tree(repo) == want
    assert (made == "") == (case == "removals of what is not there")
    if case == "every kind kept inside":
        listing = git(repo, "ls-tree", "HEAD", f"{prefix}/a/").stdout
        assert "160000 commit" in listing and "120000 blob" in listing
        assert "100755 blob" in listing
    if case == "a folder emptied beside a kept one":
        assert git(repo, "ls-tree", "--name-only", "HEAD", f"{prefix}/").stdout.splitlines() == [
            f"{prefix}/a"]


def _zlib_level_bits(repo: Path, oid: str) -> int:
    """The FLEVEL bits of a loose object's zlib header (0: zlib's fastest level; the
    default level gives 2)."""
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    header = path.read_bytes()[:2]
    assert header[0] & 0x0F == 8, header  # deflate
    return header[1] >> 6


def test_the_commit_s_objects_are_written_at_zlib_s_fastest_level(tmp_path: Path) -> None:
    """The distill state, and the tree of each journal folder it touches, are megabytes at
    100k lessons: they are written loose at zlib's fastest level (git's default for loose
    objects), whatever the repository's `core.compression` says."""
    root = ROOTS[0]
    repo = make_repo(tmp_path / "r")
    git(repo, "config", "core.compression", "9")
    state = tmp_path / "state"
    state.mkdir()
    rels = [f"{root}/a/journal/2026-01-0{i}-l{i}.md" for i in range(1, 4)]
    rels.append(f"{root}/distill-state.json")
    for i, rel in enumerate(rels):
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"lesson {i}\n" + "".join(f"line {n} of {rel}\n" for n in range(400)))
    (tmp_path / "theirs.txt").write_text("a blob of the repository's\n")
    blob = git(repo, "hash-object", "-w", str(tmp_path / "theirs.txt")).stdout.strip()
    assert _zlib_level_bits(repo, blob) == 3  # level 9 here
    assert memgit.commit(str(repo), root, rels, "jmem distill: test", str(state))
    made = [git(repo, "rev-parse", f"HEAD:{rel}").stdout.strip() for rel in rels]
    made += [git(repo, "rev-parse", f"HEAD:{folder}").stdout.strip()
             for folder in (root, f"{root}/a", f"{root}/a/journal")]  # `write-tree`'s
    for oid in made:
        assert _zlib_level_bits(repo, oid) == 0, oid


def test_a_distill_commit_vouches_for_what_it_leaves_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit of memory files alone is kept as one: the next question whether refs
    outside the memory root resolve in it as in its parent (`refs_same`), and for its
    renames when it removed no file (`renamed_in`), asks git nothing. A commit that
    removed a file asks for its renames; a commit of anyone else asks both."""
    root = ".claude/agent-memory"
    repo = make_repo(tmp_path / "repo")
    state = tmp_path / "state"
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("A = 1\n")
    notes = repo / root / "api" / "notes.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    start = head(repo)
    assert memgit.renamed_in(str(repo), start, str(state)) == {}  # cached at start
    notes.write_text("two\n")
    made = memgit.commit(str(repo), root, [f"{root}/api/notes.md"], "jmem distill: 1",
                         str(state))
    spy = Spy(monkeypatch)
    assert memgit.refs_same(str(repo), start, made, root, {"src/a.py"}, str(state))
    assert memgit.renamed_in(str(repo), made, str(state)) == {}
    assert not {"merge-base", "diff", "log"} & set(spy.calls), spy.calls
    # a path in the memory root is never vouched for
    assert not memgit.refs_same(str(repo), start, made, root, {f"{root}/api"}, str(state))

    notes.unlink()  # a commit that removes a file may hold a rename
    gone = memgit.commit(str(repo), root, [f"{root}/api/notes.md"], "jmem distill: 2",
                         str(state))
    spy.calls.clear()
    assert memgit.refs_same(str(repo), made, gone, root, {"src/a.py"}, str(state))
    assert not {"merge-base", "diff", "log"} & set(spy.calls), spy.calls
    assert memgit.renamed_in(str(repo), gone, str(state)) == {}
    assert "log" in spy.calls

    spy.calls.clear()
    git(repo, "mv", "src/a.py", "src/b.py")  # a commit of someone else: git is asked
    git(repo, "commit", "-q", "-m", "moved")
    assert not memgit.refs_same(str(repo), gone, head(repo), root, {"src/a.py"}, str(state))
    assert memgit.renamed_in(str(repo), head(repo), str(state)) == {"src/a.py": "src/b.py"}
    assert "merge-base" in spy.calls and "log" in spy.calls
