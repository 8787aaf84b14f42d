"""Answers, not internal errors (issue 32, item 10).

- The system refusing (permissions dropped, a read-only mount, a file swapped or removed under
  a command) is a refusal naming the error (`io_error`), never `internal_error`: every tool
  of `--profile all` runs through the MCP door (`server.call`) while the confined layer's
  writes fail with EACCES, then with EROFS, as they do on a read-only mount.
- `task_context` with `budget: 2^64` is an invalid argument.
- Every request that has an id is answered with that id; a request whose id is not an integer
  or a string (a fraction, a boolean, null, an array, an object) is answered with `id: null`
  and -32600, as JSON-RPC 2.0 says, and the server goes on serving. Raw JSON-RPC over a pipe."""

from __future__ import annotations

import errno
import json
import logging

import pytest

from conftest import served_lines
from repoctx import _core
from repoctx.base.workspace import Workspace
from repoctx.registry.catalog import select
from repoctx.views import server
from sample_repo import EXAMPLES, build_sample_repo

WRITERS = ("fs_write", "fs_makedirs", "fs_rename", "fs_remove", "fs_remove_tree", "fs_exchange")


def _internal(result) -> bool:
    """Whether a tool's answer is an internal error (in its envelope, or as the contract's text)."""
    text = json.dumps(result.model_dump(mode="json"))
    return '"code": "internal_error"' in text or "Internal error in" in text


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_every_tool_refuses_when_the_system_refuses_its_writes(tmp_path, monkeypatch, code):
    ws = Workspace.open(build_sample_repo(tmp_path / "repo"), profile="all")
    tools = {c.tool: c for c in select(ws).commands}

    def refuse(*args, **kwargs):
        raise OSError(code, f"{errno.errorcode[code]} (injected)")

    for name in WRITERS:
        monkeypatch.setattr(_core, name, refuse)
    logging.disable(logging.CRITICAL)  # (the tracebacks of any failure go to the log)
    try:
        internal = [name for name, arguments in EXAMPLES.items()
                    if name in tools and _internal(server.call(ws, tools[name], arguments))]
    finally:
        logging.disable(logging.NOTSET)
    assert len([n for n in EXAMPLES if n in tools]) > 30
    assert internal == []


def test_a_budget_past_what_the_core_holds_is_an_invalid_argument(tmp_path):
    ws = Workspace.open(build_sample_repo(tmp_path / "repo"), profile="all")
    tools = {c.tool: c for c in select(ws).commands}
    for budget in (2**64, 2**63, -2**64):
        result = server.call(ws, tools["task_context"], {"task": "engine helper", "budget": budget})
        assert result.is_error and not _internal(result)
        assert result.structured_content["error"]["code"] == "invalid_argument"


BAD_IDS = [1.5, 1.0, -0.0, 1e3, True, False, None, [], [1], {}, {"id": 1}]
GOOD_IDS = [0, -1, 2**63 - 1, 2**64 - 1, "", "x", "ü"]


def _exchange(root, lines: list[str], expect: int) -> list[dict]:
    """Send the lines to `repoctx serve` and read `expect` answers."""
    return served_lines(root, lines, lambda answers: len(answers) >= expect)


def test_every_request_with_an_id_is_answered_with_it(tmp_path):
    root = build_sample_repo(tmp_path / "repo")
    init = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    lines = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    for id_ in BAD_IDS:
        for method, params in (("ping", None), ("tools/list", {}), ("tools/call", {"name": "list_contexts"})):
            lines.append(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method,
                                     **({"params": params} if params is not None else {})}))
    for id_ in GOOD_IDS:
        lines.append(json.dumps({"jsonrpc": "2.0", "id": id_, "method": "ping"}))
        # the same id on a line the protocol layer cannot take (nested past its depth)
        deep = "[" * 100_000 + "]" * 100_000
        lines.append(f'{{"jsonrpc": "2.0", "id": {json.dumps(id_)}, "method": "ping", "params": {{"x": {deep}}}}}')
    lines.append(json.dumps({"jsonrpc": "2.0", "id": "last", "method": "ping"}))
    bad = len(BAD_IDS) * 3
    answers = _exchange(root, lines, 1 + bad + 2 * len(GOOD_IDS) + 1)
    assert answers[0]["id"] == "init" and answers[-1] == {"jsonrpc": "2.0", "id": "last", "result": {}}
    nulls = [a for a in answers if a["id"] is None]
    assert len(nulls) == bad and all(a["error"]["code"] == -32600 for a in nulls), nulls
    by_id = [a["id"] for a in answers[1:-1] if a["id"] is not None]
    assert sorted(map(json.dumps, by_id)) == sorted(json.dumps(i) for i in GOOD_IDS for _ in range(2))
    print(f"{len(lines) - 2} requests: {bad} with invalid ids answered id null -32600, "
          f"{2 * len(GOOD_IDS)} answered with their id")
