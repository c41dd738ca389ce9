"""The real Codex CLI for the end-to-end test: a pinned npm package, cached.

`npm pack @openai/codex@VERSION-linux-x64` (the per-platform build published
under a version suffix of `@openai/codex` itself) gives a tarball whose
`package/vendor/x86_64-unknown-linux-musl/bin/codex` is the native, static CLI
(~170 MB packed). It is fetched once into `$JMEM_E2E_CACHE` (default
`~/.cache/journal-mem-e2e/`) and unpacked next to it; `JMEM_E2E_CODEX_VERSION`
picks another version. `binary()` says why when there is none: the test is then
skipped with that reason.

Also here: the `config.toml` that points Codex at a fake API on 127.0.0.1, and
the trust record Codex wants before it runs a project's hooks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

VERSION = os.environ.get("JMEM_E2E_CODEX_VERSION") or "0.171.0"
PACKAGE = "@openai/codex"
TRIPLE = "x86_64-unknown-linux-musl"


def cache_dir() -> Path:
    return Path(os.environ.get("JMEM_E2E_CACHE") or
                Path.home() / ".cache" / "journal-mem-e2e")


def binary() -> tuple[Path | None, str]:
    """The unpacked `codex` of the pinned version, fetching it when needed; else (None, why)."""
    folder = cache_dir()
    unpacked = folder / f"codex-{VERSION}"
    exe = unpacked / "package" / "vendor" / TRIPLE / "bin" / "codex"
    if exe.is_file():
        return exe, ""
    tarball = folder / f"openai-codex-{VERSION}-linux-x64.tgz"
    if not tarball.is_file():
        why = fetch(folder)
        if why:
            return None, why
    with tarfile.open(tarball) as tar:
        tar.extractall(unpacked, filter="data")
    if not exe.is_file():
        return None, f"{tarball.name} has no {exe.relative_to(unpacked)}"
    exe.chmod(0o755)
    return exe, ""


def fetch(folder: Path) -> str:
    """`npm pack` the pinned package into `folder`; "" on success, else why not."""
    npm = shutil.which("npm")
    spec = f"{PACKAGE}@{VERSION}-linux-x64"
    if npm is None:
        return "npm is not installed: cannot fetch Codex CLI for the end-to-end test"
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


def user_config(base_url: str, project: Path, wire_api: str = "responses",
                trusted_hooks: dict[str, str] | None = None) -> str:
    """`$CODEX_HOME/config.toml`: the model from a fake provider at `base_url` (key from
    `FAKE_OPENAI_KEY`), `project` trusted (else its `.codex/` layer is loaded disabled),
    plugins off (their start-up sync goes to github.com), and `trusted_hooks`
    (state key -> hash, see `hook_trust`) recorded as reviewed."""
    lines = [
        'model = "fake-model"',
        'model_provider = "fake"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        "[features]",
        "plugins = false",
        "[model_providers.fake]",
        'name = "fake"',
        f"base_url = {json.dumps(base_url)}",
        'env_key = "FAKE_OPENAI_KEY"',
        f"wire_api = {json.dumps(wire_api)}",
        "request_max_retries = 0",
        "stream_max_retries = 0",
        f"[projects.{json.dumps(str(project))}]",
        'trust_level = "trusted"',
    ]
    for key, digest in (trusted_hooks or {}).items():
        lines += [f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(digest)}"]
    return "\n".join(lines) + "\n"


# events whose matcher Codex drops before hashing, and those whose timeout it clamps to 1..3 s
NO_MATCHER = {"user_prompt_submit", "stop", "interrupt"}
SHORT_TIMEOUT = {"session_end", "interrupt"}


def snake(event: str) -> str:
    return "".join(("_" + c.lower()) if c.isupper() and i else c.lower()
                   for i, c in enumerate(event))


def hook_trust(hooks_json: Path, hooks: dict[str, list[dict[str, object]]]) -> dict[str, str]:
    """The `[hooks.state."<key>"] trusted_hash` entries that mark every command hook of
    `hooks_json` (holding `hooks`, its "hooks" table) trusted, as Codex writes them when a
    user reviews the hooks: key `<path>:<event_snake>:<group>:<handler>`, hash sha256 of
    the canonical JSON of {event_name, matcher?, hooks: [the normalized handler]}."""
    out: dict[str, str] = {}
    for event, groups in hooks.items():
        label = snake(event)
        for g, group in enumerate(groups):
            matcher = None if label in NO_MATCHER else group.get("matcher")
            for h, handler in enumerate(group.get("hooks", [])):  # type: ignore[arg-type]
                assert isinstance(handler, dict) and handler.get("type") == "command"
                timeout = handler.get("timeout")
                timeout = min(max(int(timeout or 1), 1), 3) if label in SHORT_TIMEOUT \
                    else max(int(timeout or 600), 1)
                normal: dict[str, object] = {"type": "command", "command": handler["command"],
                                             "timeout": timeout,
                                             "async": bool(handler.get("async", False))}
                if handler.get("statusMessage"):
                    normal["statusMessage"] = handler["statusMessage"]
                identity: dict[str, object] = {"event_name": label, "hooks": [normal]}
                if matcher is not None:
                    identity["matcher"] = matcher
                canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"),
                                       ensure_ascii=False)
                digest = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
                out[f"{hooks_json}:{label}:{g}:{h}"] = digest
    return out


if __name__ == "__main__":  # fetch and unpack before the tests
    found, reason = binary()
    print(f"codex {VERSION}: {found}" if found else f"codex: {reason}")
