"""Test-fixture and snapshot directories are no scopes by default (issue 22): `init` writes
no context there, and `status` and MCP `list_contexts` agree; `include_fixtures: true` in
`.context.config.yaml` makes them scopes again, through the same doors (the serving
process follows the change without a restart)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli, write

CODE = ["src", "src/snapshots", "pkg/fixtures"]  # real code: these names only count inside tests
FIXTURES = [
    "tests/fixtures", "tests/fixtures/case1", "resources/test/fixtures/rules",  # ruff's shape
    "tests/unit/snapshots", "tests/golden", "spec/fixtures",
    "web/__snapshots__", "web/__fixtures__", "go/testdata", "lib/test_data",
]


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    for d in CODE + FIXTURES:
        write(root, f"{d}/f.py", "x = 1\n")
    write(root, ".context.config.yaml", "min_tokens: 0\n")
    return root


def status_scopes(root: Path) -> set[str]:
    out = run_cli("status", "--json", "--root", str(root))
    return {e["scope"] for e in json.loads(out.stdout)["entries"]}


async def listed_scopes(client) -> set[str]:
    result = await client.call_tool("list_contexts", {})
    return {e["scope"] for e in json.loads(result.content[0].text)["entries"]}


def with_context(root: Path) -> set[str]:
    return {str(p.parent.relative_to(root)) for p in root.rglob(".context.yaml")}


@pytest.mark.anyio
async def test_fixture_dirs_are_left_out_by_default_and_included_with_the_switch(repo):
    out = run_cli("init", "--quiet", "--root", str(repo))
    assert out.returncode == 0, out.stdout + out.stderr
    written = with_context(repo)
    assert set(CODE) <= written and not written & set(FIXTURES)
    assert status_scopes(repo) == written
    async with mcp_client("--root", str(repo)) as client:
        assert await listed_scopes(client) == written

        write(repo, ".context.config.yaml", "min_tokens: 0\ninclude_fixtures: true\n")
        assert set(FIXTURES) <= await listed_scopes(client)
    assert set(FIXTURES) <= status_scopes(repo)
    assert run_cli("init", "--quiet", "--root", str(repo)).returncode == 0
    assert set(FIXTURES) <= with_context(repo)


def test_a_negation_in_the_config_takes_back_one_fixture_dir(repo):
    write(repo, ".context.config.yaml", 'min_tokens: 0\nignore: ["!go/testdata/"]\n')
    assert "go/testdata" in status_scopes(repo)
    assert "tests/fixtures" not in status_scopes(repo)


def test_a_switch_that_is_not_a_boolean_is_named(repo):
    write(repo, ".context.config.yaml", "min_tokens: 0\ninclude_fixtures: yes please\n")
    out = run_cli("status", "--root", str(repo))
    assert "include_fixtures must be true or false" in out.stderr
    assert "tests/fixtures" not in status_scopes(repo)  # the default holds meanwhile
