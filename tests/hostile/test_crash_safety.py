"""Crash safety: writers killed with SIGKILL at random moments leave every file in its old or
its new complete state and the database consistent.

Each writer kind runs in a forked child (the parent has imported everything, so a fork is
cheap) that writes in a loop; once its first write is done, the parent kills it after a random
delay, so the kill lands while it writes. Then every file repoctx keeps is parsed whole and
sessions.db passes `PRAGMA integrity_check`. The apply kind makes and applies three-file
proposals: after each kill, what every command does first (workspace.settle) must leave the
three files of one proposal, none half-applied, and no journal or temporary file of it.
Leftover temporary files of a killed atomic write and staging directories of a killed cache
build are counted (litter, not torn files: the target was never touched).
REPOCTX_CRASH_KILLS sets the kills per writer kind (8; 125, making 1,000 over the eight, under REPOCTX_DEEP=1).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import sys
import time
from pathlib import Path

import msgspec
import pytest
import yaml

from conftest import how_deep, run_as_script
from repoctx.base.workspace import Workspace, settle
from repoctx.caches import engine as caches
from repoctx.control import proposals
from repoctx.project.store import database_path
from repoctx.registry.catalog import all_commands
from repoctx.views import server
from sample_repo import CONTEXT, build_sample_repo

KILLS = how_deep("REPOCTX_CRASH_KILLS", 8, 125)
APPLIED = ("docs", "src/core", ".")  # the scopes whose context files each applied proposal writes


def _writer(kind: str, ws: Workspace, n: int) -> None:
    by_tool = {c.tool: c for c in all_commands() if c.tool}
    marker = f"w{os.getpid()}-{n}"
    if kind == "context":
        server.call(ws, by_tool["update_context"], {"scope": "src/core", "fields": {"todos": [marker] * 50}})
    elif kind == "log":
        server.call(ws, by_tool["mcp_write_log"], {"task_id": "TASK-001", "body": marker * 200})
    elif kind == "apply":  # a proposal of three files, made and applied
        made = proposals.propose(ws, proposals.ProposeParams(title=marker, rationale="r", operations=[
            msgspec.convert({"op": "write", "path": f"{scope}/.context.yaml",
                             "content": CONTEXT.format(fingerprint="00000000", scope=scope, summary=marker)},
                            proposals.Operation) for scope in APPLIED]))
        proposals.apply(ws, proposals.ApplyParams(made.proposal.id))
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
        from repoctx.project import sessions

        tracker = sessions.tracker_for(ws)
        tracker.connected()
        for i in range(20):
            tracker.tool_called("query_context", {"scope": "src/core"}, {"n": i})
        tracker.flush()
        tracker.disconnected()


def _check_applied(ws: Workspace) -> str:
    """After the next command, the three files hold the summary of the newest proposal
    applied (or their first content when none is): none is half-applied, and no temporary
    file or journal is left. Returns the journal's state the kill left (P, C) or "" for none."""
    root = Path(ws.root)
    journal = root / ".repoctx/journal"
    left = journal.read_bytes()[:1].decode() if journal.exists() else ""
    settle(ws.root)  # what every command does first
    summaries = {scope: yaml.safe_load(path.read_bytes())["summary"] if (path := root / scope / ".context.yaml").exists()
                 else None for scope in APPLIED}
    applied = sorted((p for _id, p in proposals._stored(ws) if p and p.status == "applied"), key=lambda p: p.created_at)
    if applied:
        assert set(summaries.values()) == {applied[-1].title}, (summaries, applied[-1].title)
    else:
        assert summaries == {"docs": None, "src/core": "Core engine.", ".": "The sample repository."}, summaries
    assert not journal.exists() and not list(root.rglob(".repoctx-txn-*"))
    return left


def _kill_loop(kind: str, ws: Workspace, rng: random.Random) -> int:
    kills, journals = 0, {"P": 0, "C": 0, "": 0}
    for _ in range(KILLS):
        warm_r, warm_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer: loop until killed
            try:
                os.close(warm_r)
                n = 0
                while True:
                    _writer(kind, ws, n)
                    if n == 0:  # its lazy imports done: the kill lands while it writes
                        os.write(warm_w, b"w")
                    n += 1
            finally:
                os._exit(0)
        os.close(warm_w)
        os.read(warm_r, 1)
        os.close(warm_r)
        time.sleep(rng.uniform(0.0, 0.15))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        kills += 1
        _check_whole(Path(ws.root))
        if kind == "apply":
            journals[_check_applied(ws)] += 1
    if kind == "apply":  # how many kills landed inside a transaction, before or after its commit point
        print(f"journal left: prepared {journals['P']}, committed {journals['C']}, none {journals['']}")
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
    db = database_path(str(root))
    if db and os.path.exists(db):
        con = sqlite3.connect(db)
        try:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            con.close()


@pytest.mark.parametrize("kind", ["context", "log", "proposal", "apply", "run", "cache", "discovery", "session"])
def test_sigkill_leaves_files_whole(tmp_path, kind):
    root = build_sample_repo(tmp_path / "repo")
    ws = Workspace.open(root)
    # Fork from a fresh single-threaded process: a child forked from this one (whose thread
    # pools, e.g. rayon's, exist in the parent only) could hang in its first parallel call.
    proc = run_as_script(__file__, kind, str(root), capture_output=True, text=True, timeout=3600)
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
    print(f"\ncrash safety [{kind}]: {kills} kills, 0 torn files, {len(litter)} leftover temporary files",
          *proc.stdout.splitlines()[:-1])


if __name__ == "__main__":  # the kill loop, run in a fresh process by the test above
    _kind, _root = sys.argv[1], sys.argv[2]
    all_commands()  # the registry and YAML loaded once here, not in every forked writer
    print(_kill_loop(_kind, Workspace.open(_root), random.Random(_kind)))
