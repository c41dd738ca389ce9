"""The real Claude Code CLI for the end-to-end test: a pinned npm package, cached.

`npm pack @anthropic-ai/claude-code-linux-x64@VERSION` gives a tarball whose
`package/claude` is the native CLI (~190 MB). It is fetched once into
`$JMEM_E2E_CACHE` (default `~/.cache/journal-mem-e2e/`; `.ci/run` fetches it
before the tests) and unpacked next to it, in a folder per version. `binary()`
says why when there is none: the test is then skipped with that reason, which
only happens where npm cannot reach its registry.

`JMEM_E2E_CLAUDE_VERSION=2.1.400` runs the tests against another release
instead of the pinned one (docs/claude-code-e2e.md: checking a new release);
`python3 tests/e2e/claudecode.py` fetches whichever is chosen.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

PINNED = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code-linux-x64"
OVERRIDE = "JMEM_E2E_CLAUDE_VERSION"


def version() -> str:
    """The version to run: `$JMEM_E2E_CLAUDE_VERSION` when set, else the pinned one."""
    chosen = os.environ.get(OVERRIDE, "").strip() or PINNED
    if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z.+-]*", chosen):
        raise ValueError(f"{OVERRIDE}={chosen!r} is not a version")
    return chosen


VERSION = version()


def described() -> str:
    """The version in use, said so that a test log shows where it came from."""
    if VERSION == PINNED:
        return f"{VERSION} (pinned)"
    return f"{VERSION} (from {OVERRIDE}; pinned {PINNED})"


def cache_dir() -> Path:
    return Path(os.environ.get("JMEM_E2E_CACHE") or
                Path.home() / ".cache" / "journal-mem-e2e")


@functools.cache  # one fetch per test run, also when it fails
def binary() -> tuple[Path | None, str]:
    """The unpacked `claude` of VERSION, fetching it when needed; else (None, why)."""
    folder = cache_dir()
    exe = folder / VERSION / "package" / "claude"
    if exe.is_file():
        return exe, ""
    tarball = folder / f"anthropic-ai-claude-code-linux-x64-{VERSION}.tgz"
    if not tarball.is_file():
        why = fetch(folder)
        if why:
            return None, why
    # unpacked beside its final place and renamed: an interrupted unpack is not a CLI
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        try:
            with tarfile.open(tarball) as tar:
                tar.extractall(scratch, filter="data")
        except (tarfile.TarError, OSError, EOFError) as exc:
            return None, f"cannot unpack {tarball} ({exc}): delete it to fetch it again"
        unpacked = Path(scratch) / "package" / "claude"
        if not unpacked.is_file():
            return None, f"{tarball.name} holds no package/claude"
        unpacked.chmod(0o755)
        exe.parent.parent.mkdir(parents=True, exist_ok=True)
        if not exe.is_file():
            shutil.rmtree(exe.parent, ignore_errors=True)
            os.replace(Path(scratch) / "package", exe.parent)
    return exe, ""


def fetch(folder: Path) -> str:
    """`npm pack` VERSION of the package into `folder`; "" on success, else why not."""
    npm = shutil.which("npm")
    if npm is None:
        return (f"npm is not installed: cannot fetch Claude Code {VERSION} for the "
                "end-to-end test")
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
    print(f"claude code {described()}: {found}" if found else
          f"claude code {described()}: {reason}")
