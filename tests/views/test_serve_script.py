"""`scripts/serve` in a fresh clone: the whole set-up (venv, pip, maturin, cargo) runs before
the server, and a client on its stdout still reads protocol messages only. The clone builds
the core into this checkout's target directory (CARGO_TARGET_DIR), so only repoctx's own crate
is compiled again; pip needs PyPI (or its cache), as the first set-up does.

Slow like the wheel's test (a release build of the core: minutes on a busy machine), and gated
the same way: it runs in CI (CI=true) and locally with REPOCTX_WHEEL=1."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SchemaCheckingClient

CHECKOUT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.wheel,
    pytest.mark.skipif(not (os.environ.get("CI") or os.environ.get("REPOCTX_WHEEL")),
                       reason="builds the release core in a fresh clone (minutes): runs in CI, or with REPOCTX_WHEEL=1"),
]


@pytest.fixture
def clone(tmp_path):
    if not (CHECKOUT / ".git").exists() or not (CHECKOUT / "scripts" / "serve").is_file():
        pytest.skip("not run from a checkout of repoctx")
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(CHECKOUT), str(target)], check=True)
    for script in ("serve", "dev-setup"):  # what is on disk here, committed or not
        shutil.copy2(CHECKOUT / "scripts" / script, target / "scripts" / script)
    return target


@pytest.mark.anyio
async def test_scripts_serve_from_a_fresh_clone_gives_a_clean_initialize(clone, tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("print('hi')\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {**os.environ, "CARGO_TARGET_DIR": os.environ.get("CARGO_TARGET_DIR", str(CHECKOUT / "target"))}
    env.pop("VIRTUAL_ENV", None)
    unparsed: list[Exception] = []  # stdout lines that are not JSON-RPC reach the client as exceptions

    async def on_message(message) -> None:
        if isinstance(message, Exception):
            unparsed.append(message)

    params = StdioServerParameters(command=str(clone / "scripts" / "serve"), args=[], env=env, cwd=str(repo / "src"))
    with open(tmp_path / "stderr.log", "w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=900,
                          message_handler=on_message) as raw:
            report = (await SchemaCheckingClient(raw).call_tool("ctxt_self_report", {})).structured_content
        errlog.seek(0)
        said = errlog.read()
    assert unparsed == []
    assert report["root"] == str(repo.resolve())
    assert "repoctx set-up:" in said and f"serving {repo.resolve()}" in said
    assert (clone / ".venv" / "bin" / "repoctx").exists()
