"""`jmem` on the PATH of a real client in the end-to-end tests: this checkout's code,
with the wall time of every run (Python start-up included) logged, for the hook
timings each client's test reports."""

from __future__ import annotations

import sys
from pathlib import Path

from helpers import REPO_ROOT


def shim(folder: Path, log: Path) -> None:
    """`jmem` on PATH: this checkout's code, each run's duration appended to `log`."""
    folder.mkdir()
    path = folder / "jmem"
    path.write_text(
        "#!/bin/sh\nstart=$(date +%s%N)\n"
        f"PYTHONPATH={REPO_ROOT} {sys.executable} -m journal_mem \"$@\"\nrc=$?\n"
        f"echo \"$* $(( ($(date +%s%N) - start) / 1000000 ))\" >> {log}\nexit $rc\n")
    path.chmod(0o755)


def timings(log: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for line in log.read_text().splitlines():
        *command, ms = line.split()
        out.setdefault(" ".join(command), []).append(int(ms))
    return out
