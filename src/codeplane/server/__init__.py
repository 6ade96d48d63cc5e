"""The server: one Starlette app with the MCP endpoint, REST routes, and thin tool adapters."""
