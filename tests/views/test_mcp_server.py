"""Black-box tests of `repoctx serve`: the official client over a real stdio pipe
on both protocol eras, raw JSON-RPC for the older handshakes and malformed input,
the tool listing's shape, the closed allowlist and read-only mode."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import mcp_client
from repoctx.registry.catalog import all_commands
from sample_repo import build_sample_repo

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


DRAFT_07_SAFE = {"$schema", "type", "properties", "required", "items", "enum", "anyOf", "additionalProperties",
                 "default", "description", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"}


def _keywords(schema) -> set[str]:
    if isinstance(schema, list):
        return set().union(*map(_keywords, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        if key == "properties":
            found |= _keywords(list(value.values()))
        elif key not in ("enum", "default", "required", "description"):
            found |= _keywords(value)
    return found


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_both_protocol_eras_list_and_call(repo, mode):
    async with mcp_client("--root", str(repo), mode=mode) as client:
        expected = "2026-07-28" if mode != "legacy" else None
        if expected:
            assert client.protocol_version == expected
        listed = (await client.list_tools()).tools
        assert sorted(t.name for t in listed) == sorted(c.tool for c in all_commands() if c.tool)
        unstructured = {c.tool for c in all_commands() if c.tool and not c.mcp.structured}
        assert unstructured == {"list_contexts"}
        for t in listed:
            assert TOOL_NAME.match(t.name)
            assert t.description and len(t.description) > 20
            assert t.input_schema["type"] == "object"
            if t.name in unstructured:  # its JSON comes once, as text
                assert t.output_schema is None
            else:  # self-contained: the client validates every result and a $ref costs it each time
                assert t.output_schema and t.output_schema["type"] == "object"
                assert "$ref" not in json.dumps(t.output_schema)
                # declared draft-07 (faster to validate): only keywords both drafts read alike
                assert t.output_schema["$schema"] == "http://json-schema.org/draft-07/schema#"
                assert _keywords(t.output_schema) <= DRAFT_07_SAFE, t.name
            a = t.annotations
            assert a is not None and a.open_world_hint is False
            assert a.read_only_hint is not None and a.idempotent_hint is not None
        result = await client.call_tool("check_freshness", {"scope": "src/core"})
        assert not result.is_error
        assert result.structured_content["state"] == "fresh"
        assert json.loads(result.content[0].text) == result.structured_content
        listing = await client.call_tool("list_contexts", {})
        assert listing.structured_content is None and not listing.is_error
        assert "src/core" in {e["scope"] for e in json.loads(listing.content[0].text)["entries"]}


def _raw_session(repo, lines: list[str], wait_for: set, *extra: str) -> tuple[list[dict], str]:
    """Send raw lines to `repoctx serve`, read until every id in `wait_for` is answered,
    then close stdin. Every stdout line must parse as JSON-RPC."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "repoctx", "serve", "--root", str(repo), *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        proc.stdin.write("".join(line + "\n" for line in lines))
        proc.stdin.flush()
        messages, pending = [], set(wait_for)
        while pending:
            line = proc.stdout.readline()
            assert line, f"server closed stdout with {pending} unanswered"
            message = json.loads(line)  # stdout carries protocol messages only
            assert message.get("jsonrpc") == "2.0"
            messages.append(message)
            pending.discard(message.get("id", "no id"))
        rest, stderr = proc.communicate(timeout=30)  # closes stdin: the server ends
        messages += [json.loads(line) for line in rest.splitlines()]
    finally:
        proc.kill()
    return messages, stderr


def _initialize(version: str, id_: int = 1) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})


INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18"])
def test_older_handshakes_are_answered_in_their_own_version(repo, version):
    messages, stderr = _raw_session(repo, [
        _initialize(version), INITIALIZED,
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "list_contexts", "arguments": {}}}),
    ], {1, 2, 3})
    by_id = {m.get("id"): m for m in messages}
    assert by_id[1]["result"]["protocolVersion"] == version
    assert by_id[1]["result"]["serverInfo"]["name"] == "repoctx"
    assert {t["name"] for t in by_id[2]["result"]["tools"]} >= {"list_contexts", "check_freshness", "query_context"}
    assert by_id[3]["result"]["isError"] is False
    assert "claude mcp add repoctx" in stderr  # how to register, on stderr


def test_malformed_lines_get_a_parse_error_and_the_server_keeps_serving(repo):
    messages, _ = _raw_session(repo, [
        _initialize("2025-06-18"), INITIALIZED,
        "this is not json",
        '{"jsonrpc": "2.0", "id": 7, "method": ',
        json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}),
    ], {1, None, 7, 8})
    errors = {m.get("id"): m["error"] for m in messages if "error" in m}
    assert errors.keys() == {None, 7}  # a line cut short keeps the id it began with (tests/views/test_request_ids.py)
    assert errors[None]["code"] == errors[7]["code"] == -32700
    assert any(m.get("id") == 8 and "result" in m for m in messages)


@pytest.mark.anyio
async def test_tools_allowlist_is_closed(repo):
    async with mcp_client("--root", str(repo), "--tools", "check_freshness") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["check_freshness"]
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("list_contexts", {})


def test_unknown_names_in_the_allowlist_are_refused_at_start(repo):
    proc = subprocess.run([sys.executable, "-m", "repoctx", "serve", "--root", str(repo), "--tools", "nope"],
                          capture_output=True, text=True, timeout=60, input="")
    assert proc.returncode == 2 and "nope" in proc.stderr and proc.stdout == ""


@pytest.mark.anyio
async def test_read_only_lists_no_writing_tool(repo):
    async with mcp_client("--root", str(repo), "--read-only") as client:
        names = {t.name for t in (await client.list_tools()).tools}
    writers = {c.tool for c in all_commands() if c.tool and c.writes}
    assert names and not (names & writers)
