"""The context-engine reference's golden fixtures, reproduced byte for byte.

Caches built from the fixture documents must equal the fixture caches file for
file (the manifest up to its informational `created_at`); every expected
output must be what `repoctx` prints (CLI) and returns (MCP, by its own and by
the dotted reference name); every output validates against the fixture
schemas. Everything is read from ../shared at run time.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import mcp_client, run_cli, shared_path

V0 = ("reference", "context-engine", "compat", "fixtures", "v0")
SCHEMAS = ("reference", "context-engine", "compat", "schemas")

# expected file -> (cache, query file)
RESOLVE_GOLDENS = {
    "minimal_basic": ("minimal", "basic"),
    "minimal_zero_budget": ("minimal", "zero_budget"),
    "realistic_basic": ("realistic", "basic"),
    "realistic_multi_term": ("realistic", "multi_term"),
    "tie_break_ordering": ("tie_break", "tie_break"),
    "tie_break_zero_score": ("tie_break", "no_match"),
}
INSPECT_GOLDENS = {"inspect_minimal": "minimal", "inspect_realistic": "realistic"}


def fixture(*parts: str) -> Path:
    return shared_path(*V0, *parts)


def golden(name: str) -> str:
    return fixture("expected", f"{name}.json").read_text()


def query(name: str) -> dict:
    return json.loads(fixture("queries", f"{name}.json").read_text())


def schema(name: str) -> dict:
    return json.loads(shared_path(*SCHEMAS, f"{name}.schema.json").read_text())


def resolve_argv(cache: str, q: dict) -> list[str]:
    return ["resolve", "--cache", cache, "--query", q["query"], "--budget", str(q["budget"])]


@pytest.mark.parametrize("cache", ["minimal", "realistic", "tie_break"])
def test_build_reproduces_the_fixture_cache(tmp_path, cache):
    proc = run_cli("cache", "build", "--sources", str(fixture("documents", cache)), "--cache", cache,
                   "--cache-root", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected_root, built_root = fixture("caches", cache), tmp_path / cache
    expected = sorted(p.relative_to(expected_root) for p in expected_root.rglob("*") if p.is_file())
    assert sorted(p.relative_to(built_root) for p in built_root.rglob("*") if p.is_file()) == expected
    for rel in expected:
        want, got = (expected_root / rel).read_bytes(), (built_root / rel).read_bytes()
        if rel.name == "manifest.json":  # created_at is informational: take the fixture's
            stamp = json.loads(want)["created_at"]
            got = re.sub(rb'"created_at": "[^"]*"', f'"created_at": "{stamp}"'.encode(), got)
        assert got == want, rel
    assert json.loads(proc.stdout)["cache_version"] == json.loads((expected_root / "manifest.json").read_text())["cache_version"]


@pytest.mark.parametrize("name", sorted(RESOLVE_GOLDENS))
def test_cli_resolve_prints_the_golden(name):
    cache, qname = RESOLVE_GOLDENS[name]
    root = str(fixture("caches"))
    proc = run_cli(*resolve_argv(cache, query(qname)), "--format", "json", "--cache-root", root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == golden(name) + "\n"
    jsonschema.validate(json.loads(proc.stdout), schema("selection_result"))


@pytest.mark.parametrize("name", sorted(INSPECT_GOLDENS))
def test_cli_inspect_prints_the_golden(name):
    proc = run_cli("cache", "inspect", "--cache", INSPECT_GOLDENS[name], "--json", "--cache-root", str(fixture("caches")))
    assert proc.returncode == 0
    assert proc.stdout == golden(name) + "\n"
    jsonschema.validate(json.loads(proc.stdout), schema("inspect_output"))


def test_cli_errors_follow_the_error_schema_and_exit_codes():
    root = str(fixture("caches"))
    missing = run_cli("resolve", "--cache", "nope", "--query", "x", "--budget", "1", "--json", "--cache-root", root)
    assert missing.returncode == 4
    assert missing.stdout == '{"error":{"code":"cache_missing","message":"Cache does not exist"}}\n'
    future = run_cli("resolve", "--cache", "future_version", "--query", "x", "--budget", "1", "--json", "--cache-root", root)
    assert (future.returncode, json.loads(future.stdout)["error"]["code"]) == (5, "cache_invalid")
    for proc in (missing, future):
        jsonschema.validate(json.loads(proc.stdout), schema("mcp_error"))


@pytest.mark.anyio
async def test_mcp_returns_the_goldens_by_both_names():
    root = str(fixture("caches"))
    async with mcp_client("--cache-root", root, "--profile", "caches") as client:
        for name, (cache, qname) in sorted(RESOLVE_GOLDENS.items()):
            q = query(qname)
            for tool in ("context_resolve", "context.resolve"):
                result = await client.call_tool(tool, {"cache": cache, **q})
                assert not result.is_error
                assert result.content[0].text == golden(name) + "\n", (name, tool)
        for name, cache in sorted(INSPECT_GOLDENS.items()):
            # The golden is the CLI's; the engine's MCP server sums the files directly in the cache
            # directory instead of the document files (docs/caches.md, "total_bytes").
            expected = json.loads(golden(name))
            expected["total_bytes"] = sum(p.stat().st_size for p in fixture("caches", cache).iterdir()
                                          if p.is_file() and not p.is_symlink())
            for tool in ("context_inspect_cache", "context.inspect_cache"):
                result = await client.call_tool(tool, {"cache": cache})
                assert result.content[0].text == json.dumps(expected, indent=2) + "\n", (name, tool)
        listed = await client.call_tool("context.list_caches", {})
        caches = json.loads(listed.content[0].text)
        jsonschema.validate(caches, schema("list_caches"))
        assert [c["path"] for c in caches["caches"]] == ["future_version", "minimal", "realistic", "tie_break"]
        assert all(c["has_manifest"] for c in caches["caches"])


def test_mcp_error_result_is_the_golden_byte_for_byte():
    """The whole CallToolResult, as the reference serialises it (keys sorted, compact): at the
    engine's protocol (2024-11-05) exactly content and isError, no structured copy."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "context.resolve", "arguments": {"cache": "nope", "query": "x", "budget": 1}}},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "repoctx", "serve", "--cache-root", str(fixture("caches")), "--profile", "caches"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        answer = None
        for line in lines:
            proc.stdin.write(json.dumps(line) + "\n")
            proc.stdin.flush()
            if "id" in line:
                while True:
                    message = json.loads(proc.stdout.readline())
                    if message.get("id") == line["id"]:
                        answer = message
                        break
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    result = answer["result"]
    assert "structuredContent" not in result
    result.pop("_meta", None)
    assert json.dumps(result, sort_keys=True, separators=(",", ":")) == golden("mcp_error_cache_missing")
    jsonschema.validate(json.loads(result["content"][0]["text"]), schema("mcp_error"))


