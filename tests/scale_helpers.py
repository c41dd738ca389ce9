"""Helpers for the many-machines tests: a local bare remote that refuses forced
pushes (and logs every update), and clones set up with journal-mem."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from helpers import base_env, git, jmem, make_repo

MEM = ".claude/agent-memory"
ZERO = "0" * 40

# The remote's update hook: a non-fast-forward update (only `push --force` can
# send one) is refused and logged; every accepted update is logged too.
UPDATE_HOOK = f"""#!/bin/sh
ref=$1 old=$2 new=$3
log="$(cd "$(dirname "$0")/.." && pwd)/updates.log"
if [ "$old" != {ZERO} ] && ! git merge-base --is-ancestor "$old" "$new"; then
    echo "FORCED $ref $old $new" >> "$log"
    exit 1
fi
echo "ff $ref $old $new" >> "$log"
"""


def make_remote(tmp: Path, agents: tuple[str, ...] = ("api", "web")) -> Path:
    """A bare repository holding one commit with journal-mem set up (no hooks)."""
    seed = make_repo(tmp / "seed")
    proc = jmem(seed, "init", *[a for agent in agents for a in ("--agent", agent)],
                "--no-git-hooks", "--no-claude")
    assert proc.returncode == 0, proc.stderr
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "init journal-mem")
    remote = tmp / "remote.git"
    git(tmp, "clone", "-q", "--bare", str(seed), str(remote))
    git(remote, "config", "receive.denyNonFastForwards", "true")
    hook = remote / "hooks" / "update"
    hook.write_text(UPDATE_HOOK)
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return remote


def clone(remote: Path, path: Path, *, hooks: bool = False) -> Path:
    """A clone of `remote` (a machine); with `hooks`, journal-mem's git hooks installed."""
    git(path.parent, "clone", "-q", str(remote), str(path))
    if hooks:
        proc = jmem(path, "init", "--no-claude")
        assert proc.returncode == 0, proc.stderr
    return path


def updates(remote: Path) -> list[str]:
    """Every update the remote's hook saw."""
    log = remote / "updates.log"
    return log.read_text().splitlines() if log.exists() else []


def write(clone_: Path, agent: str, title: str, env: dict[str, str] | None = None) -> Path:
    proc = jmem(clone_, "write", "--agent", agent, "--topic", "fleet", "--title", title,
                env=env)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def push(clone_: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    """`jmem distill --push --json`; its report."""
    proc = jmem(clone_, "distill", "--push", *args, "--json", env=env or quiet_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data: dict[str, object] = json.loads(proc.stdout)
    return data


def quiet_env() -> dict[str, str]:
    """No background distill from the post-commit hook (it would race for the lock)."""
    return base_env(JMEM_HOOKS_DISTILL_ON_COMMIT="false")


def titles(root: Path, agent: str) -> str:
    path = root / MEM / agent / "MEMORY.md"
    return path.read_text() if path.exists() else ""
