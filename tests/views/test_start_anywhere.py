"""Started from a subdirectory, repoctx answers for the whole repository (found as git finds
its own: base/rootfind.py), says which root it chose and why, and writes nothing in that
subdirectory; `--root DIR` stays exact; the artifacts' project is never looked for above the root."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPOCTX, SchemaCheckingClient, snapshot, write

CODE = "def handler(request):\n    return request.body\n" * 400  # over min_tokens: every directory is a scope


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    for d in ("app", "lib", "crates/ruff", "crates/ruff/src"):
        write(root, f"{d}/code.py", CODE)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def ceiling(tmp_path) -> dict[str, str]:
    """An environment whose discovery never looks above the test's own directory."""
    return {**os.environ, "REPOCTX_CEILING_DIRECTORIES": str(tmp_path.resolve())}


def cli(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*REPOCTX, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def scopes(proc: subprocess.CompletedProcess) -> set[str]:
    assert proc.returncode in (0, 1), proc.stderr
    return {e["scope"] for e in json.loads(proc.stdout)["entries"]}


def test_status_from_a_subdirectory_answers_for_the_repository_and_writes_nothing_there(repo, tmp_path):
    sub = repo / "crates" / "ruff"
    before = snapshot(sub)
    from_sub = cli(sub, ceiling(tmp_path), "status", "--json")
    assert scopes(from_sub) == scopes(cli(repo, ceiling(tmp_path), "status", "--json"))
    assert {"app", "lib", "crates/ruff"} <= scopes(from_sub)
    assert f"root {repo.resolve()} (the nearest directory above {sub.resolve()} holding .git)" in from_sub.stderr
    assert snapshot(sub) == before


def test_root_is_exact_and_each_marker_counts(repo, tmp_path):
    sub = repo / "crates" / "ruff"
    env = ceiling(tmp_path)
    assert scopes(cli(repo, env, "status", "--json", "--root", str(sub))) == {".", "src"}
    for marker, is_dir in ((".repoctx", True), (".context.config.yaml", False), (".contextia", True)):
        path = sub / marker
        path.mkdir() if is_dir else path.write_text("min_tokens: 0\n")
        report = json.loads(cli(sub / "src", env, "self", "report", "--json").stdout)
        assert report["root"] == str(sub.resolve()), marker
        assert report["root_reason"] == f"the nearest directory above {(sub / 'src').resolve()} holding {marker}"
        path.rmdir() if is_dir else path.unlink()


def test_a_ceiling_stops_the_search_and_nothing_found_means_the_current_directory(repo, tmp_path):
    sub = repo / "crates" / "ruff"
    for var, other in (("REPOCTX_CEILING_DIRECTORIES", "GIT_CEILING_DIRECTORIES"),
                       ("GIT_CEILING_DIRECTORIES", "REPOCTX_CEILING_DIRECTORIES")):
        env = {k: v for k, v in os.environ.items() if k != other} | {var: f"/nonexistent:{repo.resolve()}"}
        report = json.loads(cli(sub, env, "self", "report", "--json").stdout)
        assert report["root"] == str(sub.resolve())
        assert report["root_reason"] == ("no .git, .repoctx, .context.config.yaml, .contextia in the current directory "
                                         f"or above it ({repo.resolve()} is a ceiling directory)")


def _params(cwd: Path, env: dict, command: str, *args: str):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=command, args=list(args), env=env, cwd=str(cwd))


async def _answers_for_the_repository(params, repo: Path) -> None:
    from mcp import Client

    async with Client(params) as raw:
        client = SchemaCheckingClient(raw)
        report = (await client.call_tool("ctxt_self_report", {})).structured_content
        assert report["root"] == str(repo.resolve()) and "holding .git" in report["root_reason"]
        listing = await client.call_tool("list_contexts", {})
        assert {"app", "lib", "crates/ruff"} <= {e["scope"] for e in json.loads(listing.content[0].text)["entries"]}


@pytest.mark.anyio
async def test_serve_from_a_subdirectory_serves_the_repository_and_writes_nothing_there(repo, tmp_path):
    sub = repo / "crates" / "ruff"
    before = snapshot(sub)
    await _answers_for_the_repository(_params(sub, ceiling(tmp_path), sys.executable, "-m", "repoctx", "serve"), repo)
    assert snapshot(sub) == before


@pytest.mark.anyio
async def test_the_server_as_install_configures_it_starts_without_path_from_a_subdirectory(repo, tmp_path):
    sub = repo / "crates" / "ruff"
    home = tmp_path / "home"
    env = {**ceiling(tmp_path), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    done = cli(sub, env, "install", "claude-code", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["path"] == str(repo.resolve() / ".mcp.json")
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["repoctx"]
    assert os.path.isabs(entry["command"]) and "." not in entry["args"]
    # Claude Code starts it where it was started itself, here the subdirectory, with its own PATH: none.
    env = {**env, "PATH": "", "CLAUDE_PROJECT_DIR": str(sub)}
    before = snapshot(sub)
    await _answers_for_the_repository(_params(sub, env, entry["command"], *entry["args"]), repo)
    assert snapshot(sub) == before


@pytest.mark.anyio
async def test_the_artifacts_project_is_never_looked_for_above_the_root(repo, tmp_path):
    from mcp import Client

    subprocess.run([*REPOCTX, "artifacts", "init", "--root", str(repo)], check=True, capture_output=True)
    subprocess.run([*REPOCTX, "artifacts", "new", "task", "--title", "Parser", "--root", str(repo)],
                   check=True, capture_output=True)
    sub = repo / "crates" / "ruff"
    before, parent = snapshot(sub), snapshot(repo / ".contextia")
    params = _params(repo, ceiling(tmp_path), sys.executable, "-m", "repoctx", "serve", "--root", str(sub),
                     "--profile", "artifacts")
    async with Client(params) as client:
        for tool, args in (("mcp_list_tasks", {}), ("mcp_write_log", {"task_id": "TASK-001", "body": "x"})):
            result = await client.call_tool(tool, args)
            assert result.is_error and result.content[0].text.startswith(f"No Contextia project found in {sub.resolve()}")
    assert snapshot(sub) == before and snapshot(repo / ".contextia") == parent


def test_serve_says_on_stderr_which_root_and_why(repo, tmp_path):
    sub = repo / "crates" / "ruff"
    for args, why in (((), f"the nearest directory above {sub.resolve()} holding .git"),
                      (("--root", "."), "given with --root")):
        proc = subprocess.run([*REPOCTX, "serve", *args], cwd=sub, env=ceiling(tmp_path), input="",
                              capture_output=True, text=True, timeout=60)
        root = repo if not args else sub
        assert proc.returncode == 0 and proc.stdout == ""
        assert f"serving {root.resolve()} ({why}) over MCP" in proc.stderr
