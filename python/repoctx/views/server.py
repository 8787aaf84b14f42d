"""The MCP view: a stdio server generated from the command registry.

Built on the official SDK's low-level Server, which answers both the
initialize handshake (2024-11-05 … 2025-11-25) and the per-request protocol
(2026-07-28). Each tool runs its registry handler off the event loop and
returns the handler's JSON as text and as structured content (as text alone for
a command marked unstructured: see Command.structured).
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
import threading
import time
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
import msgspec
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from repoctx import __version__
from repoctx.base import launcher
from repoctx.base.command import Command, Resource, ResourceError
from repoctx.base.failures import failures
from repoctx.base.results import Envelope, admits_envelope, failure, internal_failure
from repoctx.base.workspace import Workspace, settle
from repoctx.registry.allowlist import AllowlistError
from repoctx.registry.catalog import all_prompts, connection_observers, listed, select
from repoctx.views import warm
from repoctx.views.wire import MAX_MESSAGE_BYTES, CappedLines, claim_stdin, lenient_tool_call, request_id

log = logging.getLogger("repoctx")

# Where an agent starts, by tool, in the order it is told: only the listed ones are named.
FIRST_STEPS = (
    ("list_contexts", "{} to see which directories have a .context.yaml and whether each is fresh"),
    ("check_freshness", "{} before relying on one"),
    ("query_context", "{} to read it"),
    ("task_context", "{} for the files and notes that matter to a task"),
    ("mcp_search", "{} to find the project's specs, decisions and norms"),
)


def instructions(listing) -> str:
    """What the server tells the agent at the handshake, naming only tools it lists then."""
    names = {c.tool: c.listed_name(listing.names) for c in listing.commands}
    steps = [step.format(names[tool]) for tool, step in FIRST_STEPS if tool in names]
    start = f" Start with {'; '.join(steps)}." if steps else " tools/list says what it answers."
    return "repoctx serves this repository's context." + start


# structuredContent and outputSchema exist from this protocol on: a client of an older one
# gets content and isError only (and one copy of a large result, not two).
STRUCTURED_SINCE = "2025-06-18"
# How often a server that lists only the surfaces with data looks for data that appeared.
FOLLOW_SECONDS = 1.0


def _structured_era(protocol_version: str) -> bool:
    return protocol_version >= STRUCTURED_SINCE  # the versions are dates: they order as strings


def _tool(cmd: Command, names: str, structured_era: bool) -> types.Tool:
    return types.Tool(
        name=cmd.listed_name(names),
        description=f"{cmd.summary} {cmd.description}",
        input_schema=cmd.input_schema,
        output_schema=cmd.output_schema if cmd.mcp.structured and structured_era else None,
        annotations=types.ToolAnnotations(
            read_only_hint=not (cmd.writes or cmd.records),
            # Writes add or merge; a recorded run only pushes out runs beyond keep_runs, as configured.
            destructive_hint=False,
            idempotent_hint=not (cmd.writes or cmd.records),
            open_world_hint=False,
        ),
    )


def _structured_envelope(cmd: Command) -> bool:
    return cmd.mcp.structured and admits_envelope(cmd)


def _settled(read):
    """`read(ws, …)` once a multi-file write a killed process left is finished (workspace.settle)."""

    def run(ws: Workspace, *args):
        settle(ws.root)
        return read(ws, *args)

    return run


def _unknown_arguments(cmd: Command, unknown: list[str]) -> list[str]:
    takes = ", ".join(f.encode_name for f in msgspec.structs.fields(cmd.params)) or "none"
    # A name is shown with any lone surrogate escaped: the reply must stay valid UTF-8.
    shown = (name.encode("utf-8", "backslashreplace").decode() for name in unknown)
    return [f"Unknown argument `{name}` ignored ({cmd.tool} takes: {takes})" for name in shown]


def _with_warnings(result, warnings: list[str]):
    """The result with `warnings` named, when its type has a list of them (a copy: a handler
    may have answered from its cache)."""
    if not warnings or not isinstance(result, msgspec.Struct):
        return result
    field = next((f for f in msgspec.structs.fields(result) if f.name == "warnings"), None)
    if field is None or "list[str]" not in str(field.type):  # mcp_check's `warnings` counts findings
        return result
    return msgspec.structs.replace(result, warnings=warnings)


# Parameters that say which object a command answers about (a proposal's or a run's id).
SELECTING = ("id", "target")


def _fixed_argument(cmd: Command, unknown: list[str]) -> str | None:
    """An argument naming the object, which a fixed form fixes (`id` to
    ctxt_proposals_validate_latest, which always answers about the latest): ignored, the answer
    would be about another object than the one asked for, so it is refused."""
    fixed = [n for n in unknown if n in SELECTING and n in getattr(cmd.handler, "fixed", {})]
    if not fixed:
        return None
    from repoctx.registry.catalog import by_tool_name

    other = f"{cmd.tool}_by_id"
    instead = f"; {other} takes an id" if other in by_tool_name() else ""
    return f"{cmd.tool} does not take `{fixed[0]}`: it always answers about the latest{instead}"


def call(ws: Workspace, cmd: Command, arguments: dict | None) -> types.CallToolResult:
    """Run one tool call synchronously: the same handler and encoding as the CLI. Unknown
    arguments are accepted, as the contracts need, and named in the result's warnings."""
    unknown = cmd.unknown(arguments)
    refused = _fixed_argument(cmd, unknown)
    if refused is not None and _structured_envelope(cmd):
        text = cmd.encode(failure(Envelope, cmd.name, "invalid_argument", refused))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=msgspec.json.decode(text), is_error=True)
    try:
        params = cmd.parse(arguments)
    except msgspec.ValidationError as exc:
        if cmd.on_invalid is None:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Invalid arguments for {cmd.tool}: {exc}")],
                is_error=True,
            )
        params = None
    try:
        settle(ws.root)
        result = cmd.handler(ws, params) if params is not None else cmd.on_invalid(arguments)
    except failures() as exc:
        # Left to the SDK, the exception's text (absolute paths, internals) would reach the
        # client; it gets the structured failure the CLI prints with --json, stderr the traceback.
        log.exception("tool %s failed", cmd.tool)
        failed = internal_failure(cmd.name, exc)
        if not _structured_envelope(cmd):  # a contract with no place for the envelope: its message, as text
            return types.CallToolResult(content=[types.TextContent(type="text", text=failed.error.message)],
                                        is_error=True)
        text = cmd.encode(failed)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=msgspec.json.decode(text), is_error=True)
    result = _with_warnings(result, _unknown_arguments(cmd, unknown))
    global _last_encoded
    last = _last_encoded
    if last is not None and last[0] is result:  # a handler that answered from its cache
        text, structured = last[1], last[2]
    else:
        text = cmd.encode(result)
        structured = msgspec.json.decode(text) if cmd.mcp.structured else None
        _last_encoded = (result, text, structured)
    if cmd.mcp.text:  # the contract's plain text: its warnings after it, where an agent reads them
        warned = getattr(result, "warnings", None)
        text = cmd.mcp.text(result) + "".join(f"\nWarning: {w}" for w in (warned if isinstance(warned, list) else ()))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=cmd.is_error(result),
    )


