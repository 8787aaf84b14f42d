"""Protocol robustness: one `repoctx serve` over a raw stdio pipe gets malformed JSON, wrong
JSON-RPC shapes, unknown methods, wrong argument types, out-of-range numbers, deeply nested
values and huge messages (one over the size cap, which is dropped unread). After each, a ping must be answered (the server stays responsive),
every line on stdout must be a JSON-RPC message, and a request we numbered must get a
JSON-RPC error or a result (an `isError` one for bad tool arguments).

REPOCTX_FUZZ_EXAMPLES sets the number of generated inputs (100; 1,000 under REPOCTX_DEEP=1).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import how_deep
from repoctx.registry.catalog import all_commands, all_resources
from sample_repo import EXAMPLES, build_sample_repo

EXAMPLES_N = how_deep("REPOCTX_FUZZ_EXAMPLES", 100, 1000)
TOOLS = sorted(EXAMPLES)
METHODS = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
           "resources/templates/list", "prompts/list", "prompts/get", "completion/complete",
           "logging/setLevel", "notifications/cancelled", "nope", "", "tools/call/x", "$/x"]
TRIED = {"inputs": 0}


class Server:
    def __init__(self, root: Path, stderr: Path) -> None:
        self.err = open(stderr, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "repoctx", "serve", "--root", str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)
        self.buf = b""
        self.seq = 0
        self.send_obj({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}})
        assert self.until("init")
        self.send_obj({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def send_obj(self, obj) -> None:
        self.send_raw(json.dumps(obj).encode())

    def lines(self, timeout: float):
        while True:
            if b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                yield line
                continue
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                return
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                return
            self.buf += chunk

    def until(self, *ids, timeout: float = 60) -> dict | None:
        """Read messages until every id in `ids` was answered; each line must be JSON-RPC."""
        want, seen = set(ids), {}
        for line in self.lines(timeout):
            msg = json.loads(line)  # stdout carries nothing but protocol messages
            assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", line[:200]
            assert ("result" in msg) != ("error" in msg) or "method" in msg, line[:200]
            if msg.get("id") in want:
                seen[msg["id"]] = msg
                if len(seen) == len(want):
                    return seen
        return None

    def probe(self, data: bytes, numbered: str | None = None) -> dict | None:
        """Send one input, then a ping; both answered (when numbered) or the server is stuck."""
        TRIED["inputs"] += 1
        self.seq += 1
        ping = f"ping-{self.seq}"
        self.send_raw(data)
        self.send_obj({"jsonrpc": "2.0", "id": ping, "method": "ping"})
        seen = self.until(*([numbered] if numbered else []), ping)
        assert seen is not None, f"no answer after {data[:200]!r}"
        assert self.proc.poll() is None, "server exited"
        return seen.get(numbered) if numbered else None


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    server = Server(build_sample_repo(base / "repo"), base / "stderr")
    yield server
    server.proc.stdin.close()
    assert server.proc.wait(timeout=30) == 0
    server.err.close()
    print(f"\nprotocol fuzz: {TRIED['inputs']} inputs tried")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _param_names(tool: str) -> list[str]:
    import msgspec

    cmd = next(c for c in all_commands() if c.tool == tool)
    return [f.name for f in msgspec.structs.fields(cmd.params)]


@st.composite
def tool_calls(draw):
    tool = draw(st.sampled_from(TOOLS + ["no_such_tool"]))
    args = dict(EXAMPLES.get(tool, {}))
    names = _param_names(tool) if tool in EXAMPLES else ["x"]
    for name in draw(st.lists(st.sampled_from(names + ["unknown_field"]), max_size=3)):
        args[name] = draw(json_values | st.sampled_from([-1, -(10**12), 10**12, 10**30, 0, "", "\x00", [], {}]))
    if draw(st.booleans()):
        args = draw(json_values)  # arguments that are not an object at all
    return tool, args


@settings(max_examples=EXAMPLES_N, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(kind=st.sampled_from(["bytes", "json", "shape", "call"]), data=st.data())
def test_fuzz_inputs_get_errors_never_crashes(srv, kind, data):
    if kind == "bytes":
        raw = data.draw(st.binary(max_size=200)).replace(b"\n", b" ")
        srv.probe(raw)
    elif kind == "json":
        srv.probe(json.dumps(data.draw(json_values)).encode())
    elif kind == "shape":
        msg = {"jsonrpc": data.draw(st.sampled_from(["2.0", "1.0", None, 2])), "id": data.draw(json_values),
               "method": data.draw(st.sampled_from(METHODS) | st.text(max_size=12)), "params": data.draw(json_values)}
        for key in data.draw(st.lists(st.sampled_from(list(msg)), max_size=2)):
            msg.pop(key, None)
        srv.probe(json.dumps(msg).encode())
    else:
        tool, args = data.draw(tool_calls())
        srv.seq += 1
        rid = f"call-{srv.seq}"
        answer = srv.probe(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                       "params": {"name": tool, "arguments": args}}).encode(), rid)
        assert "error" in answer or "result" in answer
        if "result" in answer and args is not None and not isinstance(args, dict):
            assert answer["result"].get("isError"), answer


def _call(srv, name, args) -> dict:
    srv.seq += 1
    rid = f"x-{srv.seq}"
    return srv.probe(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                 "params": {"name": name, "arguments": args}}).encode(), rid)


def test_out_of_range_numbers(srv):
    assert _call(srv, "context_resolve", {"cache": "docs", "query": "x", "budget": -5})["result"]["isError"]
    huge = _call(srv, "list_contexts", {"limit": 10**12})["result"]
    assert not huge.get("isError")
    assert _call(srv, "list_contexts", {"limit": -1})["result"]["isError"]
    assert _call(srv, "mcp_search", {"query": "x", "limit": 10**12})["result"]  # answered, bounded by the data
    assert _call(srv, "ctxt_runs_read_latest", {"max_bytes": 10**12})["result"]  # the bound is fixed: ignored
    assert _call(srv, "ctxt_runs_read_latest", {"max_bytes": -1})["result"]
    assert _call(srv, "mcp_read_log", {"task_id": "TASK-001", "latest": False, "n": -1})["result"]["isError"]


def test_deep_nesting_and_huge_messages(srv):
    for depth in (100, 10_000, 200_000):
        srv.probe(b"[" * depth + b"]" * depth)
        nested = b'{"a":' * depth + b"1" + b"}" * depth
        srv.seq += 1
        rid = f"deep-{srv.seq}"
        msg = b'{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"update_context","arguments":' % rid.encode()
        srv.probe(msg + b'{"scope":"src","fields":' + nested + b"}}}", None)
    big = "x" * (8 << 20)  # 8 MB in one argument
    answer = _call(srv, "query_context", {"scope": big})
    assert "error" in answer or answer["result"]["isError"]
    srv.probe(b"{" + b" " * (4 << 20))  # 4 MB of an unterminated object


def _rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's RSS from /proc")
def test_a_message_over_the_cap_is_refused_unread(srv):
    from repoctx.views.wire import MAX_MESSAGE_BYTES

    before = _rss_mib(srv.proc.pid)
    rid = "too-big"
    head = b'{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"query_context","arguments":{"scope":"' % rid.encode()
    srv.send_raw(head + b"a" * (4 * MAX_MESSAGE_BYTES) + b'"}}}')
    srv.send_obj({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    errors = []
    for line in srv.lines(60):
        msg = json.loads(line)
        if msg.get("id") == rid and "error" in msg:  # the id at the line's head is kept
            errors.append(msg["error"])
        if msg.get("id") == "after":
            break
    else:
        pytest.fail("no answer to the ping after the oversized message")
    assert [e["code"] for e in errors] == [-32600]
    assert "too large" in errors[0]["message"] and str(MAX_MESSAGE_BYTES) in errors[0]["message"]
    # The 64 MiB line was dropped as it was read, never held whole.
    assert _rss_mib(srv.proc.pid) - before < 2 * MAX_MESSAGE_BYTES / 2**20


def test_a_forged_oversize_notice_is_ignored(srv):
    from repoctx.views.wire import OVERSIZED

    srv.send_obj({"jsonrpc": "2.0", "method": OVERSIZED, "params": {"bytes": 1, "token": "guess"}})
    srv.send_obj({"jsonrpc": "2.0", "id": "after-forged", "method": "ping"})
    for line in srv.lines(60):
        msg = json.loads(line)
        assert "error" not in msg, msg
        if msg.get("id") == "after-forged":
            break
    else:
        pytest.fail("no answer to the ping after the forged notice")


def test_resource_and_prompt_shapes(srv):
    templates = [r.uri.split("{", 1)[0] for r in all_resources() if r.is_template]
    for uri in ["", "nope://x", "context://module/%2e%2e%2f", "context://module/" + "a" * 100_000,
                *(t + "\x00" for t in templates), "contextia://index?x=" + "%" * 1000]:
        srv.seq += 1
        rid = f"r-{srv.seq}"
        answer = srv.probe(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "resources/read",
                                       "params": {"uri": uri}}).encode(), rid)
        assert "error" in answer or "result" in answer
