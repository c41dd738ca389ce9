"""The real Gemini CLI for the end-to-end test: a pinned npm package, cached.

`npm pack @google/gemini-cli@VERSION` gives a tarball whose `package/bundle/gemini.js`
is the whole CLI (one esbuild bundle; its npm dependencies are optional native
extras), run with `node` (>= 20). It is fetched once into `$JMEM_E2E_CACHE` (default
`~/.cache/journal-mem-e2e/`) and unpacked next to it; `JMEM_E2E_GEMINI_VERSION`
picks another version. `command()` says why when there is none.

Also here: the settings and environment that point the CLI at a fake API on
127.0.0.1 with nothing else sent out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

VERSION = os.environ.get("JMEM_E2E_GEMINI_VERSION") or "0.61.0"
PACKAGE = "@google/gemini-cli"


def cache_dir() -> Path:
    return Path(os.environ.get("JMEM_E2E_CACHE") or
                Path.home() / ".cache" / "journal-mem-e2e")


def command() -> tuple[list[str] | None, str]:
    """`[node, …/gemini.js]` of the pinned version, fetching it when needed; else (None, why)."""
    node = shutil.which("node")
    if node is None:
        return None, "node is not installed: cannot run Gemini CLI for the end-to-end test"
    folder = cache_dir()
    unpacked = folder / f"gemini-cli-{VERSION}"
    script = unpacked / "package" / "bundle" / "gemini.js"
    if not script.is_file():
        tarball = folder / f"google-gemini-cli-{VERSION}.tgz"
        if not tarball.is_file():
            why = fetch(folder)
            if why:
                return None, why
        with tarfile.open(tarball) as tar:
            tar.extractall(unpacked, filter="data")
    return [node, str(script)], ""


def fetch(folder: Path) -> str:
    """`npm pack` the pinned package into `folder`; "" on success, else why not."""
    npm = shutil.which("npm")
    spec = f"{PACKAGE}@{VERSION}"
    if npm is None:
        return "npm is not installed: cannot fetch Gemini CLI for the end-to-end test"
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


def user_settings() -> str:
    """`~/.gemini/settings.json`: auth by API key (with `GOOGLE_GEMINI_BASE_URL` alone the
    CLI picks auth type "gateway", which headless start-up refuses as "Invalid auth
    method selected."), no usage statistics, telemetry or update checks."""
    return json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }, indent=2)


def environment(base_url: str, home: Path) -> dict[str, str]:
    """What the CLI needs in its environment: the fake API, a key, a trusted workspace
    (in an untrusted folder a headless run exits 55 before any request: "Gemini CLI is
    not running in a trusted directory"; `--skip-trust` does the same as the variable)."""
    return {"HOME": str(home), "GOOGLE_GEMINI_BASE_URL": base_url,
            "GEMINI_API_KEY": "fake-gemini-key", "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "NO_COLOR": "1"}


if __name__ == "__main__":  # fetch and unpack before the tests
    found, reason = command()
    print(f"gemini cli {VERSION}: {found}" if found else f"gemini cli: {reason}")
