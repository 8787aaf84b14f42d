"""Failures nobody foresaw still answer in the project's structured shape: a tool whose
handler raises returns `{ok: false, error: {code: internal_error, …}}` with isError, the
CLI with --json prints the same object and exits non-zero, and neither the absolute root
nor a traceback reaches the client (the traceback goes to the server's stderr)."""

from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager

import pytest

from conftest import REPOCTX, run_cli, write

# A server whose `runs list` raises an error that names the root: the handler calls
# runs._ids at call time, so replacing it makes the tool fail as a bug would.
FAILING = """
import sys
from repoctx.control import runs
from repoctx.views.cli import main

def broken(directory):
    raise RuntimeError(f"cannot list {directory}")

runs._ids = broken
sys.exit(main(sys.argv[1:]))
"""


@asynccontextmanager
async def client_logging_to(errlog, argv: list[str], mode: str):
    """The official client on a server started with `argv`, its stderr written to `errlog`."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
        yield client


def assert_internal_error(payload: dict, command: str, root) -> None:
    assert payload["ok"] is False and payload["command"] == command and payload["schema_version"] == 1
    assert payload["error"]["code"] == "internal_error"
    message = payload["error"]["message"]
    assert str(root) not in message and os.path.realpath(root) not in message
    assert "Traceback" not in message and "cannot list" not in message


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    write(root, "src/main.py", "print('hi')\n")
    return root


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_tool_that_raises_answers_internal_error_without_the_root(repo, tmp_path, mode):
    errlog = tmp_path / "stderr.txt"
    argv = [sys.executable, "-c", FAILING, "serve", "--root", str(repo)]
    with errlog.open("w") as fh:
        async with client_logging_to(fh, argv, mode) as client:
            result = await client.call_tool("ctxt_runs_list", {})
            still = await client.call_tool("ctxt_capabilities", {})  # and the server keeps serving
    assert result.is_error is True
    text = result.content[0].text
    assert_internal_error(json.loads(text), "runs list", repo)
    assert result.structured_content == json.loads(text)
    assert still.is_error is False
    logged = errlog.read_text()
    assert "Traceback" in logged and "RuntimeError: cannot list" in logged

    # The CLI with --json: the same object, byte for byte, and a non-zero exit.
    import subprocess

    proc = subprocess.run([sys.executable, "-c", FAILING, "runs", "list", "--json", "--root", str(repo)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stdout == (text if text.endswith("\n") else text + "\n")
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.anyio
async def test_a_runs_directory_that_is_a_file(repo, tmp_path):
    """A realistic trigger: `.repoctx/runs` is a file, so listing it raises NotADirectoryError
    whose text names the absolute path. The system's refusal is an io_error naming it
    (issue 32, item 10), the root in neither view."""
    write(repo, ".repoctx/runs", "not a directory")
    cli = run_cli("runs", "list", "--json", "--root", str(repo))
    assert cli.returncode != 0, cli.stdout
    payload = json.loads(cli.stdout)
    assert payload["ok"] is False and payload["error"]["code"] == "io_error", payload
    assert "Not a directory" in payload["error"]["message"]
    assert str(repo) not in cli.stdout and os.path.realpath(repo) not in cli.stdout
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as fh:
        async with client_logging_to(fh, [*REPOCTX, "serve", "--root", str(repo)], "legacy") as client:
            result = await client.call_tool("ctxt_runs_list", {})
    assert result.is_error and result.content[0].text + "\n" == cli.stdout


def test_without_json_the_cli_keeps_its_human_line(repo):
    import subprocess

    proc = subprocess.run([sys.executable, "-c", FAILING, "runs", "list", "--root", str(repo)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "unexpected error" in proc.stderr and "--debug" in proc.stderr and "Traceback" not in proc.stderr


def test_proposal_errors_name_files_by_their_path_in_the_repository(repo):
    """A context file over the size proposals read: the error names it relative to the root."""
    write(repo, "src/.context.yaml", "summary: x\n" + "# padding\n" * 500_000)
    operation = {"op": "replace", "path": "src/.context.yaml", "old": "summary: x", "new": "summary: y"}
    proc = run_cli("propose", "--title", "t", "--rationale", "r", "--operations", json.dumps(operation),
                   "--json", "--root", str(repo))
    payload = json.loads(proc.stdout)
    assert proc.returncode == 1 and payload["error"]["code"] == "invalid_path"
    assert payload["error"]["message"].startswith("src/.context.yaml is larger than")
    assert str(repo) not in proc.stdout and os.path.realpath(repo) not in proc.stdout
