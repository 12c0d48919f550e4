"""MCP: the same operations as REST, as tools for agent frameworks (streamable HTTP at /mcp
in the app, stdio through `hindsight mcp`)."""
