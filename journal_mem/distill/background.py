"""`jmem distill --background`: start the distill detached and return at once.

The post-commit hook runs `distill --if-due --background`; git must get
control back at once, so this runs before click or pydantic are imported: it
checks the master switches, starts the same command without `--background`
in a new session (it survives the hook's end and ignores the terminal's
signals), its output appended to `<git-common-dir>/journal-mem/logs/distill.log`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from journal_mem.gitops import gitcore
from journal_mem.settings import Settings, env_flag

LOG = os.path.join("logs", "distill.log")


def _cwd(argv: list[str]) -> str:
    if len(argv) >= 2 and argv[0] == "-C":
        return argv[1]
    return os.getcwd()


def _off(main_root: str, if_due: bool) -> str | None:
    """Why a background `--if-due` distill must not start (the same switches as
    `store.distill.schedule.off_reason`, read without pydantic); a typo raises."""
    if not if_due:
        return None
    if env_flag("JMEM_DISABLE"):
        return "journal-mem is disabled (JMEM_DISABLE=1): no distill"
    if not Settings(main_root).switch("hooks.distill_on_commit"):
        return "hooks.distill_on_commit is false: no distill on commit"
    return None


def detach(argv: list[str], cwd: str | None = None) -> int:
    """Start `jmem ARGV` (without --background) detached; print where it logs; return 0.

    `cwd`: where the command runs (`-C`), when the caller has parsed it already.
    """
    repo = gitcore.locate(cwd or _cwd(argv))  # errors: the boundary in main.main reports them
    reason = _off(repo.main_root, "--if-due" in argv)
    if reason:
        print(f"jmem: {reason}")
        return 0
    log = os.path.join(repo.state_dir, LOG)
    os.makedirs(os.path.dirname(log), exist_ok=True)
    args = [a for a in argv if a != "--background"]
    with open(log, "ab") as out:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        out.write(f"--- {stamp} jmem {' '.join(args)}\n".encode())
        out.flush()
        proc = subprocess.Popen(
            [sys.executable, "-m", "journal_mem", *args], cwd=os.getcwd(),
            env=gitcore.clean_env(), stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
        )
    print(f"jmem: distill started in the background (pid {proc.pid}); log: {log}")
    return 0


def fast_main(args: list[str]) -> int | None:
    """`jmem distill … --background` (the post-commit hook) before click loads; any other
    distill through `distill.command`, whose fold the hook never loads (None: to click;
    `-C PATH distill --background` reaches `detach` through click)."""
    if "--background" in args:
        return detach(["distill", *args])
    from journal_mem.distill.command import fast_main as distill  # the fold, not the hook's

    return distill(args)
