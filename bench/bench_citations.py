"""Benchmark: what following citations adds to a distill.

A repository of 50 code files (400 lines each) and 1,000 facts, each citing two lines
(recorded as `jmem write --ref PATH#Lx-Ly` records them), is distilled once; then 100
new commits come in (lines inserted above cited ones, and five commits editing cited
lines), and the next distill is timed. The baseline is the same journal and the same
100 commits with the facts citing nothing, in the same run. Each run starts from the
same distilled state (the commits and the state dir put back), so every run follows the
same 100 commits, and finds the checkout at rest (`_at_rest`).

    python bench/bench_citations.py [RUNS]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(1, str(ROOT))
from runner import Row, bench_env, git, jmem_argv, table, time_command  # noqa: E402

from journal_mem.gitops.indexlock import QUIET_S  # noqa: E402
from journal_mem.gitops.memgit import _KeptIndex  # noqa: E402
from journal_mem.journal.anchor import digest  # noqa: E402

FILES, LINES, FACTS, COMMITS, EDITS = 50, 400, 1_000, 100, 5
GOAL = 2.0  # at most twice the same distill with nothing cited


def _letters(n: int) -> str:
    out = ""
    for _ in range(4):
        n, r = divmod(n * 7919 + 13, 26)
        out += chr(97 + r)
    return out


def build(dest: Path, cited: bool) -> None:
    """The repository, its first distill done, then 100 commits not yet distilled."""
    env = bench_env()
    subprocess.run(["git", "init", "-q", "-b", "main", str(dest)], check=True, env=env)
    files = {f"src/m{i:02d}.py": [f"v_{i}_{n} = {n}" for n in range(LINES)]
             for i in range(FILES)}
    for path, lines in files.items():
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_text("\n".join(lines) + "\n")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "code")
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=dest, capture_output=True,
                          text=True, check=True, env=env).stdout.strip()
    subprocess.run([*jmem_argv(), "init", "--agent", "api", "--no-git-hooks", "--no-claude"],
                   cwd=dest, env=env, capture_output=True, check=True)
    folder = dest / ".claude" / "agent-memory" / "api" / "journal"
    for k in range(FACTS):
        path, first = f"src/m{k % FILES:02d}.py", (k // FILES) * 15 + 1
        ref = f"{path}#L{first}-L{first + 1}"
        fields = ""
        if cited:
            text = files[path][first - 1:first + 1]
            fields = f'refs: ["{ref}"]\ncited: ["{base} {digest(text)} clean {ref}"]\n'
        title = " ".join(_letters(k * 31 + i) + _letters(k + i * 977) for i in range(3))
        (folder / f"2026-12-01-fact-{k:04d}.md").write_text(
            f"---\nschema: 1\nagent: api\ncreated: 2026-12-01T10:00:00Z\ntopic: t{k % 20}\n"
            f"key: fact-{k:04d}\n{fields}---\n\n# {title}\n")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "lessons")
    subprocess.run([*jmem_argv(), "distill"], cwd=dest, env=env, capture_output=True,
                   check=True)
    for j in range(COMMITS):
        path = f"src/m{j % FILES:02d}.py"
        lines = files[path]
        if j % (COMMITS // EDITS) == COMMITS // EDITS - 1:
            lines[-LINES + 1] += "  # edited"  # a cited line (fact j % FILES, lines 1-2)
        else:
            lines.insert(0, f"# line {j}")
        (dest / path).write_text("\n".join(lines) + "\n")
        git(dest, "commit", "-q", "-am", f"commit {j}")


def _snapshot(dest: Path, keep: Path) -> str:
    shutil.copytree(dest / ".git" / "journal-mem", keep)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=dest, capture_output=True,
                          text=True, check=True, env=bench_env()).stdout.strip()


def _restore(dest: Path, keep: Path, sha: str) -> None:
    git(dest, "reset", "-q", "--hard", sha)
    state = dest / ".git" / "journal-mem"
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(keep, state)
    _index_kept(state)
    _at_rest(dest / ".git")


def _index_kept(state: Path) -> None:
    """Record again that the private index copied back holds what it held. A distill
    trusts that record only for the very index file it wrote (its size, mtime and
    inode: `memgit._KeptIndex`), which the next distill in a repository finds; the copy
    is another inode, so each run paid a `read-tree` of the memory root (~10 ms) that no
    user's next distill pays."""
    holds = state / "distill-index.holds"
    if holds.exists():
        prefix, folder, _ = holds.read_text("utf-8", "surrogateescape").split("\0")
        _KeptIndex(str(state), prefix).keep(folder)


def _at_rest(git_dir: Path) -> None:
    """Date the checkout's index, HEAD and refs (and their logs) a few seconds back, as a
    distill finds a checkout at rest. A distill commits only once nothing wrote them for
    `indexlock.QUIET_S` (0.5 s): right after the reset above, the cited distill, which
    commits, waited out that window and the baseline, which commits nothing, did not;
    the table then showed the wait (~250 ms of ~500), not the citations."""
    aged = time.time() - 5 * QUIET_S
    for path in [git_dir / "index", git_dir / "HEAD", *(git_dir / "logs").rglob("*"),
                 *(git_dir / "refs").rglob("*")]:
        os.utime(path, (aged, aged))


def rows(runs: int = 5) -> list[Row]:
    work = Path(tempfile.mkdtemp(prefix="jmem-bench-cite-"))
    try:
        timings = {}
        for cited in (False, True):
            dest = work / ("cited" if cited else "plain")
            build(dest, cited)
            keep = work / f"keep-{cited}"
            sha = _snapshot(dest, keep)
            timings[cited] = time_command([*jmem_argv(), "distill"], dest, runs,
                                          setup=lambda d=dest, k=keep, s=sha: _restore(d, k, s))
    finally:
        if not os.environ.get("JMEM_BENCH_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
    with_, without = timings[True], timings[False]
    return [Row(f"distill after {COMMITS} commits, {FACTS:,} cited facts", with_,
                "the same, nothing cited", without, f"≤ {GOAL:g}×",
                with_.median <= GOAL * without.median)]


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 5), "citations"))
