"""Answers a person can act on (issue 22): what is wrong, where, and what to do next, in the
CLI's human view; the contracts' JSON stays as the contracts fix it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli, write

CACHE_MISSING = '{"error":{"code":"cache_missing","message":"Cache does not exist"}}\n'


# --- caches ---------------------------------------------------------------------------------


@pytest.fixture
def repo_with_cache(tmp_path) -> Path:
    repo = tmp_path / "repo"
    write(repo, "docs/guide.md", "# Guide\nhow to deploy\n")
    run_cli("cache", "build", "--sources", str(repo / "docs"), "--cache", "docs", "--root", str(repo), check=True)
    return repo


def test_a_missing_cache_names_itself_the_cache_root_and_the_command_that_builds_it(repo_with_cache):
    repo = repo_with_cache
    people = run_cli("resolve", "--cache", "api", "--query", "x", "--budget", "9", cwd=repo)
    assert people.returncode == 4
    assert json.loads(people.stdout) == json.loads(CACHE_MISSING)  # the error object itself is the contract's
    assert people.stderr == ("repoctx: Cache `api` does not exist under .repoctx/caches; build it with "
                             "`repoctx cache build --sources DIR --cache api` (`repoctx cache list` lists the caches there)\n")
    machine = run_cli("resolve", "--cache", "api", "--query", "x", "--budget", "9", "--json", cwd=repo)
    assert (machine.returncode, machine.stdout, machine.stderr) == (4, CACHE_MISSING, "")
    inspect = run_cli("cache", "inspect", "--cache", "api", cwd=repo)
    assert "Cache `api` does not exist under .repoctx/caches" in inspect.stderr


def test_a_missing_cache_root_is_named_as_given(tmp_path):
    given = tmp_path / "no-caches-here"
    (tmp_path / "repo").mkdir()
    proc = run_cli("cache", "list", "--cache-root", str(given), "--root", str(tmp_path / "repo"))
    assert proc.returncode == 4
    assert proc.stderr == (f"repoctx: The cache root {given} does not exist; build a cache there with "
                           "`repoctx cache build --sources DIR --cache NAME`\n")


def test_a_damaged_cache_says_how_to_build_it_again(repo_with_cache):
    write(repo_with_cache, ".repoctx/caches/docs/documents/stray.json", "{}")
    proc = run_cli("resolve", "--cache", "docs", "--query", "x", "--budget", "9", cwd=repo_with_cache)
    assert proc.returncode == 5 and '"cache_invalid"' in proc.stdout
    assert "Cache `docs` under .repoctx/caches does not pass verification" in proc.stderr
    assert "`repoctx cache build --sources DIR --cache docs --force`" in proc.stderr


@pytest.mark.parametrize("budget", ["-1", str(2**63)])
def test_a_budget_error_says_what_a_valid_budget_is(repo_with_cache, budget):
    proc = run_cli("resolve", "--cache", "docs", "--query", "x", "--budget", budget, cwd=repo_with_cache)
    assert proc.returncode == 3 and '"invalid_budget"' in proc.stdout
    assert "a budget is a whole number of tokens from 0 to 9223372036854775807" in proc.stderr


@pytest.mark.anyio
async def test_mcp_cache_errors_stay_the_contracts_bytes(repo_with_cache):
    async with mcp_client("--root", str(repo_with_cache)) as client:
        missing = await client.call_tool("context_resolve", {"cache": "api", "query": "x", "budget": 9})
        assert missing.is_error and missing.content[0].text == CACHE_MISSING


def test_cache_build_repo_counts_what_it_left_out_and_lists_it_with_verbose(tmp_path):
    src = tmp_path / "src"
    write(src, "a.py", "x = 1\n")
    write(src, "b.py", "x = 1\n")  # the same content as a.py
    write(src, "blob.bin", b"\x00\x01")
    write(src, "server.pem", "key")
    write(src, "big.txt", "a" * ((1 << 20) + 1))
    build = ("cache", "build", "--sources", str(src), "--repo", "--cache-root", str(tmp_path / "caches"), "--force")
    plain = run_cli(*build, "--cache", "c", check=True)
    assert plain.stdout.splitlines()[1] == ("4 files left out: 1 binary (a NUL byte), 1 over 1 MiB, "
                                            "1 same content as another file, 1 secret-looking name (--verbose lists them)")
    verbose = run_cli(*build, "--cache", "c", "--verbose", check=True)
    assert verbose.stdout.splitlines()[2:] == [
        "  b.py: same content as another file", "  big.txt: over 1 MiB", "  blob.bin: binary (a NUL byte)",
        "  server.pem: secret-looking name"]
    data = json.loads(run_cli(*build, "--cache", "c", "--verbose", "--json", check=True).stdout)
    assert data["skipped"] == 4 and sum(data["skipped_by_reason"].values()) == 4
    assert {f["path"]: f["reason"] for f in data["skipped_files"]}["blob.bin"] == "binary (a NUL byte)"
    assert "skipped_files" not in json.loads(run_cli(*build, "--cache", "c", "--json", check=True).stdout)
    one = tmp_path / "one"
    write(one, "a.md", "alone\n")
    single = run_cli("cache", "build", "--sources", str(one), "--cache", "one", "--cache-root", str(tmp_path / "caches"),
                     check=True)
    assert single.stdout.startswith("Built cache one: 1 document (6 bytes), version sha256:")
    assert len(single.stdout.splitlines()) == 1
