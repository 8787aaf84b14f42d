"""Details a context-engine client relies on (issue 19): an unreadable manifest answers
io_error (exit 6) before any other check, and `inspect_cache.total_bytes` over MCP counts
what the engine's MCP server counts while the CLI keeps the fixtures' count."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli, shared_path

FIXTURE_CACHES = ("reference", "context-engine", "compat", "fixtures", "v0", "caches")
IO_ERROR = '{"error":{"code":"io_error","message":"I/O error occurred"}}\n'

# The CLI, with every open of a file named manifest.json failing as a permission error would
# (the tests run as root, for whom a chmod does not make a file unreadable).
UNREADABLE_MANIFEST = """
import errno, os, sys
from repoctx.views.cli import main

real_open = os.open

def open_(path, *args, **kw):
    if os.fsdecode(path).endswith("manifest.json"):
        raise PermissionError(errno.EACCES, "Permission denied", path)
    return real_open(path, *args, **kw)

os.open = open_
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture
def root(tmp_path) -> Path:
    """A copy of the reference's fixture caches."""
    copy = tmp_path / "caches"
    shutil.copytree(shared_path(*FIXTURE_CACHES), copy, symlinks=True)
    return copy


def cli_unreadable_manifest(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", UNREADABLE_MANIFEST, *args, "--json", "--cache-root", str(root)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("damage", ["none", "index.json", "documents"])
def test_an_unreadable_manifest_is_io_error_before_any_other_check(root, damage):
    """The engine reads the manifest first; a cache that also misses its index or its documents
    is still io_error, not cache_invalid."""
    cache = root / "minimal"
    if damage == "index.json":
        (cache / "index.json").unlink()
    elif damage == "documents":
        shutil.rmtree(cache / "documents")
    for args in (["resolve", "--cache", "minimal", "--query", "x", "--budget", "10"],
                 ["cache", "inspect", "--cache", "minimal"]):
        proc = cli_unreadable_manifest(root, *args)
        assert (proc.returncode, proc.stdout) == (6, IO_ERROR), (args, proc.stderr)
    # Readable, the same damage is cache_invalid (exit 5) for resolve.
    proc = run_cli("resolve", "--cache", "minimal", "--query", "x", "--budget", "10", "--json",
                   "--cache-root", str(root))
    assert proc.returncode == (0 if damage == "none" else 5)


def directory_bytes(cache: Path) -> int:
    return sum(p.lstat().st_size for p in cache.iterdir() if p.is_file() and not p.is_symlink())


@pytest.mark.anyio
async def test_total_bytes_over_mcp_sums_the_cache_directorys_own_files(root):
    cache = root / "realistic"
    (cache / "notes.txt").write_text("a file beside the manifest counts\n")
    os.symlink(cache / "manifest.json", cache / "link.json")  # a symlink does not
    (cache / "sub").mkdir()
    (cache / "sub/deep.txt").write_text("nor does a file below the directory\n")
    documents = sum(p.stat().st_size for p in (cache / "documents").iterdir())
    own = directory_bytes(cache)
    assert own == sum((cache / n).stat().st_size for n in ("manifest.json", "index.json", "notes.txt"))

    cli = run_cli("cache", "inspect", "--cache", "realistic", "--json", "--cache-root", str(root), check=True)
    assert json.loads(cli.stdout)["total_bytes"] == documents  # the CLI: as the fixture's golden
    as_mcp = run_cli("cache", "inspect", "--cache", "realistic", "--total-bytes-of", "directory", "--json",
                     "--cache-root", str(root), check=True)
    async with mcp_client("--cache-root", str(root), "--profile", "caches") as client:
        result = await client.call_tool("context_inspect_cache", {"cache": "realistic"})
    assert result.is_error is False
    assert json.loads(result.content[0].text) == {**json.loads(cli.stdout), "total_bytes": own}
    assert result.content[0].text == as_mcp.stdout  # one tool, one command line
