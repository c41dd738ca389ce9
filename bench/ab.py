"""Two installs of journal-mem on the same paths, alternated: is one slower?

    python bench/ab.py OLD_VENV NEW_VENV [--lessons N] [--rounds R]

Each install gets its own copy of one generated repository (their caches must not
mix). Every round runs each path once per install, in alternating order, and
records the child's CPU time (user + system, from `wait4`: its own and its children's,
git's and forked workers'), which a loaded machine disturbs far less than wall time,
and its wall time (work shared with forked children shows there only). "distill, 20
new lessons" writes twenty lessons (the same in both repositories, dated now, as an
agent's are) before each of its runs, so the `write` of the next round is the first
write after a distill; "write after a commit" commits a change of code first. Prints
per path the medians and their change, a bare `python -c pass` of each venv as the
floor.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fixtures.generate import generate, lessons, write_lessons  # noqa: E402
from journal_mem.gitops.indexlock import QUIET_S  # noqa: E402

SESSION = {"session_id": "ab", "transcript_path": "", "hook_event_name": "SessionStart",
           "source": "startup"}


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items()
           if not k.startswith(("JMEM_", "GIT_")) and k != "PYTHONDONTWRITEBYTECODE"}
    out.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@x")
    return out


def cpu_ms(argv: list[str], cwd: Path, stdin: bytes = b"") -> tuple[float, float]:
    """(CPU time, wall time) of one whole child process, in ms."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env(), stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0
    return (usage.ru_utime + usage.ru_stime) * 1000, wall * 1000


def paths(venv: Path, repo: Path, wt: Path) -> dict[str, tuple[list[str], Path, bytes]]:
    jmem, py = str(venv / "bin" / "jmem"), str(venv / "bin" / "python")
    hook = json.dumps({**SESSION, "cwd": str(wt)}).encode()
    prompt = json.dumps({**SESSION, "cwd": str(wt), "hook_event_name": "UserPromptSubmit",
                         "prompt": "go"}).encode()
    return {
        "python -c pass": ([py, "-c", "pass"], repo, b""),
        "guard, nothing staged": ([jmem, "guard", "--hook", "pre-commit"], repo, b""),
        "write": ([jmem, "write", "--agent", "agent-00", "--topic", "ab", "--title",
                   "An A/B lesson about the write path", "--body", "body"], repo, b""),
        AFTER_COMMIT: ([jmem, "write", "--agent", "agent-01", "--topic", "ab", "--title",
                        "An A/B lesson after a commit of code", "--body", "body"], repo, b""),
        "wake --hook claude (worktree)": ([jmem, "wake", "--hook", "claude", "--agent",
                                           "agent-00"], wt, hook),
        "UserPromptSubmit live check": ([jmem, "wake", "--hook", "claude", "--agent",
                                         "agent-00"], wt, prompt),
        "recall (warm)": ([jmem, "recall", "flaky test cache", "--agent", "agent-00"], repo,
                          b""),
        # `env` execs jmem with the point switched on (every JMEM_* is cleared otherwise)
        "hook pre-work": (["env", "JMEM_HOOKS_PRE_WORK=1", jmem, "hook", "pre-work"], repo,
                          json.dumps({"goal": "Flaky test cache. Fix the retry next.",
                                      "queued": 3}).encode()),
        "status": ([jmem, "status"], repo, b""),
        "distill --dry-run": ([jmem, "distill", "--dry-run"], repo, b""),
        NEW20: ([jmem, "distill"], repo, b""),  # after `add_twenty`
    }


NEW20 = "distill, 20 new lessons"
AFTER_COMMIT = "write after a commit"


def commit_code(repo: Path, round_: int) -> None:
    """A change of code committed, as an agent commits between lessons (`AFTER_COMMIT`)."""
    with open(repo / "code.txt", "a", encoding="utf-8") as fh:
        fh.write(f"round {round_}\n")
    for args in (["add", "code.txt"], ["commit", "-q", "--no-verify", "-m", "code"]):
        subprocess.run(["git", *args], cwd=repo, env=env(), check=True)


def add_twenty(repo: Path, round_: int) -> None:
    """Twenty new lessons for `NEW20` (the same in both repositories), and the quiet
    the distill's commit waits for, so that it times the distill, not that wait."""
    names = [f"agent-{i:02d}" for i in range(10)]
    now = dt.datetime.now(dt.UTC)  # after every lesson written before: appended, as an agent's
    fresh = [e.replace(created=now - dt.timedelta(milliseconds=20 - i))
             for i, e in enumerate(lessons(names, 20, seed=500 + round_))]
    write_lessons(repo, fresh, start=10**7 + round_ * 20)
    time.sleep(QUIET_S + 0.1)


def _copy(seed: Path, repo: Path) -> None:
    """`seed` copied to `repo`, again if a background `git gc --auto` the generator's last
    commit started packed objects away while they were being copied."""
    for attempt in range(10):
        try:
            shutil.copytree(seed, repo, symlinks=True)
            return
        except shutil.Error:
            shutil.rmtree(repo, ignore_errors=True)
            time.sleep(1 + attempt)
    shutil.copytree(seed, repo, symlinks=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--lessons", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="jmem-ab-"))
    seed = generate(tmp / "seed", 10, args.lessons, 1)
    repos = {}
    for name, venv in (("old", args.old), ("new", args.new)):
        repo = tmp / name
        _copy(seed, repo)
        subprocess.run([str(venv / "bin" / "jmem"), "distill"], cwd=repo, env=env(),
                       capture_output=True, check=False)
        wt = tmp / f"{name}-wt"
        subprocess.run(["git", "worktree", "add", "-q", "-b", "ab", str(wt)], cwd=repo,
                       env=env(), check=True)
        repos[name] = paths(venv, repo, wt)
    times: dict[str, dict[str, list[tuple[float, float]]]] = {"old": {}, "new": {}}
    for r in range(args.rounds + 1):
        order = ("old", "new") if r % 2 else ("new", "old")
        for path in repos["old"]:
            for name in order:
                argv, cwd, stdin = repos[name][path]
                if path == NEW20:
                    add_twenty(cwd, r)
                elif path == AFTER_COMMIT:
                    commit_code(cwd, r)
                ms = cpu_ms(argv, cwd, stdin)
                if r:  # round 0 warms every cache
                    times[name].setdefault(path, []).append(ms)
    print("| path | old CPU ms | new CPU ms | change | old wall ms | new wall ms | change |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    for path in repos["old"]:
        row = f"| {path} |"
        for kind in (0, 1):
            old = statistics.median(t[kind] for t in times["old"][path])
            new = statistics.median(t[kind] for t in times["new"][path])
            row += f" {old:.1f} | {new:.1f} | {100 * (new - old) / old:+.1f}% |"
        print(row)
    print(f"\n{args.lessons} lessons, 10 agents; {args.rounds} alternating rounds; "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
