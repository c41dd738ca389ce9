"""A log read since the last one (`gitops.logcache`) says what a whole read says.

Random histories on real git: journal entries added, deleted and added again, code
files renamed (twice, and two to one place), side branches forked from old commits
and merged, a branch reset behind what was read, committer clocks days apart. After
every step the lineage and the renames read through the cache equal a whole read:
the same commit for every entry, the same depth and the same ancestry between them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import base_env, git, make_repo

from journal_mem.gitops import gitcore, lineage, memgit

PREFIX = ".claude/agent-memory"


class Walk:
    """A repository grown by random steps, with a clock that may jump back."""

    def __init__(self, root: Path, rnd: random.Random) -> None:
        self.root, self.rnd = root, rnd
        self.n = 0
        self.entries: list[str] = []
        self.gone: list[str] = []
        self.code = ["src/a.py", "src/b.py"]
        self.clock = 1_700_000_000
        for path in self.code:
            self.write(path, f"{path}\n")
        self.commit("code")

    def env(self) -> dict[str, str]:
        self.clock += self.rnd.choice([60, 3600, -3 * 86400, 3 * 86400])
        stamp = f"{self.clock} +0000"
        return base_env(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(self.root, "add", "--", rel)

    def commit(self, what: str) -> None:
        self.n += 1
        git(self.root, "commit", "-q", "--allow-empty", "-m", f"{what} {self.n}", env=self.env())

    def step(self) -> None:
        kind = self.rnd.choice(["entry", "entry", "entry", "code", "rename", "gone", "back",
                                "side", "reset"])
        if kind == "entry":
            rel = f"{PREFIX}/a{self.rnd.randrange(3)}/journal/e{self.n}.md"
            self.write(rel, f"entry {self.n}\n")
            self.entries.append(rel)
            self.commit("entry")
        elif kind == "code":
            self.write(self.rnd.choice(self.code), f"change {self.n}\n" * 3)
            self.commit("code")
        elif kind == "rename":
            old = self.rnd.choice(self.code)
            new = f"src/r{self.n}/{old.rsplit('/', 1)[-1]}"
            (self.root / new).parent.mkdir(parents=True, exist_ok=True)
            git(self.root, "mv", old, new)
            self.code[self.code.index(old)] = new
            self.commit("rename")
        elif kind == "gone" and self.entries:
            rel = self.entries.pop(self.rnd.randrange(len(self.entries)))
            git(self.root, "rm", "-q", "--", rel)
            self.gone.append(rel)
            self.commit("gone")
        elif kind == "back" and self.gone:
            rel = self.gone.pop()
            self.write(rel, "again\n")
            self.entries.append(rel)
            self.commit("back")
        elif kind == "side":
            self.side()
        elif kind == "reset" and int(git(self.root, "rev-list", "--count", "HEAD").stdout) > 3:
            git(self.root, "reset", "-q", "--hard", f"HEAD~{self.rnd.randint(1, 2)}")
            self.refresh_files()

    def side(self) -> None:
        """A branch forked from an older commit, a few steps on it, merged back."""
        depth = int(git(self.root, "rev-list", "--count", "HEAD").stdout)
        back = self.rnd.randrange(min(depth, 6))
        name = f"side{self.n}"
        git(self.root, "checkout", "-q", "-b", name, f"HEAD~{back}")
        self.refresh_files()
        for _ in range(self.rnd.randint(1, 3)):
            rel = f"{PREFIX}/a{self.rnd.randrange(3)}/journal/s{self.n}.md"
            self.write(rel, f"side {self.n}\n")
            self.commit("side entry")
        git(self.root, "checkout", "-q", "main")
        git(self.root, "merge", "-q", "--no-ff", "--no-edit", name, env=self.env())
        self.refresh_files()

    def refresh_files(self) -> None:
        listed = git(self.root, "ls-files").stdout.split()
        self.entries = [p for p in listed if "/journal/" in p]
        self.code = [p for p in listed if p.startswith("src/")]


def same_history(got: lineage.History, whole: lineage.History) -> None:
    assert got.added == whole.added
    commits = sorted(set(whole.added.values()))
    assert [got.generation(c) for c in commits] == [whole.generation(c) for c in commits]
    for later in commits:
        for earlier in commits:
            assert got.descends(later, earlier) == whole.descends(later, earlier)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_log_read_since_equals_a_whole_read(tmp_path: Path, seed: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "r")
    state = str(tmp_path / "state")
    walk = Walk(root, random.Random(seed))
    ranges = []
    real = gitcore.run

    def counting(args: list[str], *a: object, **k: object) -> gitcore.GitResult:
        if args[0] == "log" and any(x.startswith("^") for x in args):
            ranges.append(args)
        return real(args, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(gitcore, "run", counting)
    for _ in range(45):
        walk.step()
        same_history(lineage.read(str(root), "HEAD", PREFIX, state),
                     lineage.read(str(root), "HEAD", PREFIX))
        assert memgit.renamed_in(str(root), "HEAD", state) == memgit.renamed_in(str(root),
                                                                                "HEAD")
    assert len(ranges) >= 20  # most reads were since the last one, not whole


def test_a_damaged_cache_is_a_whole_read(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    state = tmp_path / "state"
    walk = Walk(root, random.Random(7))
    for _ in range(5):
        walk.step()
    whole = lineage.read(str(root), "HEAD", PREFIX)
    same_history(lineage.read(str(root), "HEAD", PREFIX, str(state)), whole)
    (state / "cache" / "lineage.pickle").write_bytes(b"\x80\x05garbage")
    same_history(lineage.read(str(root), "HEAD", PREFIX, str(state)), whole)
    same_history(lineage.read(str(root), "HEAD", "other/root", str(state)),
                 lineage.read(str(root), "HEAD", "other/root"))  # another key: not reused
