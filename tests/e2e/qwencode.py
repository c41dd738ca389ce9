"""The real Qwen Code CLI for the end-to-end test: a pinned npm package, cached.

`npm pack @qwen-code/qwen-code@VERSION` gives a tarball whose `package/cli-entry.js`
runs the CLI with `node` (>= 20; its npm dependencies are optional native extras). It
is fetched once into `$JMEM_E2E_CACHE` (default `~/.cache/journal-mem-e2e/`) and
unpacked next to it; `JMEM_E2E_QWEN_VERSION` picks another version. `command()` says
why when there is none.

Also here: the environment that points it at a fake Anthropic API on 127.0.0.1
(`--auth-type anthropic`, `ANTHROPIC_BASE_URL`), with nothing else sent out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

VERSION = os.environ.get("JMEM_E2E_QWEN_VERSION") or "0.24.4"
PACKAGE = "@qwen-code/qwen-code"
MODEL = "claude-sonnet-4-5"


def cache_dir() -> Path:
    return Path(os.environ.get("JMEM_E2E_CACHE") or
                Path.home() / ".cache" / "journal-mem-e2e")


def command() -> tuple[list[str] | None, str]:
    """`[node, …/cli-entry.js, --auth-type anthropic, …]` of the pinned version, fetching
    it when needed; else (None, why)."""
    node = shutil.which("node")
    if node is None:
        return None, "node is not installed: cannot run Qwen Code for the end-to-end test"
    folder = cache_dir()
    script = folder / f"qwen-code-{VERSION}" / "package" / "cli-entry.js"
    if not script.is_file():
        tarball = folder / f"qwen-code-qwen-code-{VERSION}.tgz"
        if not tarball.is_file():
            why = fetch(folder)
            if why:
                return None, why
        with tarfile.open(tarball) as tar:
            tar.extractall(folder / f"qwen-code-{VERSION}", filter="data")
    return [node, str(script), "--auth-type", "anthropic", "--model", MODEL, "--yolo"], ""


def fetch(folder: Path) -> str:
    """`npm pack` the pinned package into `folder`; "" on success, else why not."""
    npm = shutil.which("npm")
    spec = f"{PACKAGE}@{VERSION}"
    if npm is None:
        return "npm is not installed: cannot fetch Qwen Code for the end-to-end test"
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


def user_settings(mcp: dict[str, object]) -> str:
    """`~/.qwen/settings.json`: no telemetry, no usage statistics, no update checks, and
    the MCP servers given."""
    return json.dumps({"privacy": {"usageStatisticsEnabled": False},
                       "telemetry": {"enabled": False},
                       "general": {"enableAutoUpdate": False},
                       "mcpServers": mcp}, indent=2)


def environment(base_url: str, home: Path) -> dict[str, str]:
    return {"HOME": str(home), "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "fake-anthropic-key", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            "NO_COLOR": "1"}


if __name__ == "__main__":  # fetch and unpack before the tests
    found, reason = command()
    print(f"qwen code {VERSION}: {found[1]}" if found else f"qwen code: {reason}")
