"""The prompt hook asks the `repoctx serve` running for its repository (views/relay.py) and
answers in process when none answers: the same text either way, an edit made just before the
prompt seen, a stale endpoint or a wrong key answered in process, and one server per root.

Which path answered is read from the hook's own imports (`python -X importtime`): the ranking is
the core's, so a hook that answered in process imported `repoctx._core`, and one the server
answered did not."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing

import anyio
import pytest
from test_prompt_hook import ORDERS, repo  # noqa: F401 - the repository of the hook's tests

from conftest import REPOCTX, write

TASK = "apply_discount gives the wrong total for percentage coupons"
PROMPTS = (TASK, "the shop cli prints the discount", "how to run the shop guide",
           "zebra quantum xylophone marmalade")  # the last matches no file: silent either way


@pytest.fixture
def shop(repo):  # noqa: F811 - test_prompt_hook's, its real path
    return repo.resolve()


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A per-user place of the test's own (short: a socket's path is capped), for the hooks, the
    servers and this process alike."""
    runtime = tempfile.mkdtemp(prefix="rr")
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
    monkeypatch.setenv("LOCALAPPDATA", runtime)
    yield {**os.environ, "REPOCTX_CEILING_DIRECTORIES": str(tmp_path.resolve())}
    shutil.rmtree(runtime, ignore_errors=True)


def place() -> str:
    from repoctx.views import relay_place

    return os.path.dirname(relay_place.endpoint_path("/", make=True) or "")