def _noop(arguments: dict | None, replies: dict[str, types.CallToolResult]) -> types.CallToolResult:
    """The SDK's floor for benchmarks: a call that runs like every tool but does nothing.
    With {"replay": TOOL} it returns TOOL's last reply again, computing nothing: the floor
    for a reply of that size (what the transport and the client cost for those bytes)."""
    replayed = replies.get((arguments or {}).get("replay", ""))
    if replayed is not None:
        return replayed
    return types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content={})


# The last result encoded, so a result a handler served from its cache is not encoded again.
_last_encoded: tuple | None = None


def _observe(observers: list, event: str, *args) -> None:
    """Tell each connection observer (commands.connection_observers) about an event; an
    observer that fails is logged, never felt by the client."""
    for observer in observers:
        try:
            getattr(observer, event)(*args)
        except failures():
            log.exception("connection observer failed on %s", event)


class _Shown:
    """What the server lists now. Listing only the surfaces with data, it looks again every
    FOLLOW_SECONDS and at every listing, and tells the client what changed: on the handshake
    protocols by a notification on the connection, on 2026-07-28 on its subscriptions/listen
    streams."""

    def __init__(self, ws: Workspace, selection) -> None:
        self.ws, self.selection = ws, selection
        self.listing = listed(ws)
        self.prompts = all_prompts()
        self.bus = InMemorySubscriptionBus()
        self.session = None  # the connection's, from its first request
        self._tools: dict[tuple, list[types.Tool]] = {}

    def tools(self, structured_era: bool) -> list[types.Tool]:
        key = (self.listing.commands, structured_era)
        if key not in self._tools:
            self._tools = {key: [_tool(c, self.listing.names, structured_era) for c in self.listing.commands]}
        return self._tools[key]

    def listed_prompts(self, listing=None) -> list:
        surfaces = (listing or self.listing).surfaces
        return [p for p in self.prompts if p.surface in surfaces]

    async def current(self, ctx) -> None:
        """Look again before a listing, so data made a moment ago is in it."""
        self.session = ctx.session
        if self.selection.by_data:
            await self._look()

    async def follow(self) -> None:
        while True:
            await anyio.sleep(FOLLOW_SECONDS)
            await self._look()

    async def _look(self) -> None:
        new = await anyio.to_thread.run_sync(listed, self.ws)
        old, self.listing = self.listing, new
        events = []
        if new.commands != old.commands:
            events.append((ToolsListChanged(), "send_tool_list_changed"))
        if new.resources != old.resources:
            events.append((ResourcesListChanged(), "send_resource_list_changed"))
        if self.listed_prompts(new) != self.listed_prompts(old):
            events.append((PromptsListChanged(), "send_prompt_list_changed"))
        for event, notify in events:
            await self.bus.publish(event)
            if self.session is not None:
                try:
                    await getattr(self.session, notify)()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # the client is gone


