"""The main checkout's index after a distill commit: every committed path holds the
committed blob (nothing staged); the plain files unchanged since they were hashed carry
their stat data; a file changed, removed or put back after it was hashed shows as a change
not staged, never as a staged one."""

from __future__ import annotations

import functools
import os
import random
import time
from pathlib import Path

import pytest
from helpers import git, make_repo

from journal_mem.gitops import indexlock, memgit

ROOT = ".claude/agent-memory"


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexlock, "wait_quiet",
                        functools.partial(indexlock.wait_quiet, quiet_s=0.0))


@pytest.fixture(params=["one update-index", "paths past the command line's room"])
def room(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways `_new_index` takes: the removals and re-adds in one `update-index`, and
    (paths too long for a command line) `--index-info` first, then the paths by name."""
    if request.param != "one update-index":
        monkeypatch.setattr(memgit, "MAX_ARGS_BYTES", 0)
    return str(request.param)


def write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def index_entries(repo: Path, paths: list[str]) -> dict[str, tuple[str, bool]]:
    """{path: (blob id in the index, whether the entry has stat data)}."""
    out = {}
    for path in paths:
        debug = git(repo, "ls-files", "--debug", "--", path).stdout
        staged = git(repo, "ls-files", "-s", "--", path).stdout.split()
        if staged:
            out[path] = (staged[1], "mtime: 0:0" not in debug and "size: 0\t" not in debug)
    return out


def committed(repo: Path, path: str) -> str | None:
    res = git(repo, "rev-parse", "--verify", "--quiet", f"HEAD:{path}", check=False)
    return res.stdout.strip() or None


@pytest.mark.parametrize("seed", range(6))
def test_what_changed_after_its_hash_is_committed_as_hashed_and_shown_not_staged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, room: str) -> None:
    rng = random.Random(seed)
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    if seed % 2:  # git's clean filter applies to both hashes alike
        (repo / ".gitattributes").write_text("*.md filter=upper\n")
        git(repo, "config", "filter.upper.clean", "tr a-z A-Z")
        git(repo, "config", "filter.upper.smudge", "cat")
        git(repo, "add", ".gitattributes")
        git(repo, "commit", "-q", "-m", "filter")
    if seed % 3 == 2:  # git takes no mode from a file's executable bit (as on Windows)
        git(repo, "config", "core.fileMode", "false")
    if seed in (1, 2, 5):  # the largest file is hashed by a git of its own, filtered alike
        monkeypatch.setattr(memgit, "ALONE_BYTES", 1)
    paths = [f"{ROOT}/a{i % 3}/topics/t{i}.md" for i in range(12)]
    for path in paths[:6]:  # some committed before, some new
        write(repo, path, f"old {path}\n")
    was_executable = paths[rng.randrange(6)]
    git(repo, "add", "-A")
    git(repo, "update-index", "--chmod=+x", was_executable)  # whatever core.fileMode says
    git(repo, "commit", "-q", "-m", "before")
    for path in paths:
        write(repo, path, f"new {path} {rng.random()}\n")
    write(repo, paths[seed], f"new {paths[seed]} the largest\n" + "x" * 4000 + "\n")
    (repo / was_executable).chmod(0o644)  # committed as 100644 now, whatever core.fileMode
    executable = rng.choice(paths)
    (repo / executable).chmod(0o755)
    gone = rng.choice([p for p in paths[:6] if p != executable])  # removed by the distill
    (repo / gone).unlink()
    others = [p for p in paths if p not in (executable, gone)]
    touched = rng.sample(others, 4)  # changed by someone between the hash and the index
    kinds = dict(zip(touched, ["same size", "longer", "removed", "removed and back"],
                     strict=True))
    real = memgit._hash

    def hash_then_touch(root: str, hashed: list[str]) -> tuple[memgit.Blobs,
                                                               dict[str, memgit.Stat]]:
        out = real(root, hashed)
        for path, kind in kinds.items():
            file = repo / path
            st = file.stat()
            if kind == "same size":  # same length, another time: only the stat says so
                file.write_text(file.read_text().replace("new", "wen"))
                os.utime(file, ns=(st.st_atime_ns, st.st_mtime_ns + 7_000_000))
            elif kind == "longer":
                file.write_text(file.read_text() + "edited\n")
            elif kind == "removed":
                file.unlink()
            else:
                file.unlink()
                file.write_text("put back\n")
        return out

    monkeypatch.setattr(memgit, "_hash", hash_then_touch)
    new = memgit.commit(str(repo), ROOT, paths, "jmem distill: test", str(state))
    assert new
    monkeypatch.undo()

    entries = index_entries(repo, paths)
    assert git(repo, "diff", "--cached", "--name-only").stdout == ""  # nothing staged
    for path in paths:
        assert entries.get(path, (None,))[0] == committed(repo, path), path
    assert committed(repo, gone) is None
    assert git(repo, "ls-tree", "HEAD", "--", executable).stdout.startswith("100755")
    for path in others:  # clean, and with stat data: `git status` need not hash them
        if path not in kinds:
            assert entries[path][1], path
    unstaged = set(git(repo, "diff", "--name-only").stdout.split())
    assert unstaged == set(kinds), git(repo, "status", "--porcelain").stdout
    # the blob committed is the content hashed, before anyone touched the file
    for path in kinds:
        text = git(repo, "cat-file", "-p", committed(repo, path) or "").stdout
        assert text.lower().startswith(f"new {path}".lower()), text


def test_a_first_commit_with_no_index_yet(tmp_path: Path) -> None:
    """A repository with no commit and no index: the index made holds the committed paths
    with their stat data."""
    repo = make_repo(tmp_path / "r", commit=False)
    state = tmp_path / "state"
    state.mkdir()
    paths = [f"{ROOT}/a/MEMORY.md", f"{ROOT}/a/topics/t.md", f"{ROOT}/gone.md"]
    write(repo, paths[0], "m\n")
    write(repo, paths[1], "t\n")
    assert not (repo / ".git" / "index").exists()
    assert memgit.commit(str(repo), ROOT, paths, "jmem distill: first", str(state), "main")
    entries = index_entries(repo, paths)
    assert set(entries) == set(paths[:2])
    assert all(has_stat for _, has_stat in entries.values())
    assert git(repo, "status", "--porcelain").stdout == ""


def test_a_file_rewritten_within_its_mtime_s_tick_is_hashed_again(tmp_path: Path,
                                                                  room: str) -> None:
    """A distilled file rewritten in place with its size within the tick of its recorded
    mtime has stat data equal to its entry's (ctime, which a write moves, is left out
    here by core.trustctime; the mtime is an old one, so git does not take the entry for
    "racily clean"): `update-index PATH` alone would keep the old blob. The commit's
    index takes the new one, as the commit does: the entry is first set with no stat
    data (`--index-info`), which never matches a file's."""
    repo = make_repo(tmp_path / "r")
    git(repo, "config", "core.trustctime", "false")
    state = tmp_path / "state"
    state.mkdir()
    rel = f"{ROOT}/a/MEMORY.md"
    write(repo, rel, "aaaa\n")
    old = 1_767_225_600_000_000_000  # long before the index: not "racily clean" for git
    os.utime(repo / rel, ns=(old, old))
    assert memgit.commit(str(repo), ROOT, [rel], "jmem distill: 1", str(state))
    assert index_entries(repo, [rel])[rel][1]  # its stat data recorded
    file = repo / rel
    mtime = file.stat().st_mtime_ns
    file.write_text("bbbb\n")  # the same size, in place
    os.utime(file, ns=(mtime, mtime))  # within the same tick: the same mtime
    assert memgit.commit(str(repo), ROOT, [rel], "jmem distill: 2", str(state))
    assert git(repo, "show", f"HEAD:{rel}").stdout == "bbbb\n"
    assert git(repo, "diff", "--cached", "--name-only").stdout == ""
    assert git(repo, "status", "--porcelain").stdout == ""