def test_every_query_on_every_cache_validates_and_is_deterministic(tmp_path):
    from repoctx.base.workspace import Workspace
    from repoctx.caches import engine as caches

    ws = Workspace.open(tmp_path, cache_root=fixture("caches"))
    resolve = next(c for c in caches.COMMANDS if c.tool == "context_resolve")
    for cache in ("minimal", "realistic", "tie_break"):
        for qfile in sorted(fixture("queries").glob("*.json")):
            q = json.loads(qfile.read_text())
            texts = {resolve.encode(resolve.handler(ws, resolve.parse({"cache": cache, **q}))) for _ in range(2)}
            assert len(texts) == 1
            out = json.loads(texts.pop())
            jsonschema.validate(out, schema("selection_result"))
            assert out["selection"]["tokens_used"] <= q["budget"]
            if q["query"] == "":
                assert all(d["score"] == 0.0 and d["why"]["query_terms"] == [] for d in out["documents"])


def test_edge_case_documents_build_and_resolve(tmp_path):
    """unicode, empty, repeated terms and a large document: two builds agree, outputs validate."""
    docs = str(fixture("documents", "edge_cases"))
    for name in ("a", "b"):
        assert run_cli("cache", "build", "--sources", docs, "--cache", name, "--cache-root", str(tmp_path)).returncode == 0
    a, b = (json.loads((tmp_path / n / "manifest.json").read_text()) for n in "ab")
    assert a["cache_version"] == b["cache_version"] and a["document_count"] == 4
    proc = run_cli("resolve", "--cache", "a", "--query", "DEPLOYMENT café", "--budget", "400", "--json",
                   "--cache-root", str(tmp_path))
    out = json.loads(proc.stdout)
    jsonschema.validate(out, schema("selection_result"))
    ids = [d["id"] for d in out["documents"]]
    assert ids[0] == "repeated_terms.md" and out["documents"][0]["score"] == 1.0
    assert "large.md" not in ids and out["selection"]["documents_excluded_by_budget"] == 1
    unicode = next(d for d in out["documents"] if d["id"] == "unicode.md")
    assert unicode["why"]["term_matches"] == 1 and unicode["tokens"] == -(-len(unicode["content"].encode()) // 4)
