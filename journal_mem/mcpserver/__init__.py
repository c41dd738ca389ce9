"""`jmem mcp`: the team's memory for any MCP client (the official `mcp` SDK, stdio)."""
