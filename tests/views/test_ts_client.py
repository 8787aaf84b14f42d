"""Black-box: the official TypeScript SDK client, which most MCP hosts are built on (Claude
Code, Cursor, VS Code, the Inspector), against `repoctx serve`.

That client checks the structured content of every tool result against the tool's declared
output schema, errors included, and throws when it does not match; the Python client does
not. So every tool of every surface gets one good call and one failing call here (and every
tool that requires arguments a call without them), and no call may throw. tests/ts_client/run_plan.mjs speaks for the client; node and npm must be on
PATH (the test skips without them, but fails under CI=true, where it must run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repoctx.base import locks
from repoctx.registry.catalog import all_commands
from sample_repo import EXAMPLES, build_sample_repo

TS_CLIENT = Path(__file__).parent / "ts_client"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true")

# One call per tool that succeeds on the sample repository: its examples, but closing the
# session that mcp_write_log's example opens (the example closes one that is not open).
GOOD = {**EXAMPLES, "mcp_close_log": {"task_id": "TASK-001"}}

# One call per tool that fails on the sample repository, as a client gets it wrong.
FAILING = {
    "list_contexts": {"under": "../outside"},  # path traversal
    "check_freshness": {"scope": "no/such/scope"},  # unknown scope
    "query_context": {"scope": "../outside"},  # path traversal
    "update_context": {"scope": "../outside", "fields": {"summary": "Escaped."}},  # a write outside the root
    "context_resolve": {"cache": "no-such-cache", "query": "guide", "budget": 1000},  # unknown cache
    "context_inspect_cache": {"cache": "../../etc"},  # path traversal
    "mcp_show": {"artifact_id": "SPEC-999"},  # unknown artifact id
    "mcp_search": {"query": 5},  # wrong type
    "mcp_list": {"type": "widget"},  # unknown artifact type
    "mcp_trace": {"path": "../../etc/passwd"},  # path traversal
    "mcp_find_by_path": {"file_path": "../outside/*.py"},  # path traversal
    "mcp_context": {"task_id": "TASK-999"},  # unknown task
    "mcp_check": {"baseline": "yesterday"},  # unknown baseline
    "mcp_show_task": {"task_id": "TASK-999"},  # unknown task
    "mcp_list_tasks": {"status": "someday"},  # unknown status
    "mcp_read_log": {"task_id": "TASK-001", "n": "two"},  # wrong type
    "mcp_write_log": {"task_id": "../../escape", "body": "x"},  # an id that is a path
    "mcp_close_log": {"task_id": "TASK-002"},  # no open session
    "add_discovery": {"module": "no-such-module", "type": "pattern", "content": "x"},  # unknown module
    "task_context": {"task": "engine helpers", "paths": ["../outside.py"]},  # path traversal
    "file_outline": {"path": "../outside.py"},  # path traversal
    "propose_change": {"title": "Escape", "rationale": "None.",  # an operation outside the root
                       "operations": [{"op": "write", "path": "../escape.txt", "content": "x"}]},
}

# Tools whose arguments cannot be wrong (the ctxt contract maps each to one fixed command):
# they fail on the hostile repository, whose data is broken or leads outside the root.
FAILING_ON_HOSTILE = {
    "context_list_caches": {},  # the cache root is a file
    "ctxt_validate_run": {},  # a context file that does not parse
    "ctxt_proposals_list": {},  # .repoctx/proposals leads outside
    "ctxt_proposals_inspect_latest": {},
    "ctxt_proposals_inspect_latest_by_id": {"id": "latest"},
    "ctxt_proposals_validate_latest": {},
    "ctxt_proposals_validate_latest_by_id": {"id": "latest"},
    "ctxt_runs_list": {},  # .repoctx/runs leads outside
    "ctxt_runs_read_latest": {},
}

# Tools with no argument to get wrong and nothing on disk that can fail them: their second
# call is on the hostile repository too, and must still succeed.
NEVER_FAIL = {
    "ctxt_self_report": "reports the version and which surfaces have data",
    "ctxt_schema": "prints the JSON Schemas built into repoctx",
    "ctxt_capabilities": "reports the allowlist fixed when the server started",
    "ctxt_agent_discover": "reports a client config it cannot read as a problem of that file",
}


def registry_tools() -> set[str]:
    return {c.tool for c in all_commands() if c.tool}


def missing_required() -> dict[str, dict]:
    """Every tool that declares a required argument, called without arguments: the path of
    arguments that fail validation, besides FAILING's, which mostly fail in the handler."""
    return {c.tool: {} for c in all_commands() if c.tool and c.input_schema.get("required")}


def build_hostile_repo(root: Path, outside: Path) -> Path:
    """Data for the control and caches surfaces that is broken or leads outside the root."""
    (outside / "proposals").mkdir(parents=True)
    (outside / "runs").mkdir()
    (outside / "mcp.json").write_text('{"mcpServers": {}}\n')
    (root / ".repoctx").mkdir(parents=True)
    (root / ".context.yaml").write_text("version: 1\nscope: [unclosed\n")
    (root / ".repoctx/caches").write_text("a file where the cache root should be\n")
    (root / ".repoctx/proposals").symlink_to(outside / "proposals")
    (root / ".repoctx/runs").symlink_to(outside / "runs")
    (root / ".mcp.json").symlink_to(outside / "mcp.json")
    return root


