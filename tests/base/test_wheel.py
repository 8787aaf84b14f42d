"""`maturin build --release` gives a wheel that installs into a fresh virtualenv and works:
`repoctx --version`, `repoctx status --json` on a sample repository (the same JSON as this
checkout prints), and one MCP call through the official client.

Slow (a release build of the Rust core, then an install: minutes): it runs in CI (CI=true) and
locally with REPOCTX_WHEEL=1 (`REPOCTX_WHEEL=1 scripts/test -m wheel` runs it alone); the
everyday test command leaves it out, saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from repoctx import __version__
from sample_repo import build_sample_repo

CHECKOUT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.wheel,
    pytest.mark.skipif(not (os.environ.get("CI") or os.environ.get("REPOCTX_WHEEL")),
                       reason="builds a release wheel (minutes): runs in CI, or locally with REPOCTX_WHEEL=1"),
    pytest.mark.skipif(not (CHECKOUT / "Cargo.toml").is_file(), reason="not a source checkout"),
]


def _maturin() -> str:
    found = shutil.which("maturin", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found is None:
        pytest.skip("maturin is not installed (pip install maturin)")
    return found


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    # The target directory scripts/dev-setup's release build filled: the same crates, so the wheel
    # is packed from them, not compiled a second time.
    subprocess.run([_maturin(), "build", "--release", "--quiet", "--out", str(base / "dist")], cwd=CHECKOUT,
                   check=True, capture_output=True, timeout=1800)
    [wheel] = (base / "dist").glob("repoctx-*.whl")
    assert "abi3" in wheel.name
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "--quiet", str(wheel)], check=True,
                   capture_output=True, timeout=900)
    return venv


def test_the_wheel_installs_and_answers(wheel_venv, tmp_path):
    repoctx = str(wheel_venv / "bin/repoctx")
    version = subprocess.run([repoctx, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"repoctx {__version__}"
    # It is the installed package that answers, not this checkout.
    where = subprocess.run([str(wheel_venv / "bin/python"), "-c", "import repoctx, repoctx._core; print(repoctx.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path)
    assert str(wheel_venv) in where.stdout
    # The checkout's own tools stay in it: docgen is scripts/docgen.py, not a module of the wheel.
    assert not (Path(where.stdout.strip()).parent / "docgen.py").exists()
    repo = build_sample_repo(tmp_path / "repo")
    status = subprocess.run([repoctx, "status", "--json", "--root", str(repo)], capture_output=True, text=True)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout) == json.loads(run_cli("status", "--json", "--root", str(repo)).stdout)
    # The packaged data files are there too: the report's page template.
    report = subprocess.run([repoctx, "report", "--root", str(repo), "--out", "-"], capture_output=True, text=True)
    assert report.returncode == 0 and report.stdout.startswith("<!doctype html>")


@pytest.mark.anyio
async def test_the_wheel_serves_mcp(wheel_venv, tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    repo = build_sample_repo(tmp_path / "repo")
    params = StdioServerParameters(command=str(wheel_venv / "bin/repoctx"), args=["serve", "--root", str(repo)])
    async with Client(params, mode="2026-07-28") as client:
        result = await client.call_tool("check_freshness", {"scope": "src/core"})
    assert not result.is_error
    assert json.loads(result.content[0].text)["state"] == "fresh"
