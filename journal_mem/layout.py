"""Where memory lives on disk (docs/DESIGN.md, "Files on disk"), for one repository and config."""

from __future__ import annotations

import os

from journal_mem import settings
from journal_mem.gitops import gitcore as gitfacts
from journal_mem.gitops.gitcore import Repo
from journal_mem.names import MEMORY_MD as MEMORY_MD
from journal_mem.names import TOPICS as TOPICS
from journal_mem.names import is_name

JOURNAL = "journal"
KEEP = ".gitkeep"
# Written only by the distiller, at the top of the memory root: which lessons
# it has folded and the distill date it used (a fresh clone knows what is
# pending; a rebuild uses the same date).
DISTILL_STATE = "distill-state.json"


class Layout:
    """Paths of the memory root in the main checkout, and of the machine-local state."""

    __slots__ = ("main_memory", "memory_root", "repo")

    def __init__(self, repo: Repo, memory_root: str) -> None:
        self.repo = repo
        self.memory_root = memory_root.strip("/")
        # The memory root of the main checkout (absolute): joined once, not at each of
        # the ~8k paths a distill makes at 100k lessons
        self.main_memory = os.path.join(repo.main_root, self.memory_root)

    def agent_dir(self, agent: str) -> str:
        return os.path.join(self.main_memory, agent)

    def journal_dir(self, agent: str) -> str:
        return os.path.join(self.main_memory, agent, JOURNAL)

    def memory_md(self, agent: str) -> str:
        return os.path.join(self.main_memory, agent, MEMORY_MD)

    @property
    def distill_state(self) -> str:
        return os.path.join(self.main_memory, DISTILL_STATE)

    @property
    def state_dir(self) -> str:
        """`<git-common-dir>/journal-mem`: outbox, lock, caches, logs; never committed."""
        return self.repo.state_dir

    def outbox_dir(self, agent: str) -> str:
        return os.path.join(self.state_dir, "outbox", agent)

    def rel(self, path: str) -> str:
        """`path` relative to the main checkout, with forward slashes."""
        return os.path.relpath(path, self.repo.main_root).replace(os.sep, "/")

    def agents_on_disk(self) -> list[str]:
        """Agents with a folder under the memory root, sorted."""
        try:
            names = os.listdir(self.main_memory)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(
            n for n in names if is_name(n) and os.path.isdir(os.path.join(self.main_memory, n))
            and not os.path.islink(os.path.join(self.main_memory, n))  # never read through one
        )

    # --- symlinks on the way to memory (hostile trees) --------------------------

    def symlink_on_way(self, path: str) -> str | None:
        """The first folder from the repository top down to `path` (inclusive) that is a
        symlink, repository-relative; None when every one is a real folder.

        A symlinked `.claude`, memory root, agent, journal or topics folder would
        make a writer create files wherever the link points, outside the
        repository. Paths outside the main checkout (the outbox lives in the git
        dir) are not checked.
        """
        top = self.repo.main_root
        rel = os.path.relpath(path, top)
        if rel == os.curdir or rel.startswith(os.pardir):
            return None
        current = top
        for part in rel.split(os.sep):
            current = os.path.join(current, part)
            if os.path.islink(current):
                return self.rel(current)
        return None

    def symlinked_folders(self) -> list[str]:
        """Repository-relative paths of the folders above the memory root, the root
        itself, agent folders and their journal and topics folders that are
        symlinks: what no writer may write through."""
        above = self.symlink_on_way(self.main_memory)
        if above is not None:
            return [above]  # nothing below it is inside the repository
        top = self.main_memory
        try:
            names = sorted(os.listdir(top))
        except (FileNotFoundError, NotADirectoryError):
            return []
        found = []
        for name in names:
            agent = os.path.join(top, name)
            if os.path.islink(agent):
                found.append(self.rel(agent))
                continue
            for sub in (JOURNAL, TOPICS):
                if os.path.islink(os.path.join(agent, sub)):
                    found.append(self.rel(os.path.join(agent, sub)))
        return found

    def ancestors(self) -> list[str]:
        """Repository-relative folders above the memory root, top first (`.claude`)."""
        parts = self.memory_root.split("/")
        return ["/".join(parts[:i]) for i in range(1, len(parts))]


def root_at(cwd: str, rev: str, *, clean: bool = False) -> str | None:
    """The memory root the config file at `rev` sets ("" for the index), with `JMEM_*`
    applied; None when `rev` has no config file (or there is no `rev`).

    The guard and `check --base` judge a commit by the root of the side they
    trust, not the one the commit itself sets: a commit that moved the root
    would otherwise decide which of its own changes are looked at.
    """
    res = gitfacts.run(["cat-file", "blob", f"{rev}:{settings.CONFIG_FILE}"], cwd,
                       check=False, clean=clean)
    if not res.ok:
        return None
    import tomllib

    try:
        data = tomllib.loads(res.stdout.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = {}  # reported by every other command; judge with the defaults
    merged = settings.gather(cwd, file_data=data)[0]
    return str(settings.get(merged, "memory_root")).strip().strip("/")


def is_native(rel: str) -> bool:
    """True for a memory-root-relative path of a memory file the client wrote itself:
    a markdown file in an agent folder outside `journal/` and `topics/` (not its
    `MEMORY.md`), or any markdown file at the root (the root `MEMORY.md` too)."""
    parts = rel.split("/")
    if not rel.endswith(".md") or any(p.startswith(".") or not p for p in parts):
        return False
    if len(parts) == 1:
        return True
    return is_name(parts[0]) and parts[1] not in (JOURNAL, TOPICS) and parts[1:] != [MEMORY_MD]
