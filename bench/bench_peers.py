"""The peers, timed beside journal-mem in the same run: the pre-commit framework and
agent-memory-git, each installed from the package index into a venv of its own.

    python bench/bench_peers.py [RUNS]     (run_all.py runs it with --peers)

* pre-commit: a repository whose `.pre-commit-config.yaml` has one `repo: local`
  hook of `language: python` (`python -c pass`, always run, no files passed); timed as git
  runs it (`git hook run pre-commit`, one ordinary file staged) and as a `git
  commit` of one file, beside journal-mem's guard in a repository of its own
  (`jmem init`, one agent) on the same commit.
* agent-memory-git: a data repository of 1,000 memories (files in its own
  format, committed), timed on `mem add` (a memory from the command line) and
  on `mem hook session-start --tool claude-code` (the index a Claude Code
  session gets), beside `jmem write` and `jmem wake --hook claude`.

Each against `python -c pass` of this run's interpreter (the baseline every ratio
in run_all's goals table uses); the peers' own interpreters are started bare too
(their venvs are made from the same Python). The venvs live in
bench/results/peers (gitignored) and are reused by later runs.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import (
    Row,
    Skipped,
    Timing,
    bench_env,
    git,
    jmem_argv,
    python_baseline,
    table,
    time_command,
)

PEERS = Path(__file__).resolve().parent / "results" / "peers"
PRE_COMMIT = "pre-commit"
AGENT_MEMORY = "agent-memory-git"
MEMORIES = 1_000
HOOK_CONFIG = """repos:
  - repo: local
    hooks:
      - id: bench-python
        name: bench python hook
        entry: python -c pass
        language: python
        pass_filenames: false
        always_run: true
"""
SETTLE_S = 0.4  # let journal-mem's background distill finish before the next commit


def venv(name: str, package: str) -> Path:
    """The venv of `package` under bench/results/peers (made and installed once)."""
    home = PEERS / name
    python = home / "bin" / "python"
    marker = home / "installed"
    if not marker.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(home)], check=True,
                       capture_output=True)
        proc = subprocess.run([str(python), "-m", "pip", "install", "-q", package],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise Skipped(f"peers: cannot install {package} from the package index: "
                          f"{proc.stderr.strip().splitlines()[-1:]}")
        version = subprocess.run([str(python), "-m", "pip", "show", package],
                                 capture_output=True, text=True, check=True).stdout
        marker.write_text(next((line for line in version.splitlines()
                                if line.startswith("Version:")), "Version: ?") + "\n")
    return home


def version(home: Path) -> str:
    return (home / "installed").read_text().split(":", 1)[1].strip()


def _commit_setup(repo: Path, settle: float) -> object:
    counter = itertools.count(100)

    def change() -> None:
        (repo / "app.py").write_text(f"x = {next(counter)}\n")
        git(repo, "add", "app.py")
        time.sleep(settle)

    return change


def pre_commit_rows(runs: int, root: Path, base: Timing) -> list[Row]:
    home = venv("pre-commit", PRE_COMMIT)
    env = bench_env(PATH=f"{home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                    PRE_COMMIT_HOME=str(PEERS / "pre-commit-cache"))
    peer = root / "pre-commit"
    peer.mkdir()
    git(peer, "init", "-q", "-b", "main")
    (peer / ".pre-commit-config.yaml").write_text(HOOK_CONFIG)
    (peer / "app.py").write_text("x = 0\n")
    git(peer, "add", "-A")
    subprocess.run([str(home / "bin" / "pre-commit"), "install"], cwd=peer, env=env,
                   check=True, capture_output=True)
    subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=peer, env=env, check=True,
                   capture_output=True)  # builds the hook's environment once
    ours = root / "ours"
    ours.mkdir()
    git(ours, "init", "-q", "-b", "main")
    (ours / "app.py").write_text("x = 0\n")
    time_command([*jmem_argv(), "init", "--agent", "api", "--no-claude"], ours, runs=1,
                 warmup=False)
    git(ours, "add", "-A")
    git(ours, "commit", "-q", "-m", "start")
    commit = ["git", "commit", "-q", "-m", "c"]
    run_hook = ["git", "hook", "run", "pre-commit"]
    (peer / "app.py").write_text("x = 1\n")
    git(peer, "add", "app.py")
    (ours / "app.py").write_text("x = 1\n")
    git(ours, "add", "app.py")
    peer_hook = time_command(run_hook, peer, runs, env=env)
    our_hook = time_command(run_hook, ours, runs)
    peer_commit = time_command(commit, peer, runs, env=env, setup=_commit_setup(peer, 0.0))
    our_commit = time_command(commit, ours, runs, setup=_commit_setup(ours, SETTLE_S))
    bare = time_command(["git", "-c", "core.hooksPath=/dev/null", *commit[1:]], ours, runs,
                        setup=_commit_setup(ours, 0.0))
    tag = f"pre-commit {version(home)}"
    return [
        Row(f"peer {tag}: pre-commit hook, one `repo: local` python hook", peer_hook,
            "python -c pass", base, "–", None),
        Row("ours: guard pre-commit hook, same staged change", our_hook, "python -c pass",
            base, "–", None),
        Row(f"peer {tag}: git commit of one file", peer_commit, "python -c pass", base, "–",
            None),
        Row("ours: git commit of one file, all journal-mem hooks", our_commit,
            "python -c pass", base, "–", None),
        Row("git commit of one file, no hooks", bare, "python -c pass", base, "–", None),
    ]


MEMORY = """---
id: {id}
name: {name}
type: {type}
scope: {scope}
description: {description}
created: 2026-11-{day:02d}T10:00:00+00:00
source:
  tool: cli
  host: bench
  cwd: {cwd}
  git_root: {cwd}
