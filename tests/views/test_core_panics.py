"""A panic of the Rust core (PanicException, a BaseException) is answered as an internal error
by every surface, as any other unexpected failure is: the server answers it and serves on, the
CLI reports it as an unexpected error, and the prompt hook lets the prompt go on. The panic is
forced in a real `repoctx` process by a sitecustomize module that makes the task index's build
raise the core's own PanicException, where a core past its limits would panic."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import REPOCTX, mcp_client
from sample_repo import build_sample_repo

PANICS = '''\
from repoctx import _core
from repoctx.base import task_index


def _made(ws):
    raise _core.PanicException("a panic forced by the test")


task_index._made = _made
'''


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


@pytest.fixture
def panicking(tmp_path) -> dict[str, str]:
    """The environment of a repoctx process whose task index panics when built."""
    hooks = tmp_path / "panics"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(PANICS)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))}


@pytest.mark.anyio
async def test_the_server_answers_a_panic_as_an_internal_error_and_serves_on(repo, panicking):
    async with mcp_client("--root", str(repo), env=panicking) as client:
        for _ in range(2):
            failed = await client.call_tool("task_context", {"task": "fix the orders total"})
            assert failed.is_error, failed.content[0].text  # (no envelope in its contract: the message)
            assert failed.content[0].text.startswith("Internal error in `context` (PanicException)")
            assert "forced" not in failed.content[0].text  # the panic's own text stays on stderr
            fresh = await client.call_tool("check_freshness", {"scope": "src/core"})
            assert not fresh.is_error and fresh.structured_content["state"] == "fresh"


def test_the_cli_reports_a_panic_as_an_unexpected_error(repo, panicking):
    done = subprocess.run([*REPOCTX, "context", "fix the orders total", "--json", "--root", str(repo)],
                          env=panicking, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (1, ""), done.stderr  # (no envelope in its contract)
    assert "repoctx: unexpected error: a panic forced by the test" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_prompt_hook_lets_the_prompt_go_on_after_a_panic(repo, panicking):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # a repository the hook ranks in
    event = {"cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": "fix how the orders total is computed"}
    done = subprocess.run([*REPOCTX, "prompt-hook"], cwd=repo, env=panicking, input=json.dumps(event),
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert "PanicException: a panic forced by the test" in done.stderr
