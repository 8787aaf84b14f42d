"""The server's side of the prompt hook's relay (views/relay.py): `repoctx serve` answers the
hooks of its repository from the task index it holds, in a thread of its own, one question at a
time, through the same handler and lock as its `task_context` tool, so a relayed answer is the
one the hook would make in process, byte for byte.

One server per repository answers: the first to take the endpoint's lock (relay_place.py). A
second finds it held and leaves the endpoint alone; a server that died dropped the lock with its
process, so the next one takes it and replaces the endpoint it left. A clean exit removes the
endpoint. The server answers only for its own root, only once its index is warm (a hook does not
wait for a build: it answers in process while the server builds), and bounds what it reads and
writes (relay.MAX_REQUEST, relay.MAX_REPLY)."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading

from repoctx.base import task_index
from repoctx.base.failures import failures
from repoctx.base.workspace import Workspace, settle
from repoctx.views import prompt_hook, relay_place
from repoctx.views.relay import MAX_REPLY, MAX_REQUEST, NONCE, mac, proves, recv_exact, recv_frame, send_frame

log = logging.getLogger("repoctx")
# How long a connection may take over each step: a hook that stalls cannot hold the relay.
CLIENT_SECONDS = 2.0
KEY_BYTES = 32


class Relay:
    """A server's relay: the endpoint's lock, its listening socket and its key."""

    def __init__(self, ws: Workspace, lock: int, endpoint: str, listener: socket.socket, address: str) -> None:
        self.ws, self.lock, self.endpoint, self.listener, self.address = ws, lock, endpoint, listener, address
        self.key = os.urandom(KEY_BYTES)
        self._warming: threading.Thread | None = None

    def serve(self) -> None:
        relay_place.write_endpoint(self.endpoint, self.address, self.key)
        threading.Thread(target=self._accept, name="repoctx-relay", daemon=True).start()

    def close(self) -> None:
        """Remove the endpoint and let the lock go (on a clean exit)."""
        relay_place.remove(self.endpoint)
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the thread's accept
        except OSError:
            pass
        self.listener.close()
        relay_place.unlisten(self.address)
        os.close(self.lock)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            with conn:
                try:
                    self._exchange(conn)
                except failures() as exc:  # a hook gone, too slow or without the key: it answers in process
                    log.debug("relay: %s", exc)

    def _exchange(self, conn: socket.socket) -> None:
        conn.settimeout(CLIENT_SECONDS)
        theirs, ours = recv_exact(conn, NONCE), os.urandom(NONCE)
        conn.sendall(ours + mac(self.key, b"server", theirs, ours))
        request, tag = recv_frame(conn, MAX_REQUEST)
        if not proves(tag, self.key, b"hook", theirs, ours, request):
            return
        reply = json.dumps(self._reply(json.loads(request))).encode()
        if len(reply) > MAX_REPLY:
            reply = json.dumps({"refused": f"an answer over {MAX_REPLY} bytes"}).encode()
        send_frame(conn, reply, mac(self.key, b"reply", theirs, ours, reply))

    def _reply(self, request: object) -> dict[str, str]:
        if not isinstance(request, dict) or not _same_root(request.get("root"), self.ws.root):
            return {"refused": "not this server's root"}
        prompt, budget, limit = request.get("prompt"), request.get("budget"), request.get("limit")
        if not isinstance(prompt, str) or type(budget) is not int or type(limit) is not int:
            return {"refused": "not a question of the prompt hook"}
        if not task_index.is_warm(self.ws):
            self._warm()
            return {"refused": "the task index is not built yet"}
        settle(self.ws.root)  # as a tool call does: a multi-file write a killed process left is finished first
        return {"text": prompt_hook.ranked(self.ws, prompt, budget, limit) or ""}

    def _warm(self) -> None:
        """Build the index for the next hook, once at a time, beside the relay (which goes on
        refusing meanwhile)."""
        if self._warming is not None and self._warming.is_alive():
            return

        def build() -> None:
            try:
                task_index.task_index(self.ws)
            except failures():  # the next question meets the same problem and reports it
                log.exception("building the task index for the prompt hook failed")

        self._warming = threading.Thread(target=build, name="repoctx-relay-warm", daemon=True)
        self._warming.start()


def _same_root(given: object, root: str) -> bool:
    return isinstance(given, str) and os.path.normcase(given) == os.path.normcase(root)


def start(ws: Workspace) -> Relay | None:
    """Answer the prompt hooks of `ws.root` until `close`; None when another live server answers
    for it, or the per-user place cannot be used (the hooks then answer in process)."""
    endpoint = relay_place.endpoint_path(ws.root, make=True)
    if endpoint is None:
        return None
    stem = endpoint.removesuffix(".json")
    lock = relay_place.take_lock(stem + ".lock")
    if lock is None:
        return None
    found = None
    try:
        _clear(endpoint)
        found = Relay(ws, lock, endpoint, *relay_place.listen(stem))
        found.serve()
    except BaseException:
        if found is None:
            os.close(lock)
        else:
            found.close()
        raise
    return found


def _clear(endpoint: str) -> None:
    """Remove what a server that died left: its socket (only one in the place) and its endpoint."""
    try:
        address, _ = relay_place.read_endpoint(endpoint)
    except (OSError, ValueError, KeyError):
        return
    if os.path.dirname(address) == os.path.dirname(endpoint):
        relay_place.unlisten(address)
    relay_place.remove(endpoint)
