"""Answers that point the right way (issue 30, item 5): what the CLI tells a person says what
they can do, on stderr when it is an error, and `--json` keeps its one document on stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli, write
from sample_repo import write_context


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    write(root, "src/app.py", "def ship_order():\n    return 1\n" * 800)  # eligible: over min_tokens
    write(root, "lib/util.py", "def parse_rate():\n    return 2\n" * 800)
    write_context(root, "src", "The app.")
    write_context(root, "lib", "Helpers.")
    return root


def cli(root: Path, *args: str):
    return run_cli(*args, "--root", str(root))


def test_a_newer_schema_version_says_what_the_user_can_do(repo):
    path = repo / "lib/.context.yaml"
    path.write_text(path.read_text().replace("version: 1", "version: 2"))
    for args in (["check", "lib"], ["show", "lib"], ["status"], ["update", "lib", "--fields", '{"summary": "x"}']):
        proc = cli(repo, *args)
        said = proc.stdout + proc.stderr
        assert "pip install" not in said, args  # no release reads version 2: upgrading cannot help
        assert "set `version: 1` if the file follows it, or remove the file and run `repoctx init`" in said, args


def test_a_bad_repoctx_config_is_an_error_and_the_warning_says_so(repo):
    write(repo, ".repoctx/config.yaml", "tokenizer: nope\n")
    for args in (["capabilities"], ["context", "ship the order"]):
        proc = cli(repo, *args)
        assert proc.returncode == 1, args
        assert "defaults apply" not in proc.stderr, args  # not a warning that contradicts the failure
        assert "commands that read it fail until it is fixed" in proc.stderr, args
        assert "Invalid enum value 'nope'" in proc.stderr and proc.stdout == "", args
    code, answer = json.loads(cli(repo, "context", "ship the order", "--json").stdout)["error"]["code"], None
    assert code == "config_error" and answer is None


def test_check_of_a_directory_that_does_not_exist_says_so(repo):
    proc = cli(repo, "check", "crates/nonexistent")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "crates/nonexistent is not a directory in the repository" in proc.stderr
    assert "min_tokens" not in proc.stderr and "list_contexts" not in proc.stderr
    # An existing directory without a file is told how to get one.
    write(repo, "docs/readme.md", "x\n")
    assert "`repoctx init` writes them" in cli(repo, "check", "docs").stderr
    # The contract's words stay in the JSON, the MCP answer.
    data = json.loads(cli(repo, "check", "crates/nonexistent", "--json").stdout)
    assert data["state"] == "missing" and data["error"].startswith('No .context.yaml found at scope "crates/nonexistent"')


def test_cache_build_from_a_missing_directory_names_it_on_stderr(repo):
    proc = run_cli("cache", "build", "--sources", "nodir", "--cache", "docs", cwd=repo)  # relative to where it runs
    assert proc.returncode != 0 and proc.stdout == ""
    assert f"Sources directory nodir ({repo.resolve() / 'nodir'}) does not exist" in proc.stderr
    assert "pass --sources with the directory of the documents" in proc.stderr


@pytest.mark.parametrize("args", [["context", " "], ["cache", "build", "--sources", "nodir", "--cache", "d"],
                                  ["artifacts", "show", "SPEC-1"]])
def test_errors_go_to_stderr_and_json_keeps_one_document_on_stdout(repo, args):
    people = cli(repo, *args)
    assert people.returncode != 0 and people.stdout == "" and people.stderr.strip()
    machine = cli(repo, *args, "--json")
    assert machine.returncode == people.returncode
    json.loads(machine.stdout)  # one JSON document, nothing else


def test_a_listing_with_failed_checks_is_an_answer_on_stdout(repo):
    (repo / "lib/.context.yaml").unlink()
    proc = cli(repo, "status", "--check")
    assert proc.returncode == 1 and "lib" in proc.stdout and "check failed" in proc.stdout


def corrupt(repo: Path) -> None:
    write(repo, "src/.context.yaml", "version: 1\nsummary: [unclosed\n")


def test_a_corrupt_context_file_is_invalid_everywhere(repo):
    corrupt(repo)
    status = json.loads(cli(repo, "status", "--json", "--check").stdout)
    entry = next(e for e in status["entries"] if e["scope"] == "src")
    assert entry["state"] == "invalid" and entry["has_context"] is False and entry["invalid"]["line"] == 3
    assert status["check"] == {"passed": False, "fresh": 1, "stale": 0, "missing": 1, "invalid": 1}
    only = json.loads(cli(repo, "status", "--json", "--state", "invalid").stdout)
    assert [e["scope"] for e in only["entries"]] == ["src"]
    check = json.loads(cli(repo, "check", "src", "--json").stdout)
    assert check["state"] == "invalid" and check["error"] == 'Invalid or corrupt .context.yaml at scope "src"'
    report = json.loads(cli(repo, "report", "--out", "-", "--json").stdout)
    assert report["invalid"] == 1 and report["missing"] == 1


@pytest.mark.anyio
async def test_the_contracts_words_are_there_for_a_client_that_asks(repo):
    corrupt(repo)
    async with mcp_client("--root", str(repo)) as client:
        listed = (await client.call_tool("list_contexts", {})).content[0].text
        assert {e["scope"]: e["state"] for e in json.loads(listed)["entries"]}["src"] == "invalid"
    async with mcp_client("--root", str(repo), "--names", "contract") as client:
        entries = json.loads((await client.call_tool("list_contexts", {})).content[0].text)["entries"]
        src = next(e for e in entries if e["scope"] == "src")
        assert src["state"] == "missing" and src["invalid"]["line"] == 3  # dotcontext's state, and why
        missing = json.loads((await client.call_tool("list_contexts", {"state": "missing"})).content[0].text)
        assert "src" in [e["scope"] for e in missing["entries"]]
        checked = await client.call_tool("check_freshness", {"scope": "src"})
        assert checked.is_error and checked.structured_content["state"] == "missing"
    write(repo, ".repoctx/config.yaml", "names: contract\n")  # the CLI follows the repository's choice
    assert json.loads(cli(repo, "check", "src", "--json").stdout)["state"] == "missing"


def test_a_broken_project_file_is_named_once_by_context(repo):
    write(repo, ".repoctx/project.yaml", "version: 1\nmodules: [\n")
    proc = cli(repo, "context", "ship the order")
    assert proc.returncode == 0
    warned = [line for line in proc.stderr.splitlines() if ".repoctx/project.yaml" in line]
    assert len(warned) == 1 and "left out of the task context until it is fixed" in warned[0]
    assert ".repoctx/project.yaml" not in cli(repo, "status").stderr  # only the command that reads it says it


@pytest.mark.parametrize(("config", "said"), [
    ("min_tokens: many\n", "min_tokens must be an integer; its default applies until the file is fixed"),
    ("min_tokens: many\nmax_depth: 0\n",
     "min_tokens must be an integer, max_depth must be a positive integer; their defaults apply until the file is fixed"),
])
def test_scan_config_warnings_agree_in_number(repo, config, said):
    write(repo, ".context.config.yaml", config)
    assert f"repoctx: warning: .context.config.yaml: {said}\n" in cli(repo, "status").stderr
