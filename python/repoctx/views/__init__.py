"""The views: the command line, the MCP server over stdio, and the HTML report, all over the registry."""

# What registry/catalog.py loads of this package.
MODULES = {"commands": ("report",)}
CLI_WORDS = {"report": "report"}
