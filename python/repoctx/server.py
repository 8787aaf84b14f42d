"""The MCP view: a stdio server generated from the command registry.

Built on the official SDK's low-level Server, which answers both the
initialize handshake (2024-11-05 … 2025-11-25) and the per-request protocol
(2026-07-28). Each tool runs its registry handler off the event loop and
returns the handler's JSON as text and as structured content.
"""

from __future__ import annotations

import logging
import shlex
import sys
from collections.abc import Iterable

import anyio
import msgspec
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from repoctx import __version__
from repoctx.commands import Command, Resource, ResourceError, all_commands, all_resources
from repoctx.workspace import Workspace

log = logging.getLogger("repoctx")

INSTRUCTIONS = (
    "repoctx serves this repository's context. Start with list_contexts to see which "
    "directories have a .context.yaml and whether each is fresh; check_freshness before "
    "relying on one; query_context to read it."
)


class UnknownTools(ValueError):
    pass


def enabled_commands(ws: Workspace, tools: Iterable[str] | None) -> list[Command]:
    """The closed set of tools this server lists and accepts."""
    commands = [c for c in all_commands() if c.tool and not (ws.read_only and c.writes)]
    if tools is None:
        return commands
    wanted = set(tools)
    known = {c.tool for c in all_commands() if c.tool} | {a for c in all_commands() for a in c.aliases}
    unknown = sorted(wanted - known)
    if unknown:
        raise UnknownTools(f"unknown tool names in --tools: {', '.join(unknown)}")
    return [c for c in commands if c.tool in wanted or wanted & set(c.aliases)]


def _tool(cmd: Command) -> types.Tool:
    return types.Tool(
        name=cmd.tool,
        description=f"{cmd.summary} {cmd.description}",
        input_schema=cmd.input_schema,
        output_schema=cmd.output_schema,
        annotations=types.ToolAnnotations(
            read_only_hint=not cmd.writes,
            destructive_hint=False,
            idempotent_hint=not cmd.writes,
            open_world_hint=False,
        ),
    )


def call(ws: Workspace, cmd: Command, arguments: dict | None) -> types.CallToolResult:
    """Run one tool call synchronously: the same handler and encoding as the CLI."""
    try:
        params = cmd.parse(arguments)
    except msgspec.ValidationError as exc:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"Invalid arguments for {cmd.tool}: {exc}")],
            is_error=True,
        )
    result = cmd.handler(ws, params)
    text = cmd.encode(result)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=msgspec.json.decode(text),
        is_error=cmd.is_error(result),
    )


def build_server(ws: Workspace, tools: Iterable[str] | None = None) -> Server:
    commands = enabled_commands(ws, tools)
    listed = [_tool(c) for c in commands]
    by_name = {}
    for c in commands:
        by_name[c.tool] = c
        for alias in c.aliases:
            by_name[alias] = c

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        cmd = by_name.get(params.name)
        if cmd is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        return await anyio.to_thread.run_sync(call, ws, cmd, params.arguments)

    resources = all_resources()

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        def listing() -> list[types.Resource]:
            out = []
            for r in resources:
                if not r.is_template:
                    out.append(types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type))
                elif r.instances is not None:
                    for uri, name in r.instances(ws):
                        out.append(types.Resource(uri=uri, name=name, description=r.description, mime_type=r.mime_type))
            return out

        return types.ListResourcesResult(resources=await anyio.to_thread.run_sync(listing))

    async def list_templates(ctx, params) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(uri_template=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
                for r in resources
                if r.is_template
            ]
        )

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        found = match_resource(resources, uri)
        if found is None:
            raise MCPError(types.INVALID_REQUEST, f"Unknown resource: {uri}")
        resource, fields = found
        try:
            text = await anyio.to_thread.run_sync(resource.read, ws, fields)
        except ResourceError as exc:
            raise MCPError(exc.code, exc.message, exc.data) from None
        except Exception:
            log.exception("reading %s failed", uri)
            raise MCPError(types.INTERNAL_ERROR, "Failed to read resource") from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=resource.mime_type, text=text)]
        )

    return Server(
        "repoctx",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **(
            {
                "on_list_resources": list_resources,
                "on_list_resource_templates": list_templates,
                "on_read_resource": read_resource,
            }
            if resources
            else {}
        ),
    )


def match_resource(resources: list[Resource], uri: str) -> tuple[Resource, dict[str, str]] | None:
    """The resource a URI names, with its template fields and query parameters (percent-decoded)."""
    from urllib.parse import parse_qsl, unquote

    base, _, query = uri.partition("?")
    for r in resources:
        fields = _match_template(r.uri, base)
        if fields is not None:
            fields = {k: unquote(v) for k, v in fields.items()}
            for k, v in parse_qsl(query, keep_blank_values=True):
                fields.setdefault(k, v)
            return r, fields
    return None


def _match_template(template: str, uri: str) -> dict[str, str] | None:
    import re

    pattern = "".join(
        f"(?P<{part[1:-1]}>[^/?#]+)" if part.startswith("{") else re.escape(part)
        for part in re.split(r"(\{[a-zA-Z_][a-zA-Z0-9_]*\})", template)
    )
    m = re.fullmatch(pattern, uri)
    return m.groupdict() if m else None


async def _serve_stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        # The SDK drops a line that is not JSON-RPC without answering; answer it with
        # a parse error (id null, as JSON-RPC 2.0 says) and keep serving.
        inner_send, inner_recv = create_context_streams[SessionMessage | Exception](0)

        async def sift() -> None:
            async with inner_send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        log.warning("malformed message: %s", str(item).splitlines()[0])
                        error = types.JSONRPCError(
                            jsonrpc="2.0",
                            id=None,
                            error=types.ErrorData(code=types.PARSE_ERROR, message="Parse error: not a JSON-RPC message"),
                        )
                        await write_stream.send(SessionMessage(error))
                    else:
                        await inner_send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(sift)
            await server.run(inner_recv, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()


def serve(ws: Workspace, tools: list[str] | None = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repoctx: %(message)s")
    try:
        server = build_server(ws, tools)
    except UnknownTools as exc:
        print(f"repoctx: {exc}", file=sys.stderr)
        return 2
    print(
        f"repoctx {__version__}: serving {ws.root} over MCP on stdio"
        f"{' (read-only)' if ws.read_only else ''}. Register it with Claude Code: "
        f"claude mcp add repoctx -- repoctx serve --root {shlex.quote(ws.root)}",
        file=sys.stderr,
        flush=True,
    )
    anyio.run(_serve_stdio, server)
    return 0
