"""`jmem mcp`: an MCP server on stdio that gives any MCP client the memory a hook gives
Claude Code, Codex and Gemini CLI: the wake-up pack, recall, writing a lesson, status,
and each agent's `MEMORY.md` as a resource.

Every tool is the command of the same name underneath (`wake`, `recall`, `write`,
`status`): the same pack, the same ranking, the same validation and refusals (a
refused lesson comes back as a tool error with the command's message and hint), so
an agent learns nothing from MCP that the CLI would tell it otherwise. The server
works in the checkout it is started in (`jmem -C PATH mcp` for another); each call
opens the repository afresh, so a distill or a lesson written elsewhere is seen at
the next call. The SDK is imported here only: no hook or git hook loads it.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from journal_mem.errors import JournalMemError
from journal_mem.lessons import write as lessons
from journal_mem.names import is_name
from journal_mem.recall import query as recall_query
from journal_mem.repo import open_context
from journal_mem.setup import status as status_report
from journal_mem.wake import pack as wake_pack

NAME = "journal-mem"
INSTRUCTIONS = (
    "The team's memory of this repository. Call `wake` first (your agent's pack: what the "
    "team learned, lessons not yet distilled, corrections); `recall` answers a question "
    "from every live fact. When you finish a task, record what you LEARNED (not what you "
    "did) with `write_lesson`; to correct a fact, pass its key (in brackets) in "
    "`supersedes`.")


def _refused(exc: JournalMemError) -> ToolError:
    return ToolError("\n".join(exc.lines()))


def build(cwd: str) -> MCPServer:
    """The server, working in the checkout at `cwd`."""
    server = MCPServer(NAME, instructions=INSTRUCTIONS)

    @server.tool()
    def wake(agent: str | None = None, query: str | None = None,
             max_chars: int = wake_pack.DEFAULT_MAX_CHARS) -> str:
        """The agent's wake-up pack (default agent when none is named): its MEMORY.md, the
        lessons written since the last distill, and the keys corrected since; with
        `query`, also the live facts that best answer it."""
        try:
            return wake_pack.for_command(cwd, agent, max_chars=max(200, max_chars),
                                         query=query).text
        except JournalMemError as exc:
            raise _refused(exc) from exc

    @server.tool()
    def recall(question: str, agent: str | None = None, limit: int = 5) -> list[dict[str, Any]]:
        """Ranked live facts for a question (retracted, superseded and expired facts never
        come back), each with its key, agents, topic, date and journal entry."""
        try:
            hits = recall_query.recall(open_context(cwd), question, agent=agent,
                                       limit=min(max(limit, 1), 100))
        except JournalMemError as exc:
            raise _refused(exc) from exc
        return [dict(hit.as_json(), body=hit.body) for hit in hits]

    @server.tool()
    def write_lesson(topic: str, title: str, body: str = "", agent: str | None = None,
                     type: str | None = None, importance: str | None = None,
                     confidence: str | None = None, key: str | None = None,
                     supersedes: list[str] | None = None, retracts: list[str] | None = None,
                     applies_to: list[str] | None = None, valid_until: str | None = None,
                     tags: list[str] | None = None, refs: list[str] | None = None,
                     source: str | None = None, outbox: bool = False) -> dict[str, Any]:
        """Record one lesson (what was learned, not what was done) in the main checkout's
        journal, validated exactly as `jmem write` does; its path and key, and the live
        facts it probably corrects (say so with `supersedes`)."""
        fields: dict[str, Any] = {
            "type": type, "confidence": confidence, "importance": importance, "key": key,
            "supersedes": list(supersedes or []), "retracts": list(retracts or []),
            "applies_to": list(applies_to or []), "valid_until": valid_until,
            "tags": list(tags or []), "refs": list(refs or []), "source": source,
        }
        try:
            ctx = open_context(cwd)
            written, found = lessons.write_lesson(ctx, agent=agent, topic=topic, title=title,
                                                  body=body, fields=fields, outbox=outbox)
        except JournalMemError as exc:
            raise _refused(exc) from exc
        return {"path": written.path, "key": written.key, "outbox": written.outbox,
                "note": written.note, "related": [r.as_json() for r in found],
                "unknown_keys": sorted(written.unknown),
                "advice": [*lessons.describe_unknown(written), *lessons.describe_related(found)]}

    @server.tool()
    def status() -> dict[str, Any]:
        """What `jmem status --json` reports: pending lessons per agent, outbox, last
        distill, lock, budgets, hooks installed."""
        try:
            return status_report.collect(cwd)
        except JournalMemError as exc:
            raise _refused(exc) from exc

    @server.resource("memory://{agent}/MEMORY.md", mime_type="text/markdown",
                     description="An agent's distilled MEMORY.md in the main checkout")
    def memory_md(agent: str) -> str:
        if not is_name(agent):
            raise ResourceError(f"{agent!r} is not an agent name")
        ctx = open_context(cwd)
        try:
            with open(ctx.layout.memory_md(agent), encoding="utf-8") as fh:
                return fh.read()
        except FileNotFoundError as exc:
            raise ResourceError(f"{ctx.layout.memory_md(agent)}: no MEMORY.md yet for "
                                f"{agent!r} (written by the first distill)") from exc

    return server


def serve(cwd: str) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    build(cwd).run("stdio")