def test_an_index_that_changed_under_the_lock_is_not_overwritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index the new one was computed from is compared, by digest, with the one found
    under `index.lock`: when they differ (a git command wrote it meanwhile) nothing is
    written, and the next attempt starts from the index found then."""
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    rel = f"{ROOT}/a/MEMORY.md"
    write(repo, rel, "m\n")
    reads: list[bytes] = []
    computed: list[bytes] = []
    read, new_index = memgit._read_index, memgit._new_index

    def reading(git_dir: str) -> bytes:
        data = read(git_dir)
        reads.append(data)
        # the early one (1), the one `_publish` starts from (2), the one under the lock (3)
        return data + b"written meanwhile" if len(reads) == 3 else data

    def computing(*args: object, **kw: object) -> bytes:
        computed.append(args[2])  # type: ignore[arg-type]
        return new_index(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(memgit, "_read_index", reading)
    monkeypatch.setattr(memgit, "_new_index", computing)
    assert memgit.commit(str(repo), ROOT, [rel], "jmem distill: 1", str(state), "main")
    # refused under the lock; the next attempt finds the index the early one was made from
    assert len(computed) == 1 and len(reads) == 5
    assert git(repo, "status", "--porcelain").stdout == ""


def test_work_staged_while_the_tree_is_built_stays_staged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new index is computed early, while the tree is built (`_EarlyIndex`): a `git
    add` of the user's meanwhile makes it stale, and it is computed again from the index
    the user's `add` wrote, which keeps their staged file."""
    repo = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    state.mkdir()
    rel = f"{ROOT}/a/MEMORY.md"
    write(repo, rel, "m\n")
    write(repo, "user.txt", "staged by the user\n")
    computed: list[bytes] = []
    new_index, tree = memgit._new_index, memgit._tree

    def computing(*args: object, **kw: object) -> bytes:
        made = new_index(*args, **kw)  # type: ignore[arg-type]
        computed.append(made)
        return made

    def building(*args: object, **kw: object) -> tuple[str, str]:
        deadline = time.monotonic() + 30
        while not computed and time.monotonic() < deadline:
            time.sleep(0.01)  # the early index is made: now the user stages their work
        assert computed
        git(repo, "add", "user.txt")
        return tree(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(memgit, "_new_index", computing)
    monkeypatch.setattr(memgit, "_tree", building)
    assert memgit.commit(str(repo), ROOT, [rel], "jmem distill: 1", str(state), "main")
    assert len(computed) == 2  # the early one, stale; then from the index found
    assert git(repo, "diff", "--cached", "--name-only").stdout == "user.txt\n"
    assert git(repo, "show", f"HEAD:{rel}").stdout == "m\n"
    assert git(repo, "status", "--porcelain").stdout == "A  user.txt\n"