def hook(root, env, prompt: str) -> tuple[str, bool]:
    """The hook's stdout for `prompt` and whether the server answered it."""
    event = {"session_id": "0b7c", "transcript_path": "/nonexistent/t.jsonl", "cwd": str(root),
             "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    done = subprocess.run([sys.executable, "-X", "importtime", *REPOCTX[1:], "prompt-hook"], cwd=root, env=env,
                          input=json.dumps(event), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    in_process = any(line.split("|")[-1].strip() == "repoctx._core" for line in done.stderr.splitlines())
    return done.stdout, not in_process


def endpoint() -> list[str]:
    return sorted(n for n in os.listdir(place()) if n.endswith(".json"))


def endpoint_text() -> str:
    (name,) = endpoint()
    with open(os.path.join(place(), name)) as f:
        return f.read()


def until_relayed(root, env, seconds: float = 60) -> tuple[str, bool]:
    """The hook's answer for TASK once a server that is starting answers it."""
    deadline = time.monotonic() + seconds
    while True:
        out, relayed = hook(root, env, TASK)
        if relayed or time.monotonic() > deadline:
            return out, relayed
        time.sleep(0.2)


def serve(root, env) -> subprocess.Popen:
    return subprocess.Popen([*REPOCTX, "serve", "--root", str(root)], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def stop(proc: subprocess.Popen) -> None:
    """End a server as its client does: by closing its stdin."""
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


@pytest.mark.anyio
async def test_the_server_answers_the_hook_as_the_hook_would(shop, env):
    from conftest import mcp_client

    alone = {p: hook(shop, env, p) for p in PROMPTS}  # no server: in process (this writes the saved index)
    assert not any(relayed for _, relayed in alone.values())
    assert "1. shop/orders.py" in alone[TASK][0] and alone[PROMPTS[-1]][0] == ""
    async with mcp_client("--root", str(shop)) as client:
        assert not (await client.call_tool("task_context", {"task": TASK})).is_error
        out, relayed = await anyio.to_thread.run_sync(until_relayed, shop, env)
        assert relayed and out == alone[TASK][0]
        for prompt in PROMPTS:
            assert hook(shop, env, prompt) == (alone[prompt][0], True), prompt
        # An edit made just before the prompt is in the answer.
        write(shop, "shop/refunds.py", "def refund_voucher(order):\n    return order.total\n")
        out, relayed = hook(shop, env, "refund_voucher returns the whole total")
        assert relayed and "1. shop/refunds.py" in out
    assert endpoint() == []  # a clean exit removes it
    assert hook(shop, env, "refund_voucher returns the whole total") == (out, False)


def test_a_stale_endpoint_or_a_wrong_key_is_answered_in_process(shop, env):
    alone, _ = hook(shop, env, TASK)
    server = serve(shop, env)
    try:
        assert until_relayed(shop, env) == (alone, True)
        path = os.path.join(place(), endpoint()[0])
        kept = endpoint_text()
        with open(path, "w") as f:
            f.write(json.dumps({**json.loads(kept), "key": "00" * 32}))
        assert hook(shop, env, TASK) == (alone, False)  # the server did not prove the key
        with open(path, "w") as f:
            f.write(kept)
        assert hook(shop, env, TASK) == (alone, True)
    finally:
        server.kill()
        server.wait()
    assert endpoint_text() == kept  # a server killed leaves its endpoint behind
    started = time.monotonic()
    assert hook(shop, env, TASK) == (alone, False)
    assert time.monotonic() - started < 30
    server = serve(shop, env)  # the next server replaces it
    try:
        assert until_relayed(shop, env) == (alone, True)
        assert endpoint_text() != kept
        assert not os.path.exists(json.loads(kept)["address"])  # the dead one's socket went with it
    finally:
        stop(server)
    assert endpoint() == []


def test_a_second_server_on_the_root_leaves_the_first_serving(shop, env):
    alone, _ = hook(shop, env, TASK)
    first = serve(shop, env)
    try:
        assert until_relayed(shop, env) == (alone, True)
        kept = endpoint_text()
        second = serve(shop, env)
        assert second.stderr is not None
        assert "serving" in second.stderr.readline()  # it is up, its relay started or not
        assert endpoint_text() == kept
        stop(second)
        assert endpoint_text() == kept  # its exit did not remove the first's
        assert hook(shop, env, TASK) == (alone, True)
    finally:
        stop(first)


def handshake(address: str):
    """A connection to a server's relay past its first step, with both nonces."""
    from repoctx.views import relay, relay_place

    sock = relay_place.connect(address, 5)
    sock.settimeout(30)
    ours = os.urandom(relay.NONCE)
    sock.sendall(ours)
    return sock, ours, relay.recv_exact(sock, relay.NONCE + relay.MAC)[:relay.NONCE]


def test_the_server_answers_only_its_root_and_reads_a_frame_only_within_its_cap(shop, env, tmp_path, monkeypatch):
    from repoctx.views import relay, relay_place

    alone, _ = hook(shop, env, TASK)
    server = serve(shop, env)
    try:
        until_relayed(shop, env)
        assert relay.ask(str(shop), TASK, 2000, 8) == json.loads(alone)["hookSpecificOutput"]["additionalContext"]
        other = write(tmp_path, "other/shop/orders.py", ORDERS).parents[1]
        path = relay_place.endpoint_path(str(shop))
        monkeypatch.setattr(relay_place, "endpoint_path", lambda root: path)
        assert relay.ask(str(other), TASK, 2000, 8) is None  # refused: not its root
        address, key = relay_place.read_endpoint(path or "")
        question = {"root": str(shop), "prompt": TASK, "budget": 2000, "limit": 8}
        sock, _, _ = handshake(address)
        with closing(sock):  # a request with a wrong tag is not answered
            relay.send_frame(sock, json.dumps(question).encode(), os.urandom(relay.MAC))
            assert sock.recv(1) == b""
        sock, ours, theirs = handshake(address)
        with closing(sock):  # nor one announced past the cap (it is not read)
            request = json.dumps({**question, "prompt": TASK + " " * relay.MAX_REQUEST}).encode()
            try:
                relay.send_frame(sock, request, relay.mac(key, b"hook", ours, theirs, request))
                answered = sock.recv(1)
            except (BrokenPipeError, ConnectionResetError):
                answered = b""
            assert answered == b""
        assert hook(shop, env, TASK) == (alone, True)
    finally:
        stop(server)


def test_a_server_not_warm_yet_leaves_the_hook_in_process_and_warms_up(shop, env):
    server = serve(shop, env)  # no saved index yet: its warm-up builds nothing
    try:
        assert server.stderr is not None and "serving" in server.stderr.readline()
        assert endpoint()
        first, relayed = hook(shop, env, TASK)
        assert not relayed and "1. shop/orders.py" in first
        assert until_relayed(shop, env) == (first, True)
    finally:
        stop(server)


def test_an_answer_from_a_listener_without_the_key_is_not_taken(shop, env):
    from repoctx.base.root_name import root_name
    from repoctx.views import relay, relay_place

    alone, _ = hook(shop, env, TASK)
    stem = os.path.join(place(), root_name(str(shop)))
    listener, address = relay_place.listen(stem)
    relay_place.write_endpoint(stem + ".json", address, os.urandom(32))

    def impostor() -> None:  # it answers every question, without knowing the key
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                try:
                    relay.recv_exact(conn, relay.NONCE)
                    conn.sendall(os.urandom(relay.NONCE + relay.MAC))
                    relay.recv_frame(conn, relay.MAX_REQUEST)
                    relay.send_frame(conn, b'{"text": "not from repoctx"}', os.urandom(relay.MAC))
                except OSError:
                    pass

    thread = threading.Thread(target=impostor, daemon=True)
    thread.start()
    try:
        assert hook(shop, env, TASK) == (alone, False)
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join()


def test_a_place_others_may_enter_or_a_link_is_not_used(tmp_path, monkeypatch):
    from repoctx.views import relay_place

    if sys.platform == "win32":
        pytest.skip("the profile's permissions keep %LOCALAPPDATA% to the user")
    runtime = tmp_path / "run"
    runtime.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    (runtime / "repoctx-relay").mkdir(mode=0o755)
    os.chmod(runtime / "repoctx-relay", 0o755)
    assert relay_place.endpoint_path("/r", make=True) is None
    os.chmod(runtime / "repoctx-relay", 0o700)
    assert relay_place.endpoint_path("/r", make=True) is not None
    os.rename(runtime / "repoctx-relay", runtime / "elsewhere")
    os.symlink(runtime / "elsewhere", runtime / "repoctx-relay")
    assert relay_place.endpoint_path("/r", make=True) is None


def test_a_socket_path_past_what_macos_holds_is_refused(tmp_path):
    from repoctx.views import relay_place

    if sys.platform == "win32":
        pytest.skip("TCP on loopback: no path")
    stem = str(tmp_path / "s")
    stem += "x" * (105 - len(stem) - len("-01234567.sock"))  # 105 bytes: Linux would bind it
    with pytest.raises(OSError, match="over 103 bytes"):
        relay_place.listen(stem)


@pytest.mark.skipif(sys.platform != "win32", reason="Windows' per-user place")
def test_a_server_started_without_localappdata_meets_the_hook_in_the_profiles_place(tmp_path, monkeypatch):
    from repoctx.views import relay_place

    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "AppData" / "Local"))
    hooks = relay_place.endpoint_path("C:\\r", make=True)
    monkeypatch.delenv("LOCALAPPDATA")
    assert hooks is not None and relay_place.endpoint_path("C:\\r", make=True) == hooks
