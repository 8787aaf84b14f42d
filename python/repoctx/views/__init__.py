"""The views: the command line, the MCP server over stdio, and the HTML report, all over the registry."""
