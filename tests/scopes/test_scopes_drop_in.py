"""Details a dotcontext client relies on (issue 19): a valid `.context.yaml` over 1 MiB is
read and one with a UTF-8 byte-order mark too, through every door (CLI status, check,
show; MCP list_contexts, check_freshness, query_context); and a scope git calls fresh
while its fingerprints differ says so (`fresh_by: "git"`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli, write
from repoctx import _core
from repoctx.scopes import state as scope_state
from sample_repo import CONTEXT


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    write(root, "src/core/scan.py", "x = 1\n" * 4000)  # eligible: over min_tokens
    return root


def context_text(root: Path, scope: str, summary: str, extra: str = "") -> str:
    fp = _core.fingerprint(str(root / scope))
    return CONTEXT.format(fingerprint=fp, scope=scope, summary=summary) + extra


def big_files_list(n: int) -> str:
    return "files:\n" + "".join(f'  - name: "f{i:06d}.py"\n    purpose: "{"p" * 60}"\n' for i in range(n))


def cli_json(root: Path, *args: str) -> tuple[int, dict]:
    proc = run_cli(*args, "--json", "--root", str(root))
    return proc.returncode, json.loads(proc.stdout)


async def every_door(root: Path, scope: str) -> list[tuple[str, dict]]:
    """What each door answers about `scope`: the CLI's three commands, then the MCP tools."""
    answers = [
        ("status", next(e for e in cli_json(root, "status")[1]["entries"] if e["scope"] == scope)),
        ("check", cli_json(root, "check", scope)[1]),
        ("show", cli_json(root, "show", scope)[1]),
    ]
    async with mcp_client("--root", str(root)) as client:
        listed = json.loads((await client.call_tool("list_contexts", {})).content[0].text)
        answers.append(("list_contexts", next(e for e in listed["entries"] if e["scope"] == scope)))
        for tool in ("check_freshness", "query_context"):
            result = await client.call_tool(tool, {"scope": scope})
            answers.append((tool, result.structured_content))
    return answers


def assert_read(answers: list[tuple[str, dict]], summary: str) -> None:
    for door, a in answers:
        if door in ("status", "list_contexts"):
            assert (a["state"], a["has_context"], a["summary"]) == ("fresh", True, summary), door
        elif door in ("check", "check_freshness"):
            assert a["state"] == "fresh" and "error" not in a, (door, a)
        else:
            assert a["found"] is True and a["context"]["summary"] == summary, (door, a)


@pytest.mark.anyio
async def test_a_valid_context_file_over_1_mib_is_read_by_every_door(repo):
    text = context_text(repo, "src/core", "Large.", big_files_list(12_000))
    assert len(text.encode()) > 1 << 20
    (repo / "src/core/.context.yaml").write_text(text)
    answers = await every_door(repo, "src/core")
    assert_read(answers, "Large.")
    assert len(dict(answers)["show"]["context"]["files"]) == 12_000


@pytest.mark.anyio
async def test_a_byte_order_mark_is_accepted_by_every_door(repo):
    (repo / "src/core/.context.yaml").write_bytes(b"\xef\xbb\xbf" + context_text(repo, "src/core", "Marked.").encode())
    assert_read(await every_door(repo, "src/core"), "Marked.")


def test_a_context_file_over_the_bound_is_invalid_with_the_contracts_message(repo):
    path = repo / "src/core/.context.yaml"
    text = context_text(repo, "src/core", "Huge.")
    path.write_text(text + "# " + "x" * (scope_state.MAX_CONTEXT_BYTES - len(text)) + "\n")
    corrupt = 'Invalid or corrupt .context.yaml at scope "src/core"'
    code, check = cli_json(repo, "check", "src/core")
    invalid = {"reason": "larger than 16 MiB"}  # added beside the contract's fields (issue 22)
    assert (code, check) == (1, {"scope": "src/core", "state": "invalid", "error": corrupt, "invalid": invalid})
    code, show = cli_json(repo, "show", "src/core")
    assert (code, show) == (1, {"found": False, "scope": "src/core", "error": corrupt, "invalid": invalid})


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.mark.anyio
async def test_fresh_by_git_is_said_where_the_fingerprints_differ(repo):
    write(repo, "src/util/u.py", "y = 2\n" * 4000)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code")
    run_cli("init", "--quiet", "--root", str(repo), check=True)  # records the commit in evidence
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "context")
    os.utime(repo / "src/core/scan.py", ns=(10**18, 10**18))  # touched: new fingerprint, same content

    code, check = cli_json(repo, "check", "src/core")
    assert code == 0 and check["state"] == "fresh" and check["fresh_by"] == "git"
    assert check["fingerprint"]["stored"] != check["fingerprint"]["computed"]
    code, same = cli_json(repo, "check", "src/util")  # fresh by its fingerprint: no fresh_by
    assert same["state"] == "fresh" and "fresh_by" not in same
    assert "fresh, by git (stored" in run_cli("check", "src/core", "--root", str(repo), check=True).stdout
    entries = {e["scope"]: e for e in cli_json(repo, "status")[1]["entries"]}
    assert entries["src/core"]["fresh_by"] == "git" and "fresh_by" not in entries["src/util"]

    async with mcp_client("--root", str(repo)) as client:
        result = await client.call_tool("check_freshness", {"scope": "src/core"})
        listed = json.loads((await client.call_tool("list_contexts", {})).content[0].text)
    assert result.is_error is False and result.structured_content == check
    assert {e["scope"]: e for e in listed["entries"]} == entries
