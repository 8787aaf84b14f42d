"""Internal errors that were refusals all along (issue 20, item 12): a path that names a
directory, a name over 255 bytes or a link loop gets the command's own error code and a
message naming it, never `internal_error`; nothing is written outside the root."""

from __future__ import annotations

import json
import os

import pytest

from conftest import mcp_client, run_cli
from sample_repo import build_sample_repo

LONG = "a" * 300  # NAME_MAX is 255 bytes


@pytest.fixture
def repo(tmp_path):
    root = build_sample_repo(tmp_path / "repo")
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    return root


@pytest.mark.anyio
async def test_propose_change_refuses_preconditions_that_name_no_file(repo):
    replace = {"op": "replace", "path": "src/core/.context.yaml", "old": "Core engine.", "new": "The engine."}
    stored = sorted(os.listdir(repo / ".repoctx/proposals"))
    async with mcp_client("--root", str(repo)) as client:
        for path, why in [("src/core", "not a regular file"), (LONG, "File name too long"),
                          ("loop1", "symbolic links")]:
            result = await client.call_tool("propose_change", {
                "title": "t", "rationale": "r", "operations": [replace],
                "preconditions": [{"kind": "file", "path": path, "sha256": None}]})
            assert result.is_error
            error = result.structured_content["error"]
            assert error["code"] == "invalid_path", error  # the reason is the confined layer's
            assert error["message"].startswith(f"{path} cannot be read as a file (") and why in error["message"]
    assert sorted(os.listdir(repo / ".repoctx/proposals")) == stored  # nothing stored


@pytest.mark.parametrize(("out", "message"), [
    ("docs", "docs cannot be written ('docs' is a directory; not replaced)"),
    ("", "--out '' names the repository itself; give it a file path, e.g. .repoctx/report.html"),
    (f"docs/{LONG}.html", f"docs/{LONG}.html cannot be written (File name too long)"),
])
def test_report_out_that_names_no_file_is_refused(repo, out, message):
    before = sorted(os.listdir(repo.parent))
    proc = run_cli("report", "--root", str(repo), "--out", out)
    assert proc.returncode == 1 and proc.stderr.strip() == message, proc.stdout + proc.stderr  # an error: stderr
    assert sorted(os.listdir(repo.parent)) == before  # no temp file beside the root


def test_cache_build_with_a_name_over_255_bytes_is_an_io_error(repo):
    proc = run_cli("cache", "build", "--root", str(repo), "--sources", str(repo / "docs"), "--cache", LONG, "--json")
    assert proc.returncode == 6, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == {"error": {"code": "io_error", "message": "File name too long"}}
