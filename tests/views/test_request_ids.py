"""Lost request ids (issue 20, item 10): a line the protocol layer cannot take is answered
with the line's id wherever the id can be read, so the client stops waiting for it: an
`initialize` whose params are a list, a request nested 1,000 or 1,000,000 deep, a lone
surrogate escape anywhere, a line cut short after its id, a line over the size cap. Raw
JSON-RPC over a pipe to `repoctx serve`, as a client that sends these would."""

from __future__ import annotations

import json

import pytest

from conftest import answered, served_lines, write


def _session(root, lines: list[str], wait_for: list) -> dict:
    """Send `lines` to `repoctx serve`, read until each id in `wait_for` is answered (a ping
    numbered last proves the server still serves); the first answer of each id."""
    answers: dict = {}
    for message in served_lines(root, lines, answered(wait_for)):
        answers.setdefault(message.get("id"), message)
    return answers


def _initialize(id_, params=None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": "initialize", "params": params if params is not None else {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})


INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _call(id_, arguments: str) -> str:
    """A tools/call line whose arguments are given as raw JSON text."""
    return f'{{"jsonrpc": "2.0", "id": {json.dumps(id_)}, "method": "tools/call", ' \
           f'"params": {{"name": "check_freshness", "arguments": {arguments}}}}}'


@pytest.fixture
def root(tmp_path):
    write(tmp_path, "src/app.py", "x = 1\n")
    return tmp_path


def test_initialize_with_list_params_is_refused_with_its_id(root):
    answers = _session(root, [_initialize(1, ["x"]), _initialize(2), INITIALIZED,
                              json.dumps({"jsonrpc": "2.0", "id": "ping", "method": "ping"})], [1, 2, "ping"])
    assert answers[1]["error"]["code"] == -32600
    assert answers[2]["result"]["serverInfo"]["name"] == "repoctx" and "result" in answers["ping"]


@pytest.mark.parametrize("depth", [1_000, 1_000_000])
def test_a_request_nested_past_the_parsers_depth_keeps_its_id(root, depth):
    nested = '{"scope": ' + "[" * depth + "]" * depth + "}"
    # The id after the deep value, too: it is read wherever it stands.
    late = f'{{"jsonrpc": "2.0", "method": "tools/call", "params": {{"arguments": {nested}}}, "id": "late"}}'
    answers = _session(root, [_initialize(1), INITIALIZED, _call("deep", nested), late,
                              json.dumps({"jsonrpc": "2.0", "id": "ping", "method": "ping"})],
                       ["deep", "late", "ping"])
    assert answers["deep"]["error"]["code"] == answers["late"]["error"]["code"] == -32600
    assert "result" in answers["ping"]


def test_a_lone_surrogate_anywhere_keeps_the_id(root):
    lines = [
        _call(9, '{"scope": "\\ud800"}'),
        '{"jsonrpc": "2.0", "id": 10, "method": "tools/\\udfff"}',
        '{"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {"_meta": {"\\ud83d": 1}}}',
        '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',  # the id itself: not one
    ]
    answers = _session(root, [_initialize(1), INITIALIZED, *lines,
                              json.dumps({"jsonrpc": "2.0", "id": "ping", "method": "ping"})], [9, 10, 11, None, "ping"])
    # A tool call whose arguments hold one is the tool's to answer (its invalid-argument result).
    assert answers[9]["result"]["isError"] is True
    assert [answers[i]["error"]["code"] for i in (10, 11)] == [-32600] * 2
    assert "error" in answers[None]
    assert "result" in answers["ping"]


def test_a_line_that_is_not_json_is_a_parse_error_with_the_id_it_began_with(root):
    answers = _session(root, [_initialize(1), INITIALIZED, "this is not json",
                              '{"jsonrpc": "2.0", "id": 7, "method": ',
                              json.dumps({"jsonrpc": "2.0", "id": "ping", "method": "ping"})], [None, 7, "ping"])
    assert answers[None]["error"]["code"] == answers[7]["error"]["code"] == -32700
    assert "result" in answers["ping"]
