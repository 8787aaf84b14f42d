"""repoctx: project context for coding agents, over MCP and the command line."""

__version__ = "0.1.0"
