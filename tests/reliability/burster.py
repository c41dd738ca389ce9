"""One committer of the burst-commit reliability test: what an agent does in its checkout.

Each commit: file one lesson (through `journal.record`, what `jmem write` calls), change
a code file, `git add` it, `git commit`, `git status`. Commits come in bursts of 1-5 with
short pauses, so the post-commit hook's background distill is running most of the time.
Prints one JSON object: the lesson keys filed, every git command run and the failures.

    python tests/reliability/burster.py CWD NAME COMMITS AGENT SEED
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

from journal_mem.journal.entry import build
from journal_mem.journal.files import record
from journal_mem.repo import open_context


def git(cwd: str, args: list[str], failures: list[dict[str, object]]) -> None:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        failures.append({"cmd": f"git {' '.join(args)}", "rc": proc.returncode,
                         "err": (proc.stderr + proc.stdout).strip()[-400:]})


def main(cwd: str, name: str, commits: int, agent: str, seed: int) -> None:
    rng = random.Random(seed)
    layout = open_context(cwd).layout
    keys: list[str] = []
    failures: list[dict[str, object]] = []
    code = Path(cwd) / f"code-{name}.txt"
    done = runs = 0
    while done < commits:
        for _ in range(min(rng.randint(1, 5), commits - done)):
            key = f"{name}-{done}"
            entry = build(agent=agent, topic=f"t{done % 3}", key=key,
                          title=f"Burst lesson {name} {done}", body=f"From {name}, commit {done}.")
            record(layout, entry)
            keys.append(key)
            with code.open("a", encoding="utf-8") as fh:
                fh.write(f"{done}\n")
            git(cwd, ["add", code.name], failures)
            git(cwd, ["commit", "-q", "-m", f"{name}: change {done}"], failures)
            git(cwd, ["status", "--porcelain"], failures)
            runs += 3
            done += 1
        time.sleep(rng.uniform(0.0, 0.3))
    json.dump({"keys": keys, "runs": runs, "failures": failures}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
