"""A client that leaves while a call is stuck (issue 32, item 4): the server exits within its
stated bound (server.DISCONNECT_GRACE_SECONDS) however long the call would have waited. The
call here waits for the repository's write lock, which this test holds."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from repoctx.base import locks
from repoctx.views.server import DISCONNECT_GRACE_SECONDS
from sample_repo import build_sample_repo

INIT = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def test_the_server_exits_after_the_client_leaves_while_a_call_is_stuck(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    with locks.exclusive(str(repo)):  # every writer of the repository waits for this lock
        proc = subprocess.Popen([sys.executable, "-m", "repoctx", "serve", "--root", str(repo), "--profile", "all"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "update_context", "arguments": {"scope": "src/core", "fields": {"todos": ["x"]}}}}
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in [*INIT, call]))
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["id"] == 1
            time.sleep(1.0)  # the call is now waiting for the lock
            assert proc.poll() is None
            left = time.monotonic()
            proc.stdin.close()  # the client goes
            code = proc.wait(timeout=DISCONNECT_GRACE_SECONDS + 20)
            took = time.monotonic() - left
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert code == 0
    assert took < DISCONNECT_GRACE_SECONDS + 10, took
    assert "still under way" in proc.stderr.read()
    # The write it was waiting for never happened half: the context file reads whole.
    assert "Core engine." in (repo / "src/core/.context.yaml").read_text()
