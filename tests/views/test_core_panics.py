"""A panic of the Rust core (PanicException, a BaseException) is answered as an internal error
by every surface, as any other unexpected failure is: the server answers it and serves on, the
CLI reports it as an unexpected error, and the prompt hook lets the prompt go on; a served index
whose update panicked is built again by the next question, not kept poisoned. The panic is
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


# The served index as a panic in its update leaves it: the core's lock is poisoned, so every
# later use of that index panics too.
POISONS = '''\
from repoctx import _core
from repoctx.base import task_index


class _Poisoned:
    def __init__(self, index):
        self._index, self._poisoned = index, False

    def update(self, *args):
        self._poisoned = True
        raise _core.PanicException("a panic forced by the test")

    def __getattr__(self, name):
        if self._poisoned:
            raise _core.PanicException("poisoned lock")
        return getattr(self._index, name)


_build = task_index._build
task_index._build = lambda *args: _Poisoned(_build(*args))
'''


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


def with_site(tmp_path, code: str) -> dict[str, str]:
    """The environment of a repoctx process that runs `code` as its sitecustomize."""
    hooks = tmp_path / "site"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(code)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))}


@pytest.fixture
def panicking(tmp_path) -> dict[str, str]:
    """The environment of a repoctx process whose task index panics when built."""
    return with_site(tmp_path, PANICS)


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


@pytest.mark.anyio
async def test_a_served_index_whose_update_panicked_is_built_again_not_kept(repo, tmp_path):
    task = {"task": "fix the orders total"}
    async with mcp_client("--root", str(repo), env=with_site(tmp_path, POISONS)) as client:
        first = await client.call_tool("task_context", task)
        assert not first.is_error, first.content[0].text
        (repo / "src/core/orders.py").write_text("def total(order):\n    return order.total * 2\n")
        failed = await client.call_tool("task_context", task)
        assert failed.is_error and "(PanicException)" in failed.content[0].text, failed.content[0].text
        again = await client.call_tool("task_context", task)
        assert not again.is_error, again.content[0].text
    assert [f["path"] for f in again.structured_content["files"]][:1] == ["src/core/orders.py"]


TOO_BIG = '''\
import errno

from repoctx.base import task_index


def _made(ws):
    raise OSError(errno.EFBIG, "the task index is over 4 GiB of lists: this tree is too big for task context")


task_index._made = _made
'''


def test_a_tree_past_the_cores_limits_is_refused_in_the_cores_words(repo, tmp_path):
    done = subprocess.run([*REPOCTX, "context", "fix the orders total", "--json", "--root", str(repo)],
                          env=with_site(tmp_path, TOO_BIG), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["error"] == {
        "code": "io_error", "message": "The task index is over 4 GiB of lists: this tree is too big for task context"}


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
