"""The benchmark harness (`python -m benches`) as a user runs it: comparing reports
whose rows differ, and a run on a directory that is not a git repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli, write

ROOT = Path(__file__).resolve().parents[2]


def _benches(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benches", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def _report(suites: dict, files: int) -> dict:
    return {"machine": {"commit": "abc"}, "files": files, "suites": suites}


def test_compare_handles_rows_missing_on_either_side(tmp_path):
    earlier = _report({
        "cli": {"rows": [{"name": "repoctx status --json", "wall_s": 0.5},
                         {"name": "gone", "wall_s": 1.0}]},
        "mcp": {"rows": [{"name": "noop", "p50": 0.002}]},
        "scaling": {"rows": [{"files": 10, "cold_status_s": 0.2, "index_bytes_per_file": 100.0},
                             {"files": 100, "cold_status_s": 1.0}]},
    }, 10)
    later = _report({
        "cli": {"rows": [{"name": "repoctx status --json", "wall_s": 0.25},
                         {"name": "new", "wall_s": 3.0}]},
        "scaling": {"rows": [{"files": 10, "cold_status_s": 0.1, "index_bytes_per_file": 150.0},
                             {"files": 1000, "cold_status_s": 9.0}]},
        "tokens": {"rows": [{"name": "o200k", "s": 0.1}]},
    }, 12)
    (tmp_path / "a.json").write_text(json.dumps(earlier))
    (tmp_path / "b.json").write_text(json.dumps(later))
    proc = _benches("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "| cli | repoctx status --json | wall_s | 0.5 | 0.25 | 0.50 |" in out
    assert "| scaling | 10 files | cold_status_s | 0.2 | 0.1 | 0.50 |" in out
    assert "| scaling | 10 files | index_bytes_per_file | 100 | 150 | 1.50 |" in out
    assert "Only in this run: cli: new; scaling: 1000 files; tokens: o200k" in out
    assert "Only in the earlier run: cli: gone; mcp: noop; scaling: 100 files" in out
    assert "Before: 10 files" in out and "After: 12 files" in out


def test_run_on_a_directory_that_is_not_a_repository(tmp_path):
    tree = tmp_path / "tree"
    write(tree, "README.md", "# not a repository\n")
    write(tree, "top.py", "x = 1\n")
    write(tree, "a/x.py", "y = 2\n")  # no scope here once a/ has no context file
    write(tree, "b/notes.md", "notes\n")
    write(tree, "b/m.py", "def f():\n    return 1\n")
    write(tree, ".context.config.yaml", "min_tokens: 1\n")  # every directory a scope, however small
    run_cli("init", "--quiet", cwd=tree, check=True)
    (tree / "a/.context.yaml").unlink(missing_ok=True)
    out = tmp_path / "out"
    before = {str(p): p.lstat().st_mtime_ns for p in tree.rglob("*")}
    proc = _benches("run", "--repo", str(tree), "--suite", "cli", "--suite", "mcp", "--repeat", "1",
                    "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    # The touch is undone and nothing is made: an existing repository is left as it was.
    assert {str(p): p.lstat().st_mtime_ns for p in tree.rglob("*")} == before
    [report_path] = out.glob("*.json")
    report = json.loads(report_path.read_text())

    cli = report["suites"]["cli"]
    assert "git status --porcelain" not in [r["name"] for r in cli["rows"]]
    assert cli["ratios"]["status / git status"] is None
    assert cli["git status floor"].startswith("absent")
    assert "| status / git status | n/a |" in proc.stdout

    mcp = report["suites"]["mcp"]
    assert report["files"] == len(list(p for p in tree.rglob("*") if p.is_file()))
    assert mcp["touched"] == "b/m.py"  # a source file lying in a nested scope, the first in order
    assert mcp["check_freshness_stale"] == mcp["touches"] > 0
    assert "list_contexts_after_a_new_directory" not in mcp
    assert mcp["rss_after_scan_mib"] > 0 and mcp["rss_before_scan_mib"] > 0

    machine = report["machine"]
    for key in ("python", "mcp", "msgspec", "rustc", "core_build", "cpus", "kernel"):
        assert machine[key], key
    assert machine["core_build"] in ("release", "debug")


def test_a_command_s_peak_memory_is_its_own_not_the_harness_s():
    """Linux carries peak RSS across fork and exec: measured naively, every command run by a
    harness grown to 300 MiB reported at least 300 MiB (all rows read 428 MiB once)."""
    sys.path.insert(0, str(ROOT))
    from benches import measure

    ballast = bytearray(300 * 2**20)
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])  # touch every page: resident
    small = measure.run_once([sys.executable, "-c", "pass"], str(ROOT))
    large = measure.run_once([sys.executable, "-c", "b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096])"], str(ROOT))
    assert small["exit"] == 0 and small["peak_rss_mib"] < 60
    assert 200 < large["peak_rss_mib"] < 260
    assert large["wall_s"] > 0 and large["cpu_s"] > 0
    del ballast


@pytest.mark.anyio
async def test_the_no_op_floor_replays_a_tool_s_reply_only_when_benchmarking(tmp_path):
    write(tmp_path / "repo", "src/a.py", "a = 1\n" * 10000)
    async with mcp_client("--root", str(tmp_path / "repo"), env={"REPOCTX_BENCH_NOOP": "1"}) as client:
        listing = await client.call_tool("list_contexts", {})
        replayed = await client.call_tool("noop", {"replay": "list_contexts"})
        assert replayed.content[0].text == listing.content[0].text and '"src"' in listing.content[0].text
        assert (await client.call_tool("noop", {})).content[0].text == "{}"
        assert (await client.call_tool("noop", {"replay": "query_context"})).content[0].text == "{}"  # never called
    async with mcp_client("--root", str(tmp_path / "repo")) as client:
        assert "noop" not in {t.name for t in (await client.list_tools()).tools}