---
{body}
"""


def seed_memories(data: Path, project: Path, count: int) -> None:
    """`count` memories in agent-memory-git's own file format, committed."""
    types = ("user", "feedback", "project", "reference")
    for i in range(count):
        day = 1 + i % 28
        folder = data / "memories" / "2026" / "11"
        folder.mkdir(parents=True, exist_ok=True)
        ident = f"202611{day:02d}-memory-{i:04d}-{i % 65536:04x}"
        (folder / f"{ident}.md").write_text(MEMORY.format(
            id=ident, name=f"memory {i}", type=types[i % 4],
            scope="global" if i % 3 == 0 else "here",
            description=f"Memory number {i} about thing {i}", day=day, cwd=project,
            body=f"Fact {i}: run the suite with -p no:randomly; fixture {i} is shared."))
    git(data, "add", "-A")
    git(data, "commit", "-q", "-m", f"{count} memories")


def agent_memory_rows(runs: int, root: Path, base: Timing) -> list[Row]:
    home = venv("agent-memory-git", AGENT_MEMORY)
    mem = str(home / "bin" / "mem")
    project = root / "amg-project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    env = bench_env(AGENT_MEMORY_CONFIG_DIR=str(root / "amg-config"), HOME=str(root / "home"))
    data = root / "amg-data"
    subprocess.run([mem, "init", str(data)], cwd=project, env=env, check=True,
                   capture_output=True)
    seed_memories(data, project, MEMORIES)
    counter = itertools.count()

    def add() -> list[str]:
        i = next(counter)
        return [mem, "add", "--name", f"bench memory {i}", "--type", "feedback", "--scope",
                "here", "--description", f"A memory from the benchmark, number {i}",
                "Body text."]

    payload = {"session_id": "bench-1", "cwd": str(project), "hook_event_name": "SessionStart",
               "source": "startup"}
    start = [mem, "hook", "session-start", "--tool", "claude-code"]
    peer_add = time_command(add, project, runs, env=env)
    peer_start = time_command(start, project, runs, env=env,
                              stdin=json.dumps(payload).encode())
    got = subprocess.run(start, cwd=project, env=env, input=json.dumps(payload).encode(),
                         capture_output=True, check=True).stdout.decode()
    if f"memory {MEMORIES - 1}" not in got and "Memory number" not in got:
        raise RuntimeError(f"agent-memory-git's session start shows none of the seeded "
                           f"memories: {got[:500]}")
    tag = f"agent-memory-git {version(home)}"
    return [
        Row(f"peer {tag}: `mem add`, {MEMORIES:,} memories", peer_add, "python -c pass", base,
            "–", None),
        Row(f"peer {tag}: session start (Claude Code hook), {MEMORIES:,} memories", peer_start,
            "python -c pass", base, "–", None),
    ]


def rows(runs: int = 10, peers: bool = False) -> list[Row]:
    """The peers' rows (only with `peers`: installing them takes a minute the first time)."""
    if not peers:
        raise Skipped("peers: not measured (run_all.py --peers installs and times them)")
    PEERS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="jmem-bench-peers-") as tmp:
        root = Path(tmp)
        base = python_baseline(root, runs)
        return [*pre_commit_rows(runs, root, base), *agent_memory_rows(runs, root, base)]


if __name__ == "__main__":
    print(table(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10, peers=True), "peers"))
