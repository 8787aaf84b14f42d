"""The stdio wire in: JSON-RPC lines from the client, each held in memory only up to a cap.

The SDK's own reader keeps a whole line however long it is, so a client (or whatever
steers it) could make the server hold gigabytes. This reader keeps at most
MAX_MESSAGE_BYTES of a line; the rest is read and dropped, and the line is replaced by
an OVERSIZED notification carrying this reader's token (so a client cannot forge one),
which the server answers with a JSON-RPC error.

A line the SDK cannot take (not JSON, or not a message it reads) reaches the server as a
bare exception; the server asks `taken()` for the line it came from and answers with the
line's id where `request_id` can read one, so the client is not left waiting.
"""

from __future__ import annotations

import json
import os
import secrets
from collections import deque
from typing import BinaryIO

import anyio

from repoctx import _core

# The largest request repoctx reads. Its own largest inputs are far smaller (a context file
# is capped at 1 MiB); the cap only has to keep memory bounded.
MAX_MESSAGE_BYTES = 16 << 20
OVERSIZED = "repoctx/oversized"
_DROP_CHUNK = 1 << 20


class CappedLines:
    """Async iterator of the text lines on `raw`, as the SDK's stdio server reads its stdin."""

    def __init__(self, raw: BinaryIO, cap: int = MAX_MESSAGE_BYTES) -> None:
        self._raw = raw
        self._cap = cap
        self.token = secrets.token_hex(16)
        self._handed: deque[str] = deque()  # lines given to the SDK, not yet matched to what it made

    def __aiter__(self) -> CappedLines:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._readline, abandon_on_cancel=True)
        if line is None:
            raise StopAsyncIteration
        self._handed.append(line)
        return line

    def taken(self) -> str:
        """The line the SDK's next item came from: it makes one item of each line, in order."""
        return self._handed.popleft()

    def _readline(self) -> str | None:
        data = self._raw.readline(self._cap + 1)
        if not data:
            return None
        if len(data) <= self._cap or data.endswith(b"\n"):
            return data.decode("utf-8", errors="replace")
        dropped = len(data)
        while True:  # the rest of the line, read in bounded chunks and let go
            chunk = self._raw.readline(_DROP_CHUNK)
            dropped += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                break
        params = {"bytes": dropped, "token": self.token, "id": request_id(data).id}
        notice = {"jsonrpc": "2.0", "method": OVERSIZED, "params": params}
        return json.dumps(notice) + "\n"

    def dropped(self, message) -> tuple[int, int | str | None] | None:
        """(size, id read from its head) of the line `message` stands for, when it is this reader's notice."""
        params = getattr(message, "params", None) or {}
        if getattr(message, "method", None) == OVERSIZED and params.get("token") == self.token:
            return params["bytes"], params["id"]
        return None


def request_id(line: str | bytes) -> _core.RequestId:
    """Whether `line` is one JSON object (is_object), and its integer or string id where one can
    be read: past any nesting depth, beside a lone surrogate escape, before the point a line
    breaks off."""
    return _core.jsonrpc_request_id(line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass"))


def claim_stdin() -> BinaryIO:
    """The client's pipe, on a descriptor of its own; fd 0 then reads the null device, so a
    child process can never take bytes off the wire (what the SDK does when it opens stdin)."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(wire, "rb", buffering=1 << 16)


def lenient_tool_call(line: str):
    """The tools/call request on a line the SDK refused only because an argument holds a lone
    surrogate escape (its JSON reader takes none), read by Python's, which does: the tool then
    answers it as its contract says (context_resolve: invalid_query), not the wire. None for any
    other line, and for one whose id or tool name is itself not text."""
    import mcp_types as types

    try:
        data = json.loads(line)
        if not (isinstance(data, dict) and data.get("method") == "tools/call"):
            return None
        params = data.get("params")
        for text in (data.get("id"), params.get("name") if isinstance(params, dict) else None):
            if isinstance(text, str):
                text.encode()  # UnicodeEncodeError for a lone surrogate: the SDK's answer stands
        message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except Exception:  # not JSON, too deep (RecursionError), a surrogate in the id or name, not a request
        return None
    return message if isinstance(message, types.JSONRPCRequest) else None