def _lifespan(observers: list, shown: _Shown):
    """One stdio run is one client connection: observers hear of its start and its end, and
    a server listing the surfaces with data follows them while it runs."""

    @asynccontextmanager
    async def lifespan(_server):
        await anyio.to_thread.run_sync(_observe, observers, "connected")
        try:
            async with anyio.create_task_group() as tg:
                if shown.selection.by_data:
                    tg.start_soon(shown.follow)
                yield {}
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_observe, observers, "disconnected")

    return lifespan


def build_server(ws: Workspace) -> tuple[Server, bool]:  # noqa: C901 - the MCP handlers are closures over one state
    """The server, and whether its listings follow the data (it then says when they change)."""
    selection = select(ws)
    shown = _Shown(ws, selection)
    observers = connection_observers(ws)
    by_name = {}
    for c in selection.commands:  # every accepted tool, listed or not, by each of its names
        by_name[c.tool] = c
        for alias in c.aliases:
            by_name[alias] = c

    noop = os.environ.get("REPOCTX_BENCH_NOOP") == "1"
    replies: dict[str, types.CallToolResult] = {}  # each tool's last reply, for noop's replay
    noop_tool = types.Tool(name="noop", description="Does nothing, or replays a tool's last reply (benchmark floors).",
                           input_schema={"type": "object"})  # no output schema: it may replay a text-only reply

    async def list_tools(ctx, params) -> types.ListToolsResult:
        await shown.current(ctx)
        listed = shown.tools(_structured_era(ctx.protocol_version))
        return types.ListToolsResult(tools=[*listed, noop_tool] if noop else listed)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        shown.session = ctx.session
        cmd = by_name.get(params.name)
        if cmd is None:
            if noop and params.name == "noop":
                return await anyio.to_thread.run_sync(_noop, params.arguments, replies)
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")

        def observed_call() -> types.CallToolResult:
            result = None
            try:
                result = call(ws, cmd, params.arguments)
                return result
            finally:
                structured = result.structured_content if result is not None else None
                _observe(observers, "tool_called", cmd.tool, params.arguments, structured)

        result = await anyio.to_thread.run_sync(observed_call)
        if result.structured_content is not None and not _structured_era(ctx.protocol_version):
            result = types.CallToolResult(content=result.content, is_error=result.is_error)
        if noop:
            replies[cmd.tool] = result
        return result

    resources = list(selection.resources)  # readable; listed: those of shown.listing

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        await shown.current(ctx)

        def listing() -> list[types.Resource]:
            settle(ws.root)
            out = []
            for r in shown.listing.resources:
                if not r.is_template:
                    out.append(types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type))
                elif r.instances is not None:
                    for uri, name in r.instances(ws):
                        out.append(types.Resource(uri=uri, name=name, description=r.description, mime_type=r.mime_type))
            return out

        return types.ListResourcesResult(resources=await anyio.to_thread.run_sync(listing))

    async def list_templates(ctx, params) -> types.ListResourceTemplatesResult:
        await shown.current(ctx)
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(uri_template=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
                for r in shown.listing.resources
                if r.is_template
            ]
        )

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        shown.session = ctx.session
        uri = str(params.uri)
        found = match_resource(resources, uri)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {uri}")
        resource, fields = found
        try:
            text = await anyio.to_thread.run_sync(_settled(resource.read), ws, fields)
        except ResourceError as exc:
            raise MCPError(exc.rpc_code, exc.message, exc.data) from None
        except failures():
            log.exception("reading %s failed", uri)
            raise MCPError(types.INTERNAL_ERROR, "Failed to read resource") from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=resource.mime_type, text=text)]
        )

    prompts = {p.name: p for p in shown.prompts if p.surface in selection.surfaces}  # callable

    async def list_prompts(ctx, params) -> types.ListPromptsResult:
        await shown.current(ctx)
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=p.name, description=p.description, arguments=[
                types.PromptArgument(name=n, description=d, required=r) for n, d, r in p.arguments])
            for p in shown.listed_prompts()
        ])

    async def get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        shown.session = ctx.session
        prompt = prompts.get(params.name)
        if prompt is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        args = params.arguments or {}
        missing = [n for n, _, required in prompt.arguments if required and not args.get(n)]
        if missing:
            raise MCPError(types.INVALID_PARAMS, f"Missing required arguments: {', '.join(missing)}")
        try:
            text = await anyio.to_thread.run_sync(_settled(prompt.render), ws, args)
        except failures():
            log.exception("rendering prompt %s failed", params.name)
            raise MCPError(types.INTERNAL_ERROR, "Failed to render prompt") from None
        return types.GetPromptResult(description=prompt.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])

    server = Server(
        "repoctx",
        version=__version__,
        instructions=instructions(shown.listing),
        lifespan=_lifespan(observers, shown),
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
        **({"on_list_prompts": list_prompts, "on_get_prompt": get_prompt} if prompts else {}),
        # A listing that follows the data says when it changes (2026-07-28: on listen streams).
        **({"on_subscriptions_listen": ListenHandler(shown.bus)} if selection.by_data else {}),
    )
    return server, selection.by_data


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


