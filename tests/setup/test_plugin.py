"""The Claude Code plugin shipped in the package: its files, and its hook without jmem."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import base_env, jmem


def test_claude_plugin_prints_a_folder_with_manifest_hooks_and_agent(tmp_path: Path) -> None:
    proc = jmem(tmp_path, "claude-plugin")
    assert proc.returncode == 0 and "claude plugin install journal-mem@journal-mem" in proc.stderr
    folder = Path(proc.stdout.strip())
    assert json.loads((folder / ".claude-plugin" / "plugin.json").read_text())["name"] == \
        "journal-mem"
    market = json.loads((folder / ".claude-plugin" / "marketplace.json").read_text())
    assert market["plugins"][0]["source"] == "./"
    hooks = json.loads((folder / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "SubagentStart", "UserPromptSubmit", "PostToolUse",
                          "PostToolUseFailure", "PostToolBatch", "Stop", "SubagentStop"}
    for groups in hooks.values():
        assert "${CLAUDE_PLUGIN_ROOT}/bin/jmem-hook" in groups[0]["hooks"][0]["command"]
    assert "name: reviewer" in (folder / "agents" / "reviewer.md").read_text()


def test_plugin_hook_without_jmem_tells_the_user_and_exits_zero(tmp_path: Path) -> None:
    folder = Path(jmem(tmp_path, "claude-plugin").stdout.strip())
    env = base_env(PATH="/usr/bin:/bin", HOME=str(tmp_path), PYTHONPATH="")
    env.pop("JMEM_BIN", None)
    proc = subprocess.run(["sh", str(folder / "bin" / "jmem-hook"), "wake"], cwd=tmp_path,
                          env=env, input="{}", capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert "no jmem found" in json.loads(proc.stdout)["systemMessage"]
    assert "memory not loaded" in proc.stderr
