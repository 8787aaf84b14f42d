"""Check-then-use races, second round (issue 32, item 3): what is checked through the confined
layer is then used through the handle that was checked, never looked up by name again.

- `.repoctx/caches/docs`, or `.repoctx/caches`, is swapped for a link to a valid cache of a
  secret document outside while `context_resolve` runs again and again: every answer is the
  inside cache or a refusal, never the secret, never an internal error;
- `.repoctx` is swapped for a link to a copy outside while servers start (each records a
  session; the session database, and so every file SQLite opens by name, is outside every
  repository): nothing is ever made outside.

`REPOCTX_RACE_CALLS` (default 150) and `REPOCTX_RACE_STARTS` (default 12) run them longer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_security_races import Swapper

from conftest import mcp_client, snapshot
from repoctx.base.workspace import Workspace
from repoctx.caches import engine as caches
from sample_repo import build_sample_repo

SECRET = "CACHED-OUTSIDE-SECRET-5b1e"
CALLS = int(os.environ.get("REPOCTX_RACE_CALLS", "150"))
STARTS = int(os.environ.get("REPOCTX_RACE_STARTS", "12"))


def _secret_cache_root(out: Path) -> Path:
    """A cache root outside holding `docs`: a valid cache of one secret document."""
    docs = out / "secret-docs"
    docs.mkdir(parents=True)
    (docs / "guide.md").write_text(f"# Guide\n\n{SECRET} guide how use\n")
    root = out / "caches"
    ws = Workspace.open(out, cache_root=root)
    assert caches.build(ws, caches.BuildParams(sources=str(docs), cache="docs")).document_count == 1
    return root


@pytest.mark.anyio
@pytest.mark.parametrize("place", [".repoctx/caches/docs", ".repoctx/caches"])
async def test_resolve_while_the_cache_is_swapped_for_a_link_out(tmp_path, place):
    repo = build_sample_repo(tmp_path / "repo")
    root = _secret_cache_root(tmp_path / "out")
    target = root / "docs" if place.endswith("docs") else root
    before = snapshot(tmp_path / "out")
    codes: dict[str, int] = {}
    async with mcp_client("--root", str(repo), "--profile", "all") as client:
        first = await client.call_tool("context_resolve", {"cache": "docs", "query": "guide", "budget": 8000})
        assert "How to use it" in json.dumps(first.model_dump(mode="json"))  # the inside cache answers
        swapper = Swapper(repo / place, target)
        swapper.start()
        try:
            for _ in range(CALLS):
                result = await client.call_tool("context_resolve", {"cache": "docs", "query": "guide", "budget": 8000})
                text = json.dumps(result.model_dump(mode="json"))
                assert SECRET not in text
                error = (result.structured_content or {}).get("error") or {}
                code = error.get("code", "answered")
                codes[code] = codes.get(code, 0) + 1
        finally:
            swapper.finish()
    print(place, codes)
    assert swapper.swaps > 10 and codes.get("answered", 0) > 0
    assert set(codes) <= {"answered", "cache_missing"}, codes
    assert snapshot(tmp_path / "out") == before


def _start(repo: Path) -> None:
    """One server start: initialize, then a ping; the server is then told the client left."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "repoctx", "serve", "--root", str(repo)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines))
        proc.stdin.flush()
        for line in proc.stdout:
            if json.loads(line).get("id") == 2:
                break
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert "Traceback" not in proc.stderr.read()


def test_servers_starting_while_repoctx_is_swapped_make_nothing_outside(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    out = tmp_path / "out" / "repoctx"
    shutil.copytree(repo / ".repoctx", out, symlinks=True)
    before = snapshot(out.parent)
    swapper = Swapper(repo / ".repoctx", out)
    swapper.start()
    try:
        for _ in range(STARTS):
            _start(repo)
    finally:
        swapper.finish()
    assert swapper.swaps > 10
    assert snapshot(out.parent) == before


def test_repoctx_swapped_the_moment_sqlite_has_opened_makes_nothing_outside(tmp_path, monkeypatch):
    """The race above, made certain: `.repoctx` is swapped for a link to a copy outside right
    after each sqlite3.connect, the moment in which a database kept in `.repoctx` had SQLite
    make its -wal and -shm outside. Sessions are recorded all the same, and nothing is made
    outside."""
    import sqlite3

    from repoctx.project import sessions

    repo = build_sample_repo(tmp_path / "repo")
    first = sessions.Tracker(Workspace.open(repo))  # the database is there, in WAL mode
    first.connected()
    first.disconnected()
    out = tmp_path / "out" / "repoctx"
    shutil.copytree(repo / ".repoctx", out, symlinks=True)
    before = snapshot(out.parent)
    moved = tmp_path / "repoctx-inside"
    connect = sqlite3.connect

    def connect_then_swap(*args, **kwargs):
        conn = connect(*args, **kwargs)
        if not moved.exists():
            os.rename(repo / ".repoctx", moved)
            os.symlink(out, repo / ".repoctx")
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect_then_swap)
    tracker = sessions.Tracker(Workspace.open(repo))
    tracker.connected()
    tracker.tool_called("check_freshness", {"scope": "src/core"}, {})
    recording = tracker.current()
    tracker.disconnected()
    assert moved.exists() and snapshot(out.parent) == before
    assert recording is not None
