"""The real GitHub Copilot CLI for the end-to-end test: a pinned npm package, cached.

`npm pack @github/copilot-linux-x64@VERSION` gives a tarball whose `package/copilot`
is the whole CLI (a native binary, ~200 MB). It is fetched once into
`$JMEM_E2E_CACHE` (default `~/.cache/journal-mem-e2e/`) and unpacked next to it;
`JMEM_E2E_COPILOT_VERSION` picks another version. `binary()` says why when there is
none (another platform, no npm, no registry).

Also here: the environment that runs it with no login against a fake Anthropic API
on 127.0.0.1 (`COPILOT_OFFLINE`, `COPILOT_PROVIDER_*`, docs/clients.md).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

VERSION = os.environ.get("JMEM_E2E_COPILOT_VERSION") or "1.0.102"
PACKAGE = "@github/copilot-linux-x64"
MODEL = "claude-sonnet-4.5"


def cache_dir() -> Path:
    return Path(os.environ.get("JMEM_E2E_CACHE") or
                Path.home() / ".cache" / "journal-mem-e2e")


def binary() -> tuple[Path | None, str]:
    """The pinned CLI, fetching it when needed; else (None, why)."""
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        return None, f"{PACKAGE} is built for linux x64 only"
    folder = cache_dir()
    exe = folder / f"copilot-{VERSION}" / "package" / "copilot"
    if not exe.is_file():
        tarball = folder / f"github-copilot-linux-x64-{VERSION}.tgz"
        if not tarball.is_file():
            why = fetch(folder)
            if why:
                return None, why
        with tarfile.open(tarball) as tar:
            tar.extractall(folder / f"copilot-{VERSION}", filter="data")
    return exe, ""


def fetch(folder: Path) -> str:
    """`npm pack` the pinned package into `folder`; "" on success, else why not."""
    npm = shutil.which("npm")
    spec = f"{PACKAGE}@{VERSION}"
    if npm is None:
        return "npm is not installed: cannot fetch Copilot CLI for the end-to-end test"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run([npm, "pack", spec, "--silent"], cwd=folder,
                              capture_output=True, text=True, timeout=900, check=False)
    except subprocess.TimeoutExpired:
        return f"npm pack {spec} timed out (registry unreachable?)"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"npm pack {spec} failed (registry unreachable?): {last}"
    return ""


def environment(base_url: str, home: Path) -> dict[str, str]:
    """No login, no GitHub: the model is the fake Anthropic API at `base_url`; every tool
    allowed (which also loads the repository's hooks in prompt mode)."""
    return {"HOME": str(home), "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_BASE_URL": base_url, "COPILOT_PROVIDER_API_KEY": "fake-key",
            "COPILOT_ALLOW_ALL": "true", "NO_COLOR": "1"}


if __name__ == "__main__":  # fetch and unpack before the tests
    found, reason = binary()
    print(f"copilot cli {VERSION}: {found}" if found else f"copilot cli: {reason}")
