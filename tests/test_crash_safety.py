"""Crash safety: writers killed with SIGKILL at random moments leave every file in its old or
its new complete state and the database consistent.

Each writer kind runs in a forked child (the parent has imported everything, so a fork is
cheap) that writes in a loop until the parent kills it after a random delay; then every file
repoctx keeps is parsed whole and sessions.db passes `PRAGMA integrity_check`. Leftover
temporary files of a killed atomic write and staging directories of a killed cache build are
counted (litter, not torn files: the target was never touched). REPOCTX_CRASH_KILLS sets the kills per writer kind (default 24).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
import yaml

from repoctx import caches, server
from repoctx.commands import all_commands
from repoctx.workspace import Workspace
from sample_repo import CONTEXT, build_sample_repo

KILLS = int(os.environ.get("REPOCTX_CRASH_KILLS", "24"))


def _writer(kind: str, ws: Workspace, n: int) -> None:
    by_tool = {c.tool: c for c in all_commands() if c.tool}
    marker = f"w{os.getpid()}-{n}"
    if kind == "context":
        server.call(ws, by_tool["update_context"], {"scope": "src/core", "fields": {"todos": [marker] * 50}})
    elif kind == "log":
        server.call(ws, by_tool["mcp_write_log"], {"task_id": "TASK-001", "body": marker * 200})
    elif kind == "proposal":
        server.call(ws, by_tool["propose_change"], {"title": marker, "rationale": "r" * 2000, "operations": [
            {"op": "write", "path": "docs/.context.yaml",
                 "content": CONTEXT.format(fingerprint="00000000", scope="docs", summary=marker)}]})
    elif kind == "run":
        server.call(ws, by_tool["ctxt_validate_run"], {"run": True})
    elif kind == "cache":
        caches.build(ws, caches.BuildParams(sources=os.path.join(ws.root, "docs"), cache="docs", force=True))
    elif kind == "discovery":
        server.call(ws, by_tool["add_discovery"], {"module": "core", "type": "pattern", "content": marker})
    elif kind == "session":
        from repoctx import sessions

        tracker = sessions.tracker_for(ws)
        tracker.connected()
        for i in range(20):
            tracker.tool_called("query_context", {"scope": "src/core"}, {"n": i})
        tracker.flush()
        tracker.disconnected()


def _kill_loop(kind: str, ws: Workspace, rng: random.Random) -> int:
    kills = 0
    for _ in range(KILLS):
        pid = os.fork()
        if pid == 0:  # the writer: loop until killed
            try:
                n = 0
                while True:
                    _writer(kind, ws, n)
                    n += 1
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.0, 0.15))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        kills += 1
        _check_whole(Path(ws.root))
    return kills


def _check_whole(root: Path) -> None:
    """Every file repoctx writes parses whole; the database is consistent."""
    for directory, _dirs, files in os.walk(root):
        if "/.git" in directory or "/.repoctx-build-" in directory:
            continue  # git's own files; a cache build's staging directory, never renamed into place
        for name in files:
            path = Path(directory, name)
            if name.startswith(".repoctx-") and name.endswith(".tmp"):
                continue  # an atomic write's temporary file, never renamed
            data = path.read_bytes()
            if name.endswith(".json"):
                try:
                    msgspec.json.decode(data)
                except msgspec.DecodeError as exc:
                    raise AssertionError(f"torn: {path}: {exc}") from None
            elif name.endswith((".yaml", ".yml")):
                yaml.load(data, Loader=yaml.CSafeLoader)
                assert data.endswith(b"\n") or not data, path
            elif name.endswith(".md") and "/logs/" in directory:
                text = data.decode()
                assert text.startswith("---\n") and "\n---\n" in text[4:], path
    db = root / ".repoctx/sessions.db"
    if db.exists():
        con = sqlite3.connect(db)
        try:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            con.close()


@pytest.mark.parametrize("kind", ["context", "log", "proposal", "run", "cache", "discovery", "session"])
def test_sigkill_leaves_files_whole(tmp_path, kind):
    root = build_sample_repo(tmp_path / "repo")
    ws = Workspace.open(root)
    # Fork from a fresh single-threaded process: a child forked from this one (whose thread
    # pools, e.g. rayon's, exist in the parent only) could hang in its first parallel call.
    proc = subprocess.run([sys.executable, __file__, kind, str(root)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kills = int(proc.stdout.split()[-1])
    # Still usable afterwards: each surface reads what the killed writers left.
    by_tool = {c.tool: c for c in all_commands() if c.tool}
    for tool, args in [("query_context", {"scope": "src/core"}), ("ctxt_proposals_list", {}),
                       ("ctxt_runs_list", {}), ("context_inspect_cache", {"cache": "docs"}),
                       ("mcp_read_log", {"task_id": "TASK-001"})]:
        result = server.call(ws, by_tool[tool], args)
        assert not result.is_error, (kind, tool, result.content[0].text[:300])
    litter = [p for p in root.rglob(".repoctx-*") if p.name.endswith(".tmp") or p.name.startswith(".repoctx-build-")]
    print(f"\ncrash safety [{kind}]: {kills} kills, 0 torn files, {len(litter)} leftover temporary files")


if __name__ == "__main__":  # the kill loop, run in a fresh process by the test above
    _kind, _root = sys.argv[1], sys.argv[2]
    print(_kill_loop(_kind, Workspace.open(_root), random.Random(_kind)))
