"""Transports over the one ContextService facade: HTTP (and MCP)."""
