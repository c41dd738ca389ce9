"""The real Claude Code CLI for the end-to-end test: a pinned npm package, cached.

`npm pack @anthropic-ai/claude-code-linux-x64@VERSION` gives a tarball whose
`package/claude` is the native CLI (~190 MB). It is fetched once into
`$JMEM_E2E_CACHE` (default `~/.cache/journal-mem-e2e/`; `.ci/run` fetches it
before the tests) and unpacked next to it. `binary()` says why when there is
none: the test is then skipped with that reason, which only happens where
npm cannot reach its registry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code-linux-x64"


def cache_dir() -> Path:
    return Path(os.environ.get("JMEM_E2E_CACHE") or
                Path.home() / ".cache" / "journal-mem-e2e")


def binary() -> tuple[Path | None, str]:
    """The unpacked `claude` of the pinned version, fetching it when needed; else (None, why)."""
    folder = cache_dir()
    exe = folder / VERSION / "package" / "claude"
    if exe.is_file():
        return exe, ""
    tarball = folder / f"anthropic-ai-claude-code-linux-x64-{VERSION}.tgz"
    if not tarball.is_file():
        why = fetch(folder)
        if why:
            return None, why
    with tarfile.open(tarball) as tar:
        tar.extractall(folder / VERSION, filter="data")
    exe.chmod(0o755)
    return exe, ""


def fetch(folder: Path) -> str:
    """`npm pack` the pinned package into `folder`; "" on success, else why not."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed: cannot fetch Claude Code for the end-to-end test"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run([npm, "pack", f"{PACKAGE}@{VERSION}", "--silent"], cwd=folder,
                              capture_output=True, text=True, timeout=900, check=False)
    except subprocess.TimeoutExpired:
        return f"npm pack {PACKAGE}@{VERSION} timed out (registry unreachable?)"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"npm pack {PACKAGE}@{VERSION} failed (registry unreachable?): {last}"
    return ""


if __name__ == "__main__":  # `.ci/run`: fetch and unpack before the tests
    found, reason = binary()
    print(f"claude code {VERSION}: {found}" if found else f"claude code: {reason}")
