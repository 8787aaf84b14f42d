"""Black-box: the project resources and sessions through `repoctx serve` and the
official MCP client — tool calls counted in context://session/current, two
servers sharing one database, the contract's error codes on the wire, and
servers that must not write."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from conftest import mcp_client, run_cli, write
from repoctx.project.store import database_path
from sample_repo import build_sample_repo


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


def text_of(result) -> str:
    return result.contents[0].text


def field(markdown: str, label: str) -> str:
    return re.search(rf"\*\*{label}:\*\* (.*?)\s*$", markdown, re.M).group(1)


def sessions_json(repo) -> list[dict]:
    proc = run_cli("sessions", "--json", "--root", str(repo))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)["sessions"]


@pytest.mark.anyio
async def test_tool_calls_are_counted_in_the_current_session(repo):
    async with mcp_client("--root", str(repo)) as client:
        await client.call_tool("check_freshness", {"scope": "src/core"})
        await client.call_tool("query_context", {"scope": "src/core", "filter": ["summary"]})
        await client.call_tool("query_context", {"scope": "docs/../src/core"})
        await client.call_tool("add_discovery", {"module": "core", "type": "issue",
                                                 "content": "run() blocks", "solution": "Call it in a thread"})
        current = await client.read_resource("context://session/current")
        assert current.contents[0].mime_type == "text/markdown"
        page = text_of(current)
        assert page.startswith("# Active Session\n") and field(page, "Status") == "active"
        assert "- **Tool Calls:** 4\n" in page and "- **Discoveries:** 1" in page
        assert "## Files Accessed (1)\n\n### src/core\n**Access Count:** 3  \n" in page
        assert "## Topics (3)\n\n- src/core\n- docs/../src/core\n- core\n" in page
        module = text_of(await client.read_resource("context://module/core"))
        session_id = re.search(r"\(Session: ([0-9a-f]{32})\)", module).group(1)
        assert "### run() blocks\n**Solution:** Call it in a thread  \n" in module
        recent = text_of(await client.read_resource("context://sessions/recent?limit=1"))
        assert recent.startswith(f"# Recent Sessions (1)\n\n## Session {session_id[:8]}\n")
    [s] = sessions_json(repo)
    assert (s["id"], s["status"], s["tool_calls"], s["discoveries"]) == (session_id, "ended", 4, 1)


@pytest.mark.anyio
async def test_two_servers_on_one_repository_share_the_database(repo):
    async def work(client, name: str, calls: int) -> str:
        for i in range(calls):
            await client.call_tool("check_freshness", {"scope": "src/core" if i % 2 else "docs"})
        result = await client.call_tool("add_discovery", {"module": "docs", "type": "pattern", "content": f"From {name}"})
        assert not result.is_error
        return text_of(await client.read_resource("context://session/current"))

    async with mcp_client("--root", str(repo)) as left, mcp_client("--root", str(repo)) as right:
        pages: dict[str, str] = {}

        async def run(client, name, calls):
            pages[name] = await work(client, name, calls)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, left, "left", 6)
            tg.start_soon(run, right, "right", 9)
        assert "- **Tool Calls:** 7\n" in pages["left"] and "- **Tool Calls:** 10\n" in pages["right"]
        both = text_of(await left.read_resource("context://sessions/recent"))
        assert both.startswith("# Recent Sessions (2)\n") and both.count("**Status:** active") == 2
    ended = sessions_json(repo)
    assert sorted(s["tool_calls"] for s in ended) == [7, 10] and {s["status"] for s in ended} == {"ended"}
    docs = text_of_module(repo, "docs")
    assert "- From left" in docs and "- From right" in docs


def text_of_module(repo, name: str) -> str:
    from repoctx.base.workspace import Workspace
    from repoctx.project import overview as project

    return project.read_module(Workspace.open(repo), {"name": name})


@pytest.mark.anyio
async def test_listing_and_the_contract_error_codes_on_the_wire(repo):
    async with mcp_client("--root", str(repo)) as client:
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        assert {"context://project/overview", "context://session/current", "context://sessions/recent",
                "context://module/core", "context://module/docs"} <= set(listed)
        assert all(r.mime_type == "text/markdown" for u, r in listed.items() if u.startswith("context://"))
        assert "context://module/{name}" in templates
        with pytest.raises(MCPError) as info:
            await client.read_resource("context://module/invalidModule")
        e = info.value
        assert (e.code, e.message) == (-32602, "Module not found: invalidModule")
        assert e.data == {"resource": "context://module/invalidModule", "module": "invalidModule",
                          "reason": "Module 'invalidModule' not found in project.yaml"}
        for uri in ("context://module/", "context://module/a/b", "context://nope/x", "context://project"):
            with pytest.raises(MCPError) as info:
                await client.read_resource(uri)
            assert info.value.code == -32602 and info.value.message == f"Unknown resource: {uri}"
        with pytest.raises(MCPError) as info:
            await client.read_resource("context://sessions/recent?limit=0")
        assert info.value.code == -32602 and info.value.message == "Invalid limit: 0"
        # A module name with characters that need escaping still resolves.
        assert text_of(await client.read_resource("context://module/c%6Fre")).startswith("# Module: core\n")
        # An invalid project.yaml is an internal error that names the field, not the path.
        write(repo, ".repoctx/project.yaml", "version: 1\nproject:\n  name: 5\n")
        with pytest.raises(MCPError) as info:
            await client.read_resource("context://project/overview")
        assert info.value.code == -32603 and "field `project.name`" in info.value.data["reason"]
        assert str(repo) not in json.dumps([info.value.message, info.value.data])


@pytest.mark.anyio
async def test_a_read_only_server_writes_nothing_and_has_no_session(repo):
    async with mcp_client("--root", str(repo)) as client:
        await client.call_tool("list_contexts", {})
    db = Path(database_path(str(repo)) or "")
    before = sorted(os.listdir(repo / ".repoctx")), sorted(os.listdir(db.parent))
    assert db.name in before[1]
    async with mcp_client("--root", str(repo), "--read-only") as client:
        assert "add_discovery" not in {t.name for t in (await client.list_tools()).tools}
        await client.call_tool("check_freshness", {"scope": "src/core"})
        with pytest.raises(MCPError) as info:
            await client.read_resource("context://session/current")
        assert (info.value.code, info.value.message) == (-32602, "No active session")
        recent = text_of(await client.read_resource("context://sessions/recent"))
        assert recent.startswith("# Recent Sessions (1)\n") and "**Status:** ended" in recent
    assert (sorted(os.listdir(repo / ".repoctx")), sorted(os.listdir(db.parent))) == before  # not even -shm or -wal


@pytest.mark.anyio
async def test_a_repository_without_repoctx_is_served_and_left_alone(tmp_path):
    write(tmp_path, "src/app.py", "print(1)\n")
    async with mcp_client("--root", str(tmp_path), "--profile", "project") as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource("context://project/overview")
        assert (info.value.code, info.value.message) == (-32602, "Project not initialized")
        assert "repoctx project init" in info.value.data["reason"]
        with pytest.raises(MCPError) as info:
            await client.read_resource("context://session/current")
        assert info.value.message == "No active session"
        result = await client.call_tool("add_discovery", {"module": "x", "type": "rule", "content": "y"})
        assert result.is_error
    assert sorted(os.listdir(tmp_path)) == ["src"]


@pytest.mark.anyio
async def test_a_corrupt_database_is_reported_and_tools_keep_working(repo):
    db = Path(database_path(str(repo), make=True) or "")
    db.write_bytes(b"not sqlite" * 50)
    async with mcp_client("--root", str(repo)) as client:
        result = await client.call_tool("check_freshness", {"scope": "src/core"})
        assert not result.is_error
        with pytest.raises(MCPError) as info:
            await client.read_resource("context://session/current")
        assert info.value.code == -32603
        assert f"({db.name} in the user's state place) is not an SQLite database" in info.value.data["reason"]
        assert str(repo) not in json.dumps([info.value.message, info.value.data])
    assert db.read_bytes() == b"not sqlite" * 50
