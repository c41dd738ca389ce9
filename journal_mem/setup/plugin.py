"""`jmem claude-plugin`: where the Claude Code plugin shipped in the package is.

The plugin (`journal_mem/resources/claude-plugin/`: `.claude-plugin/plugin.json`
and a one-plugin `marketplace.json`, `hooks/hooks.json` running
`${CLAUDE_PLUGIN_ROOT}/bin/jmem-hook`, a reviewer agent, the memory-curator agent
and its `consolidate` command) is package data, so
the installed package holds it; Claude Code copies it into its own plugin
cache when it is installed (docs/DESIGN.md, "Claude Code hooks").
"""

from __future__ import annotations

import os
from importlib.resources import files

PLUGIN = "claude-plugin"


def folder() -> str:
    """The plugin's folder inside the installed package."""

    return os.path.abspath(str(files("journal_mem.resources").joinpath(PLUGIN)))


def install_lines(path: str) -> list[str]:
    """How to install the plugin at `path` (printed on stderr by the command)."""
    return [
        "install it for every project on this machine:",
        f"  claude plugin marketplace add {path}",
        "  claude plugin install journal-mem@journal-mem",
        f"or for one session: claude --plugin-dir {path}",
    ]
