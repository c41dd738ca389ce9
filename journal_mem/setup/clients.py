"""`jmem init` for the clients other than Claude Code: the `AGENTS.md` block every agent
reads, Codex's, Gemini CLI's and Qwen Code's hook files, and how to register `jmem mcp`.

The `AGENTS.md` block sits between two marker comments and is replaced in place
(`loop.pack.replace_block`): every other byte of the file stays, and a second `init`
writes nothing. Codex, Gemini CLI and Qwen Code get the hooks of `setup/client_files.py`; Codex
then needs its user's trust, which jmem prints and never grants (`jmem codex-trust`).
"""

from __future__ import annotations

import os

from journal_mem.fsutil import replace_atomic
from journal_mem.loop.pack import replace_block
from journal_mem.resources import fill
from journal_mem.setup import client_files

AGENTS_MD = "AGENTS.md"
BEGIN = "<!-- journal-mem begin (written by `jmem init`; edit outside these markers) -->"
END = "<!-- journal-mem end -->"
MCP_NAME = "journal-mem"
# How each client registers the MCP server (the command lines checked with each CLI's
# --help where it could run: docs/clients.md).
MCP_REGISTER = {
    "Claude Code": f"claude mcp add {MCP_NAME} -- jmem mcp",
    "Codex CLI": f"codex mcp add {MCP_NAME} -- jmem mcp",
    "Gemini CLI": f"gemini mcp add {MCP_NAME} jmem mcp",
    "Cursor": f'.cursor/mcp.json: {{"mcpServers": {{"{MCP_NAME}": {{"command": "jmem", '
              f'"args": ["mcp"]}}}}}}',
    "Copilot CLI": f'~/.copilot/mcp-config.json: {{"mcpServers": {{"{MCP_NAME}": '
                   f'{{"type": "local", "command": "jmem", "args": ["mcp"], "tools": ["*"]}}}}}}',
    "Qwen Code": f'.qwen/settings.json: {{"mcpServers": {{"{MCP_NAME}": '
                 f'{{"command": "jmem", "args": ["mcp"]}}}}}}',
}


def agents_block(memory_root: str, default_agent: str) -> str:
    """The marked block `init` keeps in `AGENTS.md`."""
    body = fill("agents-md.md", memory_root=memory_root, default_agent=default_agent)
    return f"{BEGIN}\n{body.rstrip()}\n{END}"


def write_agents_md(root: str, memory_root: str,
                    default_agent: str) -> tuple[str | None, str | None]:
    """Put the block into `<root>/AGENTS.md` (created when missing): (what was done, or
    None when it was already there as it should be; a note when it was left alone).

    A symlinked `AGENTS.md` (often to CLAUDE.md) is written through to its target when
    that is inside the checkout, so the link stays; a begin marker without its end
    marker is left for the user to mend (replacing up to a later end marker could
    swallow their text).
    """
    link = os.path.join(root, AGENTS_MD)
    path = os.path.realpath(link)
    if os.path.islink(link) and os.path.commonpath([path, os.path.realpath(root)]) \
            != os.path.realpath(root):
        return None, (f"{link} links outside the checkout ({path}): journal-mem's block "
                      "not written")
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            before: str | None = fh.read()
    except FileNotFoundError:
        before = None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{link}: cannot read it ({exc}): journal-mem's block not written"
    text = before or ""
    start = text.find(BEGIN)
    if start >= 0 and text.find(END, start) < 0:
        return None, (f"{link} has journal-mem's begin marker but no end marker after it: "
                      f"add `{END}` where the block ends (or delete the begin line) and run "
                      "`jmem init` again")
    after = replace_block(text, agents_block(memory_root, default_agent), BEGIN, END)
    if after == before:
        return None, None
    replace_atomic(path, after, durable=True)
    shown = os.path.relpath(path, root)
    if before is None:
        return f"created {shown} (how any agent finds its memory and records a lesson)", None
    return f"wrote journal-mem's block in {shown} (the rest of the file is unchanged)", None


def init_client(root: str, client: str) -> tuple[list[str], list[str]]:
    """Merge the client's hooks into its project file: (done, notes)."""
    spec = client_files.CLIENT_HOOKS[client]
    done = client_files.merge_hooks(root, spec)
    if not done:
        return [], []
    if client == "codex":
        return done, [
            "Codex runs a project's hooks only once its user trusts them, and a repository "
            "cannot do that for them: each user reviews `jmem codex-trust` (the records for "
            "the main checkout) and appends it with `jmem codex-trust >> ~/.codex/config.toml`"
            ", once per clone (in a worktree too, Codex looks for the main checkout's "
            "records)"]
    if client == "qwen":
        return done, []  # Qwen Code 0.24.4 ran them in a fresh folder, headless, asking nothing
    return done, ["Gemini CLI runs project hooks only in a trusted folder, and warns about "
                  f"new ones: trust this folder in Gemini CLI to run {spec.file}'s hooks"]


def mcp_notes() -> list[str]:
    """How to register the MCP server in each client."""
    return ["any MCP client can reach this memory through `jmem mcp` (stdio, run in the "
            "checkout):\n" + "\n".join(f"{name}: {how}" for name, how in MCP_REGISTER.items())]
