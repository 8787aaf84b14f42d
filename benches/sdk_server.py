"""`python -m benches.sdk_server`: the floor of a server's start, the MCP SDK's low-level server
with one tool (`noop`) on stdio and nothing of repoctx. A restarted repoctx server's first answer
is measured beside this one's (benches/bench_tasks.py): the interpreter and the SDK's import
are the floor's, the rest is repoctx's."""

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

NOOP = types.Tool(name="noop", description="Does nothing.", input_schema={"type": "object"})


async def _list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[NOOP])


async def _call_tool(ctx, params) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="")])


async def _serve() -> None:
    server = Server("sdk-floor", on_list_tools=_list_tools, on_call_tool=_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
