"""Where and how the prompt hook reaches the server of its repository (views/relay.py): every
OS call of the relay, per platform.

The place is per user and outside every repository, so nothing a repository holds decides where
a hook connects or what it trusts. POSIX: `$XDG_RUNTIME_DIR/repoctx-relay`, else
`${TMPDIR:-/tmp}/repoctx-relay-<uid>`, made 0700 and used only while it is a directory (not a
link) of this user that no other may enter; Windows: `%LOCALAPPDATA%\\repoctx\\relay`, kept to the
user by the profile's permissions. In it each repository has, named by a hash of its real path,
`<name>.lock`, which the server answering for it holds while it lives (the OS drops the lock when
the process dies, however it dies), and `<name>.json`, the endpoint: the address and the key,
written 0600 by that server.

The socket: POSIX a Unix socket in that directory, a fresh name per server (its path within the
104 bytes macOS allows). Windows, whose Python has no AF_UNIX: TCP on 127.0.0.1, which any local
user can reach, but none passes the challenge without the key (views/relay.py)."""

from __future__ import annotations

import json
import os
import sys

# The C module behind socket: the hook connects on every prompt, and socket's Python front
# costs it a few ms of CPU (it makes its enums).
from _socket import SOCK_STREAM
from _socket import socket as Socket
from typing import TYPE_CHECKING

from repoctx.base.root_name import root_name
from repoctx.base.user_place import local_app_data, private_dir

if TYPE_CHECKING:
    import socket

# A socket's path is refused past this (macOS's sun_path holds 104 bytes with its NUL).
MAX_SOCKET_PATH = 103
MAX_ENDPOINT_BYTES = 4096


def endpoint_path(root: str, make: bool = False) -> str | None:
    """The endpoint file of `root` in the place; None when the place is missing (or, with
    `make`, cannot be made) or is not this user's alone."""
    place = _place(make)
    return None if place is None else os.path.join(place, root_name(root) + ".json")


def read_endpoint(path: str) -> tuple[str, bytes]:
    """The address and the key an endpoint file holds (OSError, ValueError or KeyError when it
    is not one)."""
    with open(path, "rb") as f:
        data = json.loads(f.read(MAX_ENDPOINT_BYTES + 1)[:MAX_ENDPOINT_BYTES])
    return str(data["address"]), bytes.fromhex(data["key"])


def write_endpoint(path: str, address: str, key: bytes) -> None:
    """Write the endpoint file whole (a reader sees the old one or the new one), readable by
    this user only."""
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(json.dumps({"address": address, "key": key.hex()}).encode())
    os.replace(tmp, path)


def connect(address: str, timeout: float) -> Socket:
    """A connection to a server's socket (closed by the caller)."""
    sock = Socket(FAMILY, SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(_sockaddr(address))  # a server gone leaves a path nothing listens on: refused at once
    except BaseException:
        sock.close()
        raise
    return sock


def remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


if sys.platform == "win32":
    import msvcrt
    from _socket import AF_INET as FAMILY

    def _place(make: bool) -> str | None:
        base = local_app_data()
        return None if not base else private_dir(os.path.join(base, "repoctx", "relay"), make)

    def take_lock(path: str) -> int | None:
        """A descriptor holding `path`'s lock, or None when another process holds it."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_BINARY | os.O_NOINHERIT, 0o600)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            os.close(fd)
            return None
        return fd

    def listen(stem: str) -> tuple[socket.socket, str]:
        """A listening socket for a server and its address, as `connect` takes it."""
        import socket

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        return sock, f"127.0.0.1:{sock.getsockname()[1]}"

    def _sockaddr(address: str) -> tuple[str, int]:
        host, _, port = address.rpartition(":")
        if host != "127.0.0.1":  # the file is the user's, but a hook never leaves the machine
            raise ValueError("not a loopback address")
        return host, int(port)

    def unlisten(address: str) -> None:
        pass  # a port is freed with its socket

else:
    import fcntl
    from _socket import AF_UNIX as FAMILY

    def _place(make: bool) -> str | None:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        if runtime:
            place = os.path.join(runtime, "repoctx-relay")
        else:
            place = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"repoctx-relay-{os.getuid()}")
        return private_dir(place, make)

    def take_lock(path: str) -> int | None:
        """A descriptor holding `path`'s lock, or None when another process holds it."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd

    def listen(stem: str) -> tuple[socket.socket, str]:
        """A listening socket for a server and its address, as `connect` takes it: a fresh name
        beside `stem` (the endpoint's path without its suffix)."""
        import socket

        path = f"{stem}-{os.urandom(4).hex()}.sock"
        if len(os.fsencode(path)) > MAX_SOCKET_PATH:
            raise OSError(f"the socket's path is over {MAX_SOCKET_PATH} bytes: {path}")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
            sock.listen(8)
        except BaseException:
            sock.close()
            raise
        return sock, path

    def _sockaddr(address: str) -> str:
        return address

    def unlisten(address: str) -> None:
        remove(address)
