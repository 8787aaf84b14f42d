"""Concurrency: several processes write to one repository at once (discoveries, session-log
entries, context updates to different fields of one file, proposals, runs) plus an MCP server
whose session database records calls meanwhile. Afterwards: nothing lost (every discovery and log
entry present, each context field holds its writer's last value), no duplicate id, and every
process finished (no deadlock: a bounded wait). REPOCTX_STRESS_OPS sets operations per writer (5; 40 under REPOCTX_DEEP=1).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import msgspec
import yaml

from conftest import how_deep, run_as_script
from repoctx.base.workspace import Workspace
from repoctx.registry.catalog import all_commands
from repoctx.views import server
from sample_repo import CONTEXT, build_sample_repo

OPS = how_deep("REPOCTX_STRESS_OPS", 5, 40)
WRITERS = 3  # processes per kind


def _work(kind: str, ws: Workspace, w: int) -> None:
    by_tool = {c.tool: c for c in all_commands() if c.tool}
    for i in range(OPS):
        tag = f"{kind}-{w}-{i}"
        if kind == "discovery":
            r = server.call(ws, by_tool["add_discovery"], {"module": "core", "type": "pattern", "content": tag})
        elif kind == "log":
            r = server.call(ws, by_tool["mcp_write_log"], {"task_id": "TASK-001", "body": tag})
        elif kind == "context":
            field = ["todos", "constraints", "testing"][w]
            r = server.call(ws, by_tool["update_context"], {"scope": "src/core", "fields": {field: [tag]}})
        elif kind == "proposal":
            r = server.call(ws, by_tool["propose_change"], {"title": tag, "rationale": "stress", "operations": [
                {"op": "write", "path": "docs/.context.yaml",
                 "content": CONTEXT.format(fingerprint="00000000", scope="docs", summary=tag)}]})
        else:
            r = server.call(ws, by_tool["ctxt_validate_run"], {"run": True})
        assert not r.is_error or kind == "run", (tag, r.content[0].text[:300])


def test_many_writers_lose_nothing(tmp_path):
    root = build_sample_repo(tmp_path / "repo")
    ws = Workspace.open(root)
    by_tool = {c.tool: c for c in all_commands() if c.tool}
    before_proposals = len(list((root / ".repoctx/proposals").glob("*.json")))
    before_runs = len(list((root / ".repoctx/runs").glob("*.json")))

    # A live MCP server on the same repository, recording its calls in the session database meanwhile.
    serve = subprocess.Popen([sys.executable, "-m", "repoctx", "serve", "--root", str(root)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def rpc(obj) -> None:
        serve.stdin.write(json.dumps(obj).encode() + b"\n")
        serve.stdin.flush()

    rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "stress", "version": "0"}}})
    serve.stdout.readline()
    rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})

    kinds = ["discovery", "log", "context", "proposal", "run"]
    # The writers fork from a fresh single-threaded process: a child forked from this one
    # (whose thread pools, e.g. rayon's, exist in the parent only) could hang.
    driver = run_as_script(__file__, str(root), popen=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for i in range(OPS * 2):  # the server writes while the others do
        rpc({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
             "params": {"name": "add_discovery", "arguments": {"module": "docs", "type": "pattern", "content": f"srv-{i}"}}})
    answers = [json.loads(serve.stdout.readline()) for _ in range(OPS * 2)]
    out, err = driver.communicate(timeout=300)
    failed = json.loads(out.splitlines()[-1]) if out.strip() else [err[-3000:]]
    serve.stdin.close()
    assert serve.wait(timeout=60) == 0
    assert not failed, failed
    assert all(not a["result"].get("isError") for a in answers), answers[:3]

    anomalies = []
    project = yaml.load((root / ".repoctx/project.yaml").read_text(), Loader=yaml.CSafeLoader)
    contents = [c for m in project["modules"].values() for c in (m.get("patterns") or [])]
    want = {f"discovery-{w}-{i}" for w in range(WRITERS) for i in range(OPS)} | {f"srv-{i}" for i in range(OPS * 2)}
    anomalies += [f"lost discovery {c}" for c in sorted(want - set(contents))]
    anomalies += [f"duplicate discovery {c}" for c in set(contents) if contents.count(c) > 1]

    logs = [p.read_text() for p in (root / ".contextia/work/logs/TASK-001").rglob("*.md")]
    for w in range(WRITERS):
        for i in range(OPS):
            found = sum(len(re.findall(rf"\blog-{w}-{i}\b", t.split("---", 2)[-1])) for t in logs)
            if found != 1:
                anomalies.append(f"log-{w}-{i} found {found} times")

    ctx = server.call(ws, by_tool["query_context"], {"scope": "src/core"}).structured_content
    for w, field in enumerate(["todos", "constraints", "testing"]):
        if json.dumps(ctx).find(f"context-{w}-{OPS - 1}") < 0:
            anomalies.append(f"lost update of {field}")

    proposals = [msgspec.json.decode((p).read_bytes()) for p in (root / ".repoctx/proposals").glob("*.json")]
    ids = [p["id"] for p in proposals]
    anomalies += [f"duplicate proposal id {i}" for i in set(ids) if ids.count(i) > 1]
    if len(proposals) - before_proposals != WRITERS * OPS:
        anomalies.append(f"{len(proposals) - before_proposals} proposals, expected {WRITERS * OPS}")
    runs = list((root / ".repoctx/runs").glob("*.json"))
    if len(runs) - before_runs != min(WRITERS * OPS, 20 - before_runs) and len(runs) != 20:  # keep_runs: 20
        anomalies.append(f"{len(runs)} runs")

    ops = len(kinds) * WRITERS * OPS + OPS * 2
    print(f"\nconcurrency: {len(kinds) * WRITERS} writer processes + 1 server, {ops} operations, "
          f"{len(anomalies)} anomalies")
    assert not anomalies, anomalies[:20]


def _drive(root: str, kinds: list[str]) -> list[str]:
    """Fork WRITERS processes per kind, wait for all (bounded): the names of those that failed."""
    ws = Workspace.open(root)
    pids = {}
    for kind in kinds:
        for w in range(WRITERS):
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    _work(kind, ws, w)
                    code = 0
                except BaseException as exc:  # reported through the exit status
                    print(f"{kind}-{w}: {exc!r}", file=sys.stderr)
                finally:
                    os._exit(code)
            pids[pid] = f"{kind}-{w}"
    deadline = time.monotonic() + 240
    failed = []
    while pids:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            if time.monotonic() > deadline:  # a deadlock: say who, and end them
                for stuck in pids:
                    os.kill(stuck, 9)
                return failed + [f"deadlock: {name}" for name in pids.values()]
            time.sleep(0.05)
            continue
        name = pids.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(name)
    return failed


if __name__ == "__main__":  # the writers' parent, run in a fresh process by the test above
    print(json.dumps(_drive(sys.argv[1], ["discovery", "log", "context", "proposal", "run"])))