async def _serve_stdio(server: Server, changes_listed: bool) -> None:
    lines = CappedLines(claim_stdin())
    async with stdio_server(stdin=lines) as (read_stream, write_stream):
        # The SDK drops a line it cannot take without answering; answer it and keep serving:
        # a parse error when the line is not JSON, an invalid request when it is JSON but not
        # a message the SDK reads (params not an object, nested past its parser's depth, a lone
        # surrogate escape). Either carries the line's id where it can be read, else null, so
        # the client is not left waiting; a request whose id is not an integer or a string is
        # invalid, answered with id null. A line over the size cap was never read whole
        # (wire.py): it gets an invalid-request error with the id at its head.
        inner_send, inner_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def answer(code: int, message: str, id_: int | str | None) -> None:
            error = types.JSONRPCError(jsonrpc="2.0", id=id_, error=types.ErrorData(code=code, message=message))
            await write_stream.send(SessionMessage(error))

        async def sift() -> None:
            async with inner_send, _exit_when_done():
                async for item in read_stream:
                    line = lines.taken()
                    if isinstance(item, Exception) and (call := lenient_tool_call(line)) is not None:
                        await inner_send.send(SessionMessage(call))
                    elif isinstance(item, Exception):
                        log.warning("malformed message: %s", str(item).splitlines()[0])
                        head = request_id(line)
                        if head.is_object:
                            await answer(types.INVALID_REQUEST, "Invalid request: not a JSON-RPC message this server reads", head.id)
                        else:
                            await answer(types.PARSE_ERROR, "Parse error: not a JSON-RPC message", head.id)
                    elif getattr(item.message, "method", None) is not None and _invalid_id(line):
                        # (the SDK would take it as a notification, or coerce its id: 1.0, true)
                        await answer(types.INVALID_REQUEST, "Invalid request: an id must be an integer or a string", None)
                    elif (dropped := lines.dropped(item.message)) is not None:
                        size, id_ = dropped
                        log.warning("dropped a message of %d bytes (limit %d)", size, MAX_MESSAGE_BYTES)
                        await answer(types.INVALID_REQUEST,
                                     f"Message too large: {size} bytes, over the limit of {MAX_MESSAGE_BYTES}; not read", id_)
                    else:
                        await inner_send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(sift)
            changes = NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)
            await server.run(inner_recv, write_stream,
                             server.create_initialization_options(changes if changes_listed else None))
            tg.cancel_scope.cancel()


