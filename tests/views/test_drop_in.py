"""repoctx as a drop-in, tested as each kind of client would use it: a client of the older
protocol, one of each original system (dotted names, `{}` to the ctxt tools, keys from a
newer version), and one that connects before the repository has any data."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from conftest import mcp_client, run_cli, write
from repoctx.registry.catalog import all_commands
from sample_repo import build_sample_repo

CONTRACT_NAMES = {"context_resolve": "context.resolve", "context_list_caches": "context.list_caches",
                  "context_inspect_cache": "context.inspect_cache"}


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


def _raw(repo, version: str, requests: list[dict], *serve_args: str) -> dict:
    """Each request's answer by id, over a raw pipe after an `initialize` at `version`."""
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": i, **r} for i, r in enumerate(requests, 1))]
    proc = subprocess.Popen([sys.executable, "-m", "repoctx", "serve", "--root", str(repo), *serve_args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        proc.stdin.flush()
        answers, pending = {}, set(range(len(requests) + 1))
        while pending:
            line = proc.stdout.readline()
            assert line, f"no answer to {pending}"
            message = json.loads(line)
            answers[message.get("id")] = message
            pending.discard(message.get("id"))
    finally:
        proc.kill()
        proc.wait()
    return answers


def _call(name: str, arguments: dict) -> dict:
    return {"method": "tools/call", "params": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_an_older_protocol_gets_content_and_is_error_only(repo, version):
    answers = _raw(repo, version, [
        {"method": "tools/list"},
        _call("check_freshness", {"scope": "src/core"}),
        _call("context_resolve", {"cache": "docs", "query": "guide", "budget": 100000}),
        _call("context_resolve", {"cache": "nope", "query": "guide", "budget": 10}),
        _call("ctxt_capabilities", {}),
    ])
    assert answers[0]["result"]["protocolVersion"] == version
    assert all("outputSchema" not in t for t in answers[1]["result"]["tools"])
    for i in (2, 3, 4, 5):
        assert set(answers[i]["result"]) == {"content", "isError"}, answers[i]
    selection = answers[3]["result"]["content"][0]["text"]  # the selection, once
    assert json.loads(selection)["documents"]
    assert json.loads(answers[4]["result"]["content"][0]["text"]) == {
        "error": {"code": "cache_missing", "message": "Cache does not exist"}}
    assert answers[4]["result"]["isError"] is True


def test_a_newer_protocol_gets_structured_content_that_fits_the_schema(repo):
    import jsonschema

    answers = _raw(repo, "2025-06-18", [
        {"method": "tools/list"},
        _call("context_resolve", {"cache": "nope", "query": "guide", "budget": 10}),
        _call("context_inspect_cache", {"cache": "../x"}),
    ])
    schemas = {t["name"]: t.get("outputSchema") for t in answers[1]["result"]["tools"]}
    for i, tool in ((2, "context_resolve"), (3, "context_inspect_cache")):
        result = answers[i]["result"]
        assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "cache_missing"
        jsonschema.Draft7Validator(schemas[tool]).validate(result["structuredContent"])


@pytest.mark.anyio
async def test_contract_names_are_listed_on_request_and_either_spelling_is_accepted(repo):
    async with mcp_client("--root", str(repo), "--names", "contract") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert set(CONTRACT_NAMES.values()) <= names and not set(CONTRACT_NAMES) & names
        by_dot = await client.call_tool("context.resolve", {"cache": "docs", "query": "guide", "budget": 500})
        by_safe = await client.call_tool("context_resolve", {"cache": "docs", "query": "guide", "budget": 500})
        assert not by_dot.is_error and by_dot.content[0].text == by_safe.content[0].text
        caps = (await client.call_tool("ctxt_capabilities", {})).structured_content
        assert set(CONTRACT_NAMES.values()) <= set(caps["tools"]) and set(CONTRACT_NAMES) <= set(caps["aliases"])
    cli = run_cli("capabilities", "--json", "--root", str(repo), "--names", "contract")
    assert json.loads(cli.stdout) == caps
    # the same choice from the config file; --tools takes either spelling
    write(repo, ".repoctx/config.yaml", "names: contract\ntools: [context.resolve, context_list_caches]\n")
    async with mcp_client("--root", str(repo)) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"context.resolve", "context.list_caches"}


@pytest.mark.anyio
async def test_unknown_argument_keys_are_ignored(repo):
    async with mcp_client("--root", str(repo)) as client:
        for tool in (t for t in (await client.list_tools()).tools):
            assert tool.input_schema.get("additionalProperties") is not False, tool.name
        fresh = await client.call_tool("check_freshness", {"scope": "src/core", "from_a_newer_version": True})
        assert not fresh.is_error and fresh.structured_content["state"] == "fresh"
        resolved = await client.call_tool("context.resolve", {"cache": "docs", "query": "guide", "budget": 500,
                                                               "provenance": "full"})
        assert not resolved.is_error
        caps = await client.call_tool("ctxt_capabilities", {"verbose": 1})
        assert caps.structured_content["ok"] is True
        tasks = await client.call_tool("mcp_list_tasks", {"status": "in_progress", "sort": "priority"})
        assert not tasks.is_error


def _propose(repo, summary: str) -> None:
    content = (repo / "src/core/.context.yaml").read_text().replace('summary: "Core engine."', f'summary: "{summary}"')
    operation = json.dumps({"op": "write", "path": "src/core/.context.yaml", "content": content})
    out = run_cli("propose", "--json", "--root", str(repo), "--title", "Say more", "--rationale", "Needed",
                  "--operations", operation)
    assert out.returncode == 0, out.stdout[-500:]


@pytest.mark.anyio
async def test_ctxt_tools_are_the_contracts_fixed_commands(repo):
    _propose(repo, "An engine. " * 2000)  # a proposal well over the 12,000-byte bound
    expected = {
        "ctxt_proposals_inspect_latest_by_id": ("proposals", "inspect", "--id", "latest", "--max-bytes", "12000"),
        "ctxt_proposals_inspect_latest": ("proposals", "inspect", "latest", "--max-bytes", "12000"),
        "ctxt_proposals_validate_latest_by_id": ("proposals", "validate", "--id", "latest"),
        "ctxt_runs_read_latest": ("runs", "read", "latest", "--max-bytes", "12000"),
    }
    run_cli("validate", "--root", str(repo))  # a run to read
    async with mcp_client("--root", str(repo), "--profile", "control") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {c.tool for c in all_commands() if c.tool and c.tool.startswith("ctxt_")}
        assert len(names) == 12 and "propose_change" not in names
        for tool, words in expected.items():
            # a contract client sends {}; a client that asks for more bytes does not get them
            for arguments in ({}, {"max_bytes": 1 << 20}):
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, (tool, result.content[0].text)
                cli = run_cli(*words, "--json", "--root", str(repo))
                answer = dict(result.structured_content)
                warned = [w.split(" ignored")[0] for w in answer.pop("warnings", [])]  # and is told so
                assert warned == (["Unknown argument `max_bytes`"] if arguments else []), tool
                assert json.loads(cli.stdout) == answer, tool
        inspected = (await client.call_tool("ctxt_proposals_inspect_latest_by_id", {})).structured_content
        assert inspected["truncated"] is True and len(inspected["content"].encode()) <= 12000
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("propose_change", {})
    async with mcp_client("--root", str(repo), "--profile", "propose") as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"propose_change"}


@pytest.mark.anyio
@pytest.mark.parametrize("flags", [
    ("--read-only",),  # read-only: validate then records nothing on either side
    ("--read-only", "--tools", "ctxt_capabilities,ctxt_validate_run,context.resolve"),
    ("--read-only", "--profile", "control", "--names", "contract"),
])
async def test_capabilities_and_validate_equal_the_cli_under_serve_flags(repo, flags):
    async with mcp_client("--root", str(repo), *flags) as client:
        for tool, words in (("ctxt_capabilities", ("capabilities",)), ("ctxt_validate_run", ("validate",))):
            served = await client.call_tool(tool, {})
            cli = run_cli(*words, "--json", "--root", str(repo), *flags)
            assert json.loads(cli.stdout) == served.structured_content, tool
    assert not (repo / ".repoctx/runs").exists() or len(list((repo / ".repoctx/runs").iterdir())) == 1


async def _answers_on_an_empty_directory(client) -> None:
    resolved = await client.call_tool("context_resolve", {"cache": "docs", "query": "x", "budget": 10})
    assert resolved.is_error and resolved.structured_content == {
        "error": {"code": "cache_missing", "message": "Cache does not exist"}}
    tasks = await client.call_tool("mcp_list_tasks", {})
    assert tasks.is_error and tasks.content[0].text.startswith("No Contextia project found in ")
    with pytest.raises(MCPError, match="Project not initialized"):
        await client.read_resource("context://project/overview")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_tools_appear_when_their_data_does_and_the_client_is_told(tmp_path, mode):
    root = tmp_path / "empty"
    root.mkdir()
    told: list[str] = []

    async def handler(message) -> None:  # handshake protocols: notifications on the connection
        method = getattr(getattr(message, "root", message), "method", None)
        if method:
            told.append(method)

    async with mcp_client("--root", str(root), mode=mode, message_handler=handler) as client:
        before = {t.name for t in (await client.list_tools()).tools}
        assert not before & {"context_resolve", "add_discovery"}
        assert "mcp_list_tasks" in before  # listed before a project exists: its answer says how to start one
        await _answers_on_an_empty_directory(client)

        async def make_data() -> None:
            await anyio.sleep(0.2)
            run_cli("artifacts", "init", "--root", str(root), check=True)
            run_cli("artifacts", "new", "task", "--title", "First", "--root", str(root), check=True)
            run_cli("project", "init", "--root", str(root), check=True)

        with anyio.fail_after(30):
            if mode == "legacy":
                await make_data()
                while not {"notifications/tools/list_changed", "notifications/resources/list_changed"} <= set(told):
                    await anyio.sleep(0.1)
            else:  # 2026-07-28: change events come on a subscriptions/listen stream
                async with client.listen(tools_list_changed=True) as events, anyio.create_task_group() as tg:
                    tg.start_soon(make_data)
                    async for event in events:
                        if "add_discovery" in {t.name for t in (await client.list_tools()).tools}:
                            told.append(type(event).__name__)
                            break
                assert told
        after = {t.name for t in (await client.list_tools()).tools}
        assert {"mcp_list_tasks", "add_discovery"} <= after and "context_resolve" not in after
        tasks = await client.call_tool("mcp_list_tasks", {})
        assert not tasks.is_error and "TASK-001" in tasks.content[0].text
        overview = await client.read_resource("context://project/overview")
        assert overview.contents[0].text.startswith("# Project:")


@pytest.mark.anyio
async def test_a_contextia_project_in_a_parent_directory_is_found(tmp_path):
    """Contextia looks for its project from where it starts, upwards: a server or command started
    in a subdirectory finds it as the root (a `.contextia/` marks one, base/rootfind.py), while
    `--root` below the project stays exact and never reads above itself."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    top = tmp_path / "mono"
    run_cli("artifacts", "init", "--root", str(top), check=True) if top.mkdir() is None else None
    run_cli("artifacts", "new", "task", "--title", "From the top", "--root", str(top), check=True)
    sub = top / "services" / "api"
    sub.mkdir(parents=True)
    params = StdioServerParameters(command=sys.executable, args=["-m", "repoctx", "serve"], cwd=str(sub),
                                    env=dict(os.environ))
    async with Client(params) as client:
        assert "mcp_list_tasks" in {t.name for t in (await client.list_tools()).tools}
        tasks = await client.call_tool("mcp_list_tasks", {})
        assert "TASK-001: From the top" in tasks.content[0].text
    assert "TASK-001" in run_cli("artifacts", "task", "list", cwd=sub, check=True).stdout
    assert run_cli("artifacts", "task", "list", "--root", str(sub)).returncode != 0


@pytest.mark.anyio
async def test_values_the_contracts_show_are_accepted(repo):
    """Contextia's tables show "all" as a filter's default and counts as numbers; its clients
    send them as written. The context engine's budget stays an exact integer."""
    async with mcp_client("--root", str(repo)) as client:
        every = await client.call_tool("mcp_list_tasks", {})
        for arguments in ({"status": "all"}, {"kind": "all"}, {"status": "all", "kind": "all"}):
            same = await client.call_tool("mcp_list_tasks", arguments)
            assert not same.is_error and same.content[0].text == every.content[0].text
        assert (await client.call_tool("mcp_list", {"type": "spec", "status": "all"})).is_error is False
        searched = await client.call_tool("mcp_search", {"query": "engine", "type": "all", "field": "all", "limit": "5"})
        assert not searched.is_error and searched.structured_content["results"]
        logs = await client.call_tool("mcp_read_log", {"task_id": "TASK-001", "latest": "false", "n": "2"})
        assert not logs.is_error
        budget = await client.call_tool("context_resolve", {"cache": "docs", "query": "guide", "budget": "100"})
        assert budget.is_error and budget.structured_content["error"]["code"] == "invalid_budget"
