"""Shared fixtures: temporary repositories, the CLI as a subprocess, and an MCP
client talking to `repoctx serve` over a real stdio pipe."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SHARED = TESTS.parents[1] / "shared"
REPOCTX = [sys.executable, "-m", "repoctx"]
DEEP = os.environ.get("REPOCTX_DEEP") == "1"
# The user's state place (the session databases, project/store.py) of this run alone, for this
# process and every server and CLI it starts: never the person's own, and never one an earlier
# run left (the same temporary roots would meet its databases).
STATE_HOME = tempfile.mkdtemp(prefix="repoctx-state-")
os.environ["LOCALAPPDATA" if sys.platform == "win32" else "XDG_STATE_HOME"] = STATE_HOME
atexit.register(shutil.rmtree, STATE_HOME, True)
# Seconds to wait after writing files before a listing takes them as settled: past the racy
# window (rust/tree/os.rs RACY_NS, 2 s), inside which a file just changed is read again rather
# than trusted by its stat key (nor saved in the task index).
SETTLE = 2.05
# Test files that need what Windows lacks, and why: they skip there (wheels.yml runs the suite).
POSIX_ONLY = {
    "control/test_write_transactions.py": "kills apply under strace and races it in forked processes",
    "hostile/test_crash_safety.py": "kills writers with SIGKILL, forked",
    "hostile/test_concurrency_stress.py": "runs its writers in forked processes",
    "base/test_clean_repository.py": "sets the umask through sh and reads POSIX file modes",
}


def pytest_collection_modifyitems(config, items):
    if sys.platform != "win32":
        return
    for item in items:
        why = POSIX_ONLY.get(item.path.relative_to(TESTS).as_posix())
        if why:
            item.add_marker(pytest.mark.skip(reason=f"POSIX only: {why}"))


def mkfifo(path: str | os.PathLike) -> None:
    """A FIFO at `path`; where the OS has none (Windows) the test is skipped, saying so."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs are POSIX: Windows has none in its file system")
    os.mkfifo(path)


NOT_A_FILE = ("directory", "fifo", "huge sparse file")


def put_not_a_file(path: Path, kind: str, cap: int) -> None:
    """Where a file of at most `cap` bytes belongs, one of NOT_A_FILE: a directory (not empty),
    a FIFO, or a sparse file one byte over the cap (refused by its size, unread)."""
    if kind == "directory":
        path.mkdir()
        (path / "inside").write_text("x")
    elif kind == "fifo":
        mkfifo(path)
    else:
        with open(path, "wb") as f:
            f.truncate(cap + 1)


def how_deep(name: str, everyday: int, deep: int) -> int:
    """How far a deep test goes (kills, races, generated inputs): the variable `name` when set,
    else `deep` under REPOCTX_DEEP=1 (.ci/run sets it), else `everyday` (scripts/test)."""
    return int(os.environ.get(name) or (deep if DEEP else everyday))


@pytest.fixture(autouse=True, scope="session")
def _private_cache_home(tmp_path_factory):
    """repoctx keeps memos in the user's cache directory: tests, and the processes they start,
    use one of their own so they neither read the developer's nor leave files behind."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))


@pytest.fixture(autouse=True, scope="session")
def _private_relay_place():
    """Every server a test starts offers the prompt hook's relay in the user's per-user place
    (views/relay_place.py): on POSIX tests use one of their own, short (a socket's path is
    capped), and remove it. (Windows' is LOCALAPPDATA, which node's tools read too: left as it is.)"""
    import shutil
    import tempfile

    place = tempfile.mkdtemp(prefix="rr")
    os.environ["XDG_RUNTIME_DIR"] = place
    yield
    shutil.rmtree(place, ignore_errors=True)


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the test when ../shared is not beside the clone."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the reference fixtures in ../shared are not beside this clone")
    return path


def run_as_script(*args: str, **kwargs) -> subprocess.Popen | subprocess.CompletedProcess:
    """Run a test file as a script in a fresh process (`args[0]` its __file__), with the shared
    helpers here (sample_repo, …) importable as they are under pytest. `popen=True` starts it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    if kwargs.pop("popen", False):
        return subprocess.Popen([sys.executable, *args], env=env, **kwargs)
    return subprocess.run([sys.executable, *args], env=env, **kwargs)


def served_lines(root: Path | str, lines: list[str], done: Callable[[list[dict]], bool]) -> list[dict]:
    """Send raw `lines` to `repoctx serve --root root` on stdin and read its messages until
    `done(messages)` holds; a watchdog turns a request never answered into a failure, not a hang."""
    proc = subprocess.Popen([*REPOCTX, "serve", "--root", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(line + "\n" for line in lines))
        proc.stdin.flush()
        messages: list[dict] = []
        while not done(messages):
            line = proc.stdout.readline()
            assert line, f"the server closed stdout after {len(messages)} messages"
            message = json.loads(line)  # stdout carries protocol messages only
            assert message["jsonrpc"] == "2.0"
            messages.append(message)
        return messages
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()


def answered(wait_for: list) -> Callable[[list[dict]], bool]:
    """For served_lines: done once every id in `wait_for` has an answer."""
    return lambda messages: set(wait_for) <= {m.get("id") for m in messages}


def write(root: Path, rel: str, text: str | bytes = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def git_history(root: Path, commits: list[dict[str, str]]) -> None:
    """A git repository at `root` with one commit a mapping of files written (path: text)."""
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    for n, files in enumerate(commits):
        for rel, text in files.items():
            write(root, rel, text)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", f"change {n}"], check=True)


def snapshot(directory: Path) -> dict[str, bytes | str]:
    """Every entry below `directory` (links not followed): a file's bytes, "dir" or "link"; to
    assert that nothing was written there."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            rel = str(p.relative_to(directory))
            out[rel] = "link" if p.is_symlink() else "dir" if p.is_dir() else p.read_bytes()
    return out


def run_cli(*args: str, cwd: Path | str | None = None, check: bool = False) -> subprocess.CompletedProcess:
    proc = subprocess.run([*REPOCTX, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"repoctx {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@asynccontextmanager
async def mcp_client(*serve_args: str, mode: str = "2026-07-28", env: dict | None = None, **client_options):
    """An official-SDK client connected to `repoctx serve …` in a subprocess, checking every tool
    result as hosts on the TypeScript SDK do (SchemaCheckingClient)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "repoctx", "serve", *serve_args],
        env={**os.environ, **(env or {})},
    )
    async with Client(params, mode=mode, **client_options) as client:
        yield SchemaCheckingClient(client)


class SchemaCheckingClient:
    """The Python SDK's client, but every tool result is held to the tool's output schema the
    way the TypeScript SDK holds it (errors included): structured content must validate, and a
    successful result of a tool with an output schema must carry it. The Python client checks
    less, which once let error results through that TypeScript hosts reject."""

    def __init__(self, client) -> None:
        self._client = client
        self._schemas: dict | None = None

    def __getattr__(self, name):
        return getattr(self._client, name)

    async def call_tool(self, name: str, arguments: dict | None = None, *args, **kwargs):
        import jsonschema

        result = await self._client.call_tool(name, arguments, *args, **kwargs)
        if self._schemas is None:
            tools = (await self._client.list_tools()).tools
            self._schemas = {t.name: t.output_schema for t in tools}
        schema = self._schemas.get(name)
        if schema is not None:
            if result.structured_content is not None:
                jsonschema.Draft7Validator(schema).validate(result.structured_content)
            else:
                assert result.is_error, f"{name} has an output schema but returned no structured content"
        return result


@pytest.fixture
def anyio_backend():
    return "asyncio"
