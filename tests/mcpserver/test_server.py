"""`jmem mcp` driven by the official SDK's own stdio client: the server is the real
program (`python -m journal_mem mcp`) started in a real repository."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from helpers import base_env, jmem
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

MEM = Path(".claude/agent-memory")


def session_calls(repo: Path, script: Any) -> Any:
    """Start the server in `repo`, open a client session and run `script(session)`."""
    env = base_env(JMEM_DEFAULT_AGENT="api")
    params = StdioServerParameters(command=sys.executable, args=["-m", "journal_mem", "mcp"],
                                   env=env, cwd=str(repo))

    async def main() -> Any:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return await script(session)
    return anyio.run(main)


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_the_tools_answer_through_the_sdk_client(repo: Path) -> None:
    (repo / MEM / "api" / "MEMORY.md").write_text(
        "# api\n- Deploys go through staging first [deploy-staging]\n")
    proc = jmem(repo, "write", "--agent", "api", "--topic", "testing", "--title",
                "Run the API tests with -p no:randomly", "--body", "They share a fixture.")
    assert proc.returncode == 0, proc.stderr

    async def script(session: ClientSession) -> dict[str, Any]:
        tools = await session.list_tools()
        templates = await session.list_resource_templates()
        out: dict[str, Any] = {
            "tools": sorted(t.name for t in tools.tools),
            "templates": [t.uri_template for t in templates.resource_templates],
            "wake": await session.call_tool("wake", {"agent": "api"}),
            "recall": await session.call_tool("recall", {"question": "API tests randomly"}),
            "write": await session.call_tool("write_lesson", {
                "agent": "api", "topic": "ops", "title": "Deploys skip staging now",
                "body": "Staging was retired.", "supersedes": ["deploy-staging"]}),
            "bad": await session.call_tool("write_lesson", {
                "agent": "api", "topic": "Not A Slug", "title": "x", "type": "guess"}),
            "status": await session.call_tool("status", {}),
            "memory": await session.read_resource("memory://api/MEMORY.md"),
        }
        out["wake2"] = await session.call_tool("wake", {})
        return out

    got = session_calls(repo, script)
    assert got["tools"] == ["recall", "status", "wake", "write_lesson"]
    assert got["templates"] == ["memory://{agent}/MEMORY.md"]
    wake = text(got["wake"])
    assert "[deploy-staging]" in wake and "Run the API tests with -p no:randomly" in wake
    hits = got["recall"].structured_content["result"]
    assert hits[0]["title"] == "Run the API tests with -p no:randomly"
    assert hits[0]["body"] == "They share a fixture."
    written = got["write"].structured_content
    assert not got["write"].is_error
    path = repo / MEM / "api" / "journal" / Path(written["path"]).name
    assert path.is_file() and 'supersedes: ["deploy-staging"]' in path.read_text()
    # the same refusal as `jmem write`, with the same message
    assert got["bad"].is_error
    cli = jmem(repo, "write", "--agent", "api", "--topic", "Not A Slug", "--title", "x",
               "--type", "guess", "--body", "")
    assert cli.returncode != 0
    assert "topic" in text(got["bad"]) and "type" in text(got["bad"])
    refusal = text(got["bad"]).removeprefix("Error executing tool write_lesson: ")
    assert refusal.splitlines() == [line.removeprefix("jmem: ")
                                    for line in cli.stderr.splitlines()]
    assert len(list((repo / MEM / "api" / "journal").glob("*.md"))) == 2  # nothing more
    status = got["status"].structured_content
    assert status["pending"]["api"] == 2
    assert got["memory"].contents[0].text.startswith("# api\n")
    # the correction written through MCP is in the next pack
    assert "Deploys skip staging now" in text(got["wake2"])


def test_a_missing_memory_file_is_a_resource_error(repo: Path) -> None:
    async def script(session: ClientSession) -> str:
        try:
            await session.read_resource("memory://web/MEMORY.md")
        except Exception as exc:  # the SDK raises the server's error
            return str(exc)
        return ""

    error = session_calls(repo, script)
    assert "no MEMORY.md yet for 'web'" in error, error
    assert json.dumps(error)