def _invalid_id(line: str) -> bool:
    """Whether the line has an `id` that is neither an integer nor a string (JSON-RPC 2.0 and
    MCP allow no other): such a request is answered as invalid, with id null."""
    head = request_id(line)
    return head.has_id and head.id is None


# How long a server whose client has gone may take to end its session and finish the calls
# under way: a call that is stuck (a lock a live process holds, a slow disk) cannot keep it.
DISCONNECT_GRACE_SECONDS = 5.0


@asynccontextmanager
async def _exit_when_done():
    """Once the client's wire has ended, the process ends within DISCONNECT_GRACE_SECONDS even
    when a call is stuck in a worker thread, which no cancellation reaches. Ending it there is
    safe: every write is atomic or journaled, so a write cut short is finished or rolled back
    by the next command."""
    try:
        yield
    finally:
        def leave() -> None:
            time.sleep(DISCONNECT_GRACE_SECONDS)
            log.warning("the client is gone and a call is still under way after %.0f s: exiting", DISCONNECT_GRACE_SECONDS)
            os._exit(0)

        threading.Thread(target=leave, name="repoctx-exit", daemon=True).start()


def serve(ws: Workspace, watch: bool = True) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repoctx: %(message)s")
    tools = warm.start(ws, watch)  # (the CLI started it before importing this module and the SDK)
    try:
        server, changes_listed = build_server(ws)
    except AllowlistError as exc:
        print(f"repoctx: {exc}", file=sys.stderr)
        return 2
    hooks = _relay(ws) if "task_context" in tools else None
    serve_line = shlex.join([*launcher.command(), "serve", "--root", ws.root])
    print(
        f"repoctx {__version__}: serving {ws.root} ({ws.root_reason}) over MCP on stdio"
        f"{' (read-only)' if ws.read_only else ''}. Register it with Claude Code: "
        f"claude mcp add repoctx -- {serve_line}",
        file=sys.stderr,
        flush=True,
    )
    try:
        anyio.run(_serve_stdio, server, changes_listed)
    finally:
        if hooks is not None:
            hooks.close()
    return 0


def _relay(ws: Workspace):
    """The prompt hook's relay (views/relay_server.py), or None: another server answers the
    hooks of this root, or the per-user place is unusable (the hooks then answer in process)."""
    from repoctx.views import relay_server

    try:
        return relay_server.start(ws)
    except failures() as exc:  # the server serves on; its hooks answer in process
        log.warning("the prompt hook's relay is off: %s", exc)
        return None