def _missing(what: str) -> None:
    """Skip, or fail under CI=true, where this test must run."""
    message = f"the TypeScript SDK client test needs {what}"
    if IN_CI:
        pytest.fail(f"{message} (CI=true: it must run in CI)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def ts_client() -> Path:
    """tests/ts_client with @modelcontextprotocol/sdk installed from its package-lock.json
    (`npm ci`, when node_modules is missing or older than the lock)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _missing("node and npm on PATH")
    lock, package = TS_CLIENT / "package-lock.json", TS_CLIENT / "package.json"
    installed = TS_CLIENT / "node_modules/.package-lock.json"  # npm writes it on every install
    with locks.exclusive(str(TS_CLIENT)):  # one installer at a time across test processes
        if not installed.exists() or installed.stat().st_mtime < max(lock.stat().st_mtime, package.stat().st_mtime):
            proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=TS_CLIENT,
                                  capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                _missing(f"`npm ci` in {TS_CLIENT} to succeed; it failed ({proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return TS_CLIENT


def run_plan(client: Path, root: Path, calls: list[tuple[str, dict, str]], *serve_args: str) -> dict:
    """The TypeScript client's report of `repoctx serve --root ROOT SERVE_ARGS` and the calls
    (tool, arguments, "ok" or "error"), in order, on one connection."""
    plan = [{"tool": tool, "arguments": args, "expect": expect} for tool, args, expect in calls]
    proc = subprocess.run(
        ["node", str(client / "run_plan.mjs"), sys.executable, "-m", "repoctx", "serve", "--root", str(root),
         *serve_args],
        input=json.dumps(plan), capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, f"run_plan.mjs failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout)


def problems_of(report: dict) -> list[str]:
    """Every listing that threw, and every call that threw or whose isError is not what its
    plan expects."""
    problems = [f"{name}: the listing threw: {listing['error']}"
                for name, listing in report["listing"].items() if listing.get("threw")]
    schemas = {t["name"]: t["outputSchema"] for t in report["listing"]["tools"].get("items") or []}
    for call in report["calls"]:
        where = f"{call['tool']} {json.dumps(call['arguments'])} (expect {call['expect']})"
        if call["threw"]:
            problems.append(f"{where}: the client threw: {call['error']}")
        elif call["isError"] != (call["expect"] == "error"):
            problems.append(f"{where}: isError is {str(call['isError']).lower()}: {call['text'][:300]}")
        elif call["structured"] and not schemas.get(call["tool"]):
            problems.append(f"{where}: structured content from a tool without an output schema")
    return problems


def test_the_plan_covers_every_tool():
    tools = registry_tools()
    assert set(GOOD) == tools, f"good calls missing for {sorted(tools - set(GOOD))}, stale for {sorted(set(GOOD) - tools)}"
    second = [*FAILING, *FAILING_ON_HOSTILE, *NEVER_FAIL]
    assert len(second) == len(set(second)), "a tool has two second calls"
    assert set(second) == tools, f"failing calls missing for {sorted(tools - set(second))}, stale for {sorted(set(second) - tools)}"


def test_every_tool_good_and_failing_through_the_typescript_client(ts_client, tmp_path):
    """Under --profile all, on the sample repository (data for every surface) and on a hostile
    one: no call throws in the client, every good call is ok, every failing call is an error."""
    sample = build_sample_repo(tmp_path / "sample")
    hostile = build_hostile_repo(tmp_path / "hostile", tmp_path / "outside")
    reports = [
        run_plan(ts_client, sample, [
            *((tool, args, "ok") for tool, args in GOOD.items()),
            *((tool, args, "error") for tool, args in FAILING.items()),
            *((tool, args, "error") for tool, args in missing_required().items()),
        ], "--profile", "all"),
        run_plan(ts_client, hostile, [
            *((tool, args, "error") for tool, args in FAILING_ON_HOSTILE.items()),
            *((tool, {}, "ok") for tool in NEVER_FAIL),
        ], "--profile", "all"),
    ]
    for report in reports:
        listed = {t["name"] for t in report["listing"]["tools"].get("items") or []}
        assert listed == registry_tools(), "--profile all lists every tool of the registry"
        for name in ("resources", "resource_templates", "prompts"):
            assert report["listing"][name]["advertised"], f"--profile all serves {name}"
    problems = [p for report in reports for p in problems_of(report)]
    assert not problems, f"{len(problems)} problems with the TypeScript client:\n" + "\n".join(problems)


def test_the_server_answers_the_typescript_clients_protocol_version(ts_client, tmp_path):
    """On an empty directory with default settings: the server answers the version the client
    asks for (its latest), and listing tools, resources and prompts does not throw."""
    report = run_plan(ts_client, tmp_path, [])
    protocol = report["protocol"]
    assert protocol["negotiated"] == protocol["requested"], protocol
    assert protocol["requested"] >= "2025-06-18", "an era with output schemas and structured content"
    assert not problems_of(report), problems_of(report)
