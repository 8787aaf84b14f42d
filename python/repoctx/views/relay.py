"""The prompt hook's relay: a hook asks the `repoctx serve` already running for its repository,
which holds the task index warm, rather than loading the saved index itself (issue 29.7: a
prompt's answer within 150 ms). The server side is views/relay_server.py; where the endpoint
is and the OS calls, views/relay_place.py.

One question per connection, each side proving it holds the endpoint's key (a keyed BLAKE2b
over both sides' random nonces, so nothing recorded can be played again):

    hook   -> server  nonce_h (32 bytes)
    server -> hook    nonce_s, mac("server", nonce_h, nonce_s)
    hook   -> server  frame(request), mac("hook", nonce_h, nonce_s, request)
    server -> hook    frame(reply), mac("reply", nonce_h, nonce_s, reply)

A frame is a 4-byte big-endian length and that many bytes, refused past its cap before it is
read. The request is JSON `{"root", "prompt", "budget", "limit"}`; the reply `{"text": TEXT}`
(empty: the hook stays silent) or `{"refused": WHY}`. Whatever goes wrong, a refusal, a timeout,
a server gone or a key that does not match, the hook answers in process (`ask` is None).
"""

from __future__ import annotations

import json
import os

# The C functions behind hashlib's BLAKE2 and hmac.compare_digest: the hook connects on every
# prompt, and hashlib and hmac load OpenSSL (a few ms each).
from _blake2 import blake2b
from _operator import _compare_digest

from repoctx.base.failures import failures
from repoctx.views import relay_place
from repoctx.views.relay_place import Socket

NONCE = 32
MAC = 32
# Caps of what each side reads: a request holds a prompt (the hook reads events up to 4 MiB);
# a reply the hook's text, a few KiB at its default budget.
MAX_REQUEST = 8 << 20
MAX_REPLY = 4 << 20
# How long a hook waits for the server: to connect and prove itself, then for the answer
# (a warm answer takes tens of ms; a server busy past this is not waited for).
HANDSHAKE_SECONDS = 0.5
ANSWER_SECONDS = 1.0


def mac(key: bytes, role: bytes, *parts: bytes) -> bytes:
    h = blake2b(role, key=key, digest_size=MAC)
    for part in parts:
        h.update(len(part).to_bytes(4, "big"))
        h.update(part)
    return h.digest()


def proves(tag: bytes, key: bytes, role: bytes, *parts: bytes) -> bool:
    """Whether `tag` is the key's mac of the parts, compared in constant time."""
    return _compare_digest(tag, mac(key, role, *parts))


def recv_exact(sock: Socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def send_frame(sock: Socket, data: bytes, tag: bytes) -> None:
    sock.sendall(len(data).to_bytes(4, "big") + data + tag)


def recv_frame(sock: Socket, most: int) -> tuple[bytes, bytes]:
    """A frame's bytes and the MAC after them; ValueError when it says it is over `most`."""
    size = int.from_bytes(recv_exact(sock, 4), "big")
    if size > most:
        raise ValueError(f"a frame of {size} bytes, over the cap of {most}")
    return recv_exact(sock, size), recv_exact(sock, MAC)


def ask(root: str, prompt: str, budget: int, limit: int) -> str | None:
    """The hook's text from the server of `root` ("" for silence), or None when no server
    answered it (the hook then answers in process)."""
    try:
        path = relay_place.endpoint_path(root)
        if path is None:
            return None
        address, key = relay_place.read_endpoint(path)
        sock = relay_place.connect(address, HANDSHAKE_SECONDS)
        try:
            ours = os.urandom(NONCE)
            sock.sendall(ours)
            theirs = recv_exact(sock, NONCE)
            if not proves(recv_exact(sock, MAC), key, b"server", ours, theirs):
                return None  # not the server that wrote the endpoint
            request = json.dumps({"root": root, "prompt": prompt, "budget": budget, "limit": limit},
                                 ensure_ascii=False).encode()
            send_frame(sock, request, mac(key, b"hook", ours, theirs, request))
            sock.settimeout(ANSWER_SECONDS)
            reply, tag = recv_frame(sock, MAX_REPLY)
            if not proves(tag, key, b"reply", ours, theirs, reply):
                return None
        finally:
            sock.close()
        text = json.loads(reply).get("text")
        return text if isinstance(text, str) else None
    except failures():  # no server, a stale endpoint, a refusal: answered in process, silently
        return None
