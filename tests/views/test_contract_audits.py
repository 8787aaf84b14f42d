"""What the contract audits found (issue 30, item 6), each held where every door goes through:
the server's listing and instructions, session logs, proposals, unknown arguments, the
bundle's budget, resource and query errors, duplicate YAML keys, and what serving writes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import pytest

from artifacts_fixture import copy_fixture
from conftest import answered, mcp_client, run_cli, served_lines, write
from sample_repo import build_sample_repo

MCP_TOOLS = {"mcp_show", "mcp_search", "mcp_list", "mcp_trace", "mcp_find_by_path", "mcp_context", "mcp_check",
             "mcp_show_task", "mcp_list_tasks", "mcp_read_log", "mcp_write_log", "mcp_close_log"}


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_fixture(tmp_path / "authkit")


@pytest.fixture
def plain(tmp_path) -> Path:
    root = tmp_path / "plain"
    write(root, "src/app.py", "def ship_order():\n    return 1\n")
    return root


@pytest.mark.anyio
async def test_the_artifact_tools_are_listed_before_a_project_exists_and_say_how_to_start(plain):
    async with mcp_client("--root", str(plain)) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert MCP_TOOLS <= listed
        result = await client.call_tool("mcp_list", {"type": "spec"})
        assert result.is_error and "No Contextia project found" in result.content[0].text
        assert "repoctx artifacts init" in result.content[0].text


@pytest.mark.anyio
@pytest.mark.parametrize(("args", "named", "unnamed"), [
    ((), ["list_contexts", "check_freshness", "query_context", "task_context", "mcp_search"], []),
    (("--profile", "caches"), [], ["list_contexts", "task_context", "mcp_search"]),
    (("--tools", "task_context"), ["task_context"], ["list_contexts", "query_context"]),
])
async def test_the_instructions_name_only_listed_tools(plain, args, named, unnamed):
    async with mcp_client("--root", str(plain), *args, mode="legacy") as client:  # the handshake carries them
        listed = {t.name for t in (await client.list_tools()).tools}
        said = client.instructions
        assert said, "the server gives instructions"
        for tool in named:
            assert tool in said and tool in listed
        for tool in unnamed:
            assert tool not in said


def _session_dirs(project: Path, task: str) -> list[Path]:
    return sorted((project / ".contextia/work/logs" / task).iterdir())


@pytest.mark.anyio
async def test_a_damaged_session_is_reported_not_passed_over(project):
    latest = _session_dirs(project, "TASK-002")[-1]
    (latest / "session.yaml").write_text("task: TASK-002\nstarted: [\n")
    async with mcp_client("--root", str(project)) as client:
        read = (await client.call_tool("mcp_read_log", {"task_id": "TASK-002"})).structured_content
        assert read["damaged"] and latest.name in read["damaged"][0] and "not valid YAML" in read["damaged"][0]
        assert read["sessions"][0]["started"] != "2026-02-28T14:30:00Z"  # the older one, said to be not the latest
        text = (await client.call_tool("mcp_read_log", {"task_id": "TASK-002"})).content[0].text
        assert text.startswith("Damaged session log: .contextia/work/logs/TASK-002/")
        check = (await client.call_tool("mcp_check", {"baseline": "schema"})).structured_content
        assert any(f["rule"] == "damaged_session" and latest.name in f["file"] for f in check["findings"])


@pytest.mark.anyio
async def test_sessions_opened_in_the_same_second_get_distinct_names(project):
    async with mcp_client("--root", str(project)) as client:
        names = []
        for i in range(3):
            written = await client.call_tool("mcp_write_log", {"task_id": "TASK-006", "body": f"step {i}"})
            names.append(written.structured_content["session"])
            closed = await client.call_tool("mcp_close_log", {"task_id": "TASK-006"})
            assert closed.structured_content["session"] == names[-1]
        read = await client.call_tool("mcp_read_log", {"task_id": "TASK-006", "latest": False, "n": 3})
    if len({n.split(" ")[0] for n in names}) == 3:
        pytest.skip("the three sessions started in different seconds")
    assert len(set(names)) == 3
    shown = [s.get("session", s["started"]) for s in read.structured_content["sessions"]]
    assert shown == names[::-1]


def _propose(repo: Path, new: str) -> str:
    op = {"op": "replace", "path": "src/core/.context.yaml", "old": 'summary: "Core engine."', "new": f'summary: "{new}"'}
    proc = run_cli("propose", "--title", new, "--rationale", "r", "--operations", json.dumps(op), "--json",
                   "--root", str(repo), check=True)
    return json.loads(proc.stdout)["proposal"]["id"]


@pytest.mark.anyio
async def test_a_forged_created_at_makes_no_proposal_the_latest_and_is_flagged(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    first, second = _propose(repo, "One."), _propose(repo, "Two.")
    path = repo / f".repoctx/proposals/{first}.json"
    data = json.loads(path.read_text())
    data["created_at"] = "2099-01-01T00:00:00.000000Z"
    path.write_text(json.dumps(data))
    async with mcp_client("--root", str(repo), "--profile", "control") as client:
        latest = (await client.call_tool("ctxt_proposals_inspect_latest", {})).structured_content
        assert latest["proposal"]["id"] == second and "edited" not in latest
        forged = (await client.call_tool("ctxt_proposals_inspect_latest_by_id", {"id": first})).structured_content
        assert forged["ok"] and "created_at says 2099-01-01T00:00:00.000000Z" in forged["edited"][0]
        refused = await client.call_tool("ctxt_proposals_validate_latest_by_id", {"id": first})
        assert refused.is_error and refused.structured_content["error"]["code"] == "invalid_proposal"
    listed = json.loads(run_cli("proposals", "list", "--json", "--root", str(repo)).stdout)["proposals"]
    ids = [p["id"] for p in listed]
    assert ids[:2] == [second, first]  # as repoctx recorded them, newest first


@pytest.mark.anyio
async def test_an_argument_that_names_another_object_is_never_ignored(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    first, _second = _propose(repo, "One."), _propose(repo, "Two.")
    async with mcp_client("--root", str(repo), "--profile", "control") as client:
        refused = await client.call_tool("ctxt_proposals_validate_latest", {"id": first})
        assert refused.is_error and refused.structured_content["error"]["code"] == "invalid_argument"
        assert "ctxt_proposals_validate_latest_by_id takes an id" in refused.structured_content["error"]["message"]
        # A bound the contract fixes is no object: kept, and named as ignored.
        kept = await client.call_tool("ctxt_proposals_inspect_latest", {"max_bytes": 5, "colour": "red"})
        assert kept.structured_content["ok"] and kept.structured_content["truncated"] is False
        assert [w.split(" ignored")[0] for w in kept.structured_content["warnings"]] == [
            "Unknown argument `colour`", "Unknown argument `max_bytes`"]


@pytest.mark.anyio
async def test_a_misspelt_argument_is_named_in_the_warnings(project):
    async with mcp_client("--root", str(project)) as client:
        result = await client.call_tool("mcp_write_log", {"task_id": "TASK-006", "Body": "did things"})
        assert not result.is_error
        assert result.structured_content["empty"] is True
        assert result.structured_content["warnings"] == [
            "Unknown argument `Body` ignored (mcp_write_log takes: task_id, body)"]
        assert "Warning: Unknown argument `Body` ignored" in result.content[0].text
        clean = await client.call_tool("mcp_write_log", {"task_id": "TASK-006", "body": "did things"})
        assert "warnings" not in clean.structured_content


@pytest.mark.anyio
async def test_the_bundle_always_holds_the_task_and_whole_sessions_when_they_fit(project):
    async with mcp_client("--root", str(project)) as client:
        for budget in range(40, 100, 6):
            result = await client.call_tool("mcp_context", {"task_id": "TASK-002", "budget": budget})
            data = result.structured_content
            assert result.is_error or any(p["id"] == "TASK-002" and p.get("depth") for p in data["parts"]), budget
            if result.is_error:
                assert "too small" in data["error"]
        bundle = (await client.call_tool("mcp_context", {"task_id": "TASK-002"})).structured_content
    sessions = [p for p in bundle["parts"] if p["group"] == "log"]
    assert sessions and all(p["depth"] == "full" for p in sessions) and not bundle.get("shortened")
    # The latest session's first entry too, not only its last: the default budget has room for it.
    assert "Implemented basic token refresh mechanism" in bundle["text"] and bundle["tokens"] < 8000


@pytest.mark.anyio
async def test_an_unknown_resource_is_invalid_params(project):
    from mcp.shared.exceptions import MCPError

    async with mcp_client("--root", str(project)) as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource("contextia://nothing-here")
        assert info.value.code == -32602


def _raw(root: Path, lines: list[str], wait_for: list) -> dict:
    return {m.get("id"): m for m in served_lines(root, lines, answered(wait_for))}


def test_a_lone_surrogate_in_a_query_is_invalid_query(plain):
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    call = ('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "context_resolve", '
            '"arguments": {"cache": "docs", "query": "\\ud800", "budget": 10}}}')
    answers = _raw(plain, [hello, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), call], [1, 2])
    result = answers[2]["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == {"error": {"code": "invalid_query", "message": "Query is invalid"}}


def test_a_duplicated_yaml_key_is_refused_with_its_line(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    path = repo / "src/core/.context.yaml"
    path.write_text(path.read_text() + 'summary: "A second summary."\n')
    line = path.read_text().count("\n")
    status = json.loads(run_cli("status", "--json", "--root", str(repo)).stdout)
    core = next(e for e in status["entries"] if e["scope"] == "src/core")
    assert core["state"] == "invalid" and core["invalid"] == {"reason": 'duplicate key "summary"', "line": line,
                                                              "column": 1}


@pytest.mark.anyio
async def test_serving_writes_no_task_index_until_a_task_is_asked(plain):
    saved = plain / ".repoctx/task-index.bin"
    async with mcp_client("--root", str(plain)) as client:
        await client.list_tools()
        await anyio.sleep(3)  # the warm-up builds the index meanwhile
        assert not saved.exists()
        result = await client.call_tool("task_context", {"task": "ship the order"})
        assert not result.is_error
        deadline = time.monotonic() + 10
        while not saved.exists() and time.monotonic() < deadline:
            await anyio.sleep(0.05)
    assert saved.is_file()
