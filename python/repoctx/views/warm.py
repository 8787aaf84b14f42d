"""A server's warm-up: the live tables and, in a thread, what the first answers of the tools it
lists would wait for (catalog.warm_up). Started before the MCP SDK is imported (about 0.7 s of
CPU), so the core builds the tables and a saved task index on the other core meanwhile; this
module imports nothing of the SDK."""

from __future__ import annotations

import logging
import threading

from repoctx.base import index
from repoctx.base.failures import failures
from repoctx.base.workspace import Workspace
from repoctx.registry.allowlist import AllowlistError
from repoctx.registry.catalog import listed, warm_up

log = logging.getLogger("repoctx")
_started: dict[str, frozenset[str]] = {}  # roots warmed in this process -> the tools listed


def start(ws: Workspace, watch: bool) -> frozenset[str]:
    """Keep tables live for the rest of this process, and build them in the background (once
    per root); a server whose allowlist is refused warms nothing (it reports the refusal).
    Returns the names of the tools listed (none when refused)."""
    if ws.root in _started:
        return _started[ws.root]
    _started[ws.root] = frozenset()
    index.serve_live(watch)
    try:
        tools = {c.tool: c for c in listed(ws).commands}  # the surfaces with data
    except AllowlistError:
        return frozenset()
    _started[ws.root] = frozenset(tools)

    def warm() -> None:
        try:
            warm_up(ws, tools)
        except failures():  # the first question will meet the same problem and report it
            log.exception("warming up failed")

    threading.Thread(target=warm, name="repoctx-warm-up", daemon=True).start()
    return _started[ws.root]
