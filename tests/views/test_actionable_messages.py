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
    assert people.returncode == 4 and people.stdout == ""  # an error: on stderr, for a person
    error, advice = people.stderr.rsplit("\n", 2)[0], people.stderr.rsplit("\n", 2)[1]
    assert json.loads(error) == json.loads(CACHE_MISSING)  # the error object itself is the contract's
    assert advice == ("repoctx: Cache `api` does not exist under .repoctx/caches; build it with "
                      "`repoctx cache build --sources DIR --cache api` (`repoctx cache list` lists the caches there)")
    machine = run_cli("resolve", "--cache", "api", "--query", "x", "--budget", "9", "--json", cwd=repo)
    assert (machine.returncode, machine.stdout, machine.stderr) == (4, CACHE_MISSING, "")
    inspect = run_cli("cache", "inspect", "--cache", "api", cwd=repo)
    assert "Cache `api` does not exist under .repoctx/caches" in inspect.stderr


def test_a_missing_cache_root_is_named_as_given(tmp_path):
    given = tmp_path / "no-caches-here"
    (tmp_path / "repo").mkdir()
    proc = run_cli("cache", "list", "--cache-root", str(given), "--root", str(tmp_path / "repo"))
    assert proc.returncode == 4
    assert proc.stderr.endswith(f"\nrepoctx: The cache root {given} does not exist; build a cache there with "
                                "`repoctx cache build --sources DIR --cache NAME`\n")


def test_a_damaged_cache_says_how_to_build_it_again(repo_with_cache):
    write(repo_with_cache, ".repoctx/caches/docs/documents/stray.json", "{}")
    proc = run_cli("resolve", "--cache", "docs", "--query", "x", "--budget", "9", cwd=repo_with_cache)
    assert proc.returncode == 5 and '"cache_invalid"' in proc.stderr
    assert "Cache `docs` under .repoctx/caches does not pass verification" in proc.stderr
    assert "`repoctx cache build --sources DIR --cache docs --force`" in proc.stderr


@pytest.mark.parametrize("budget", ["-1", str(2**63)])
def test_a_budget_error_says_what_a_valid_budget_is(repo_with_cache, budget):
    proc = run_cli("resolve", "--cache", "docs", "--query", "x", "--budget", budget, cwd=repo_with_cache)
    assert proc.returncode == 3 and '"invalid_budget"' in proc.stderr
    assert "a budget is a whole number of tokens from 0 to 9223372036854775807" in proc.stderr
    help_text = " ".join(run_cli("resolve", "--help").stdout.split())
    assert "--budget BUDGET Maximum tokens of the selected documents, a whole number from 0 to 2^63-1" in help_text


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


# --- a context file that exists but cannot be used ------------------------------------------

BROKEN = "version: 1\nsummary: fine\n  scope: src\n"  # line 3: a key indented under a scalar
WHERE = {"reason": "mapping values are not allowed in this context", "line": 3, "column": 8}


@pytest.fixture
def scopes_repo(tmp_path) -> Path:
    """Four eligible scopes: `.` and lib with valid context files, src with broken YAML, docs without one."""
    repo = tmp_path / "repo"
    for d in ("src", "lib", "docs"):
        write(repo, f"{d}/m.py", "x = 1\n" * 3000)
    run_cli("init", "--quiet", "--root", str(repo), check=True)
    (repo / "docs/.context.yaml").unlink()
    write(repo, "src/.context.yaml", BROKEN)
    return repo


def test_status_and_check_call_a_broken_file_invalid_with_file_line_and_column(scopes_repo):
    status = run_cli("status", "--root", str(scopes_repo))
    assert "  ✗ src   invalid (src/.context.yaml:3:8: mapping values are not allowed in this context)" in status.stdout
    assert "  ✗ docs  missing" in status.stdout
    assert status.stdout.splitlines()[-1] == "4 scopes: 2 fresh, 0 stale, 1 missing, 1 invalid (0 directories below min_tokens)"
    check = run_cli("check", "src", "--root", str(scopes_repo))
    assert (check.returncode, check.stdout) == (1, "")  # an error: on stderr
    assert check.stderr == "src: invalid (src/.context.yaml:3:8: mapping values are not allowed in this context)\n"
    show = run_cli("show", "src", "--root", str(scopes_repo))
    assert show.stderr == check.stderr


def test_the_json_keeps_the_contracts_fields_and_adds_where(scopes_repo):
    """--json is the MCP answer: state invalid, has_context false and the contract's error text,
    with `invalid` beside them saying why; a scope with no file is missing, with no `invalid`."""
    entries = {e["scope"]: e for e in json.loads(run_cli("status", "--json", "--root", str(scopes_repo)).stdout)["entries"]}
    assert entries["src"] == {"scope": "src", "state": "invalid", "has_context": False, "invalid": WHERE}
    assert entries["docs"] == {"scope": "docs", "state": "missing", "has_context": False}
    check = json.loads(run_cli("check", "src", "--json", "--root", str(scopes_repo)).stdout)
    assert check == {"scope": "src", "state": "invalid",
                     "error": 'Invalid or corrupt .context.yaml at scope "src"', "invalid": WHERE}


@pytest.mark.anyio
async def test_mcp_clients_get_the_contracts_answers_and_where(scopes_repo):
    async with mcp_client("--root", str(scopes_repo)) as client:
        listed = json.loads((await client.call_tool("list_contexts", {})).content[0].text)
        assert {"scope": "src", "state": "invalid", "has_context": False, "invalid": WHERE} in listed["entries"]
        checked = await client.call_tool("check_freshness", {"scope": "src"})
        assert checked.is_error and checked.structured_content == {
            "scope": "src", "state": "invalid", "error": 'Invalid or corrupt .context.yaml at scope "src"',
            "invalid": WHERE}
        queried = await client.call_tool("query_context", {"scope": "src"})
        assert queried.structured_content["invalid"] == WHERE and queried.structured_content["found"] is False


def test_a_newer_schema_version_names_repoctx_not_another_tool(scopes_repo):
    write(scopes_repo, "lib/.context.yaml", (scopes_repo / "lib/.context.yaml").read_text().replace("version: 1", "version: 2"))
    for args in (["check", "lib"], ["show", "lib"], ["status"]):
        proc = run_cli(*args, "--root", str(scopes_repo))
        out = proc.stdout + proc.stderr
        assert ("invalid (lib/.context.yaml: schema version 2, which repoctx does not read (version 1 is the only "
                "schema): set `version: 1` if the file follows it, or remove the file and run `repoctx init` to write "
                "a new one)") in out, args
        assert "dotcontext" not in out, args
    update = run_cli("update", "lib", "--fields", '{"summary": "x"}', "--root", str(scopes_repo))
    assert "dotcontext" not in update.stdout + update.stderr and "set `version: 1`" in update.stdout + update.stderr
    # The contract fixes the MCP client's words.
    assert "Upgrade dotcontext to read this file." in run_cli("check", "lib", "--json", "--root", str(scopes_repo)).stdout


# --- filtered status ------------------------------------------------------------------------


def test_filtered_status_counts_what_it_shows(scopes_repo):
    (scopes_repo / "src/.context.yaml").unlink()
    run_cli("init", "--quiet", "--root", str(scopes_repo), check=True)  # src valid again, docs too
    write(scopes_repo, "lib/m.py", "y = 2\n" * 3000)  # lib stale
    root = ("--root", str(scopes_repo))
    stale = run_cli("status", "--state", "stale", *root).stdout.splitlines()
    assert stale == ["  ⚠ lib  stale", "1 of 4 scopes shown: 1 stale"]
    under = run_cli("status", "--under", "src", *root).stdout.splitlines()
    assert under[-1] == "1 of 4 scopes shown: 1 fresh"
    page = run_cli("status", "--limit", "2", *root).stdout.splitlines()
    assert page[-1] == "2 of 4 scopes shown: 2 fresh (4 match; next page: --cursor docs)"
    checked = run_cli("status", "--state", "fresh", "--check", *root)
    assert checked.returncode == 1
    assert checked.stdout.splitlines()[-2:] == ["3 of 4 scopes shown: 3 fresh",
                                                 "check failed for all 4 scopes: 3 fresh, 1 stale, 0 missing, 0 invalid"]


# --- words ----------------------------------------------------------------------------------


def test_a_yaml_syntax_error_in_the_scan_config_is_called_one(scopes_repo):
    write(scopes_repo, ".context.config.yaml", "min_tokens: 10\n  ignore: [x]\n")
    proc = run_cli("status", "--root", str(scopes_repo))
    assert ("repoctx: warning: .context.config.yaml:2:9: YAML syntax error: mapping values are not allowed "
            "in this context; the defaults apply until it is fixed") in proc.stderr


def test_counts_of_one_are_singular(tmp_path):
    repo = tmp_path / "repo"
    write(repo, "m.py", "x = 1\n" * 3000)
    write(repo, "tiny/t.py", "x = 1\n")
    run_cli("init", "--quiet", "--root", str(repo), check=True)
    last = run_cli("status", "--root", str(repo)).stdout.splitlines()[-1]
    assert last == "1 scope: 1 fresh, 0 stale, 0 missing (1 directory below min_tokens)"
    validate = run_cli("validate", "--root", str(repo)).stdout
    assert "1 context file valid and fresh" in validate


# --- propose --operations -------------------------------------------------------------------


def test_propose_help_shows_the_exact_form_and_an_array_is_taken_as_its_items(scopes_repo):
    help_text = " ".join(run_cli("propose", "--help").stdout.split())
    assert '{"op": "write", "path": "src/.context.yaml", "content": "..."}' in help_text
    assert '{"op": "replace", "path": "...", "old": "...", "new": "..."}' in help_text
    assert "one JSON object per --operations (repeat it for more), or a JSON array of them in one" in help_text
    first = {"op": "replace", "path": "src/.context.yaml", "old": "version: 1", "new": "version: 1"}
    second = {"op": "delete", "path": "lib/.context.yaml"}
    base = ("propose", "--title", "t", "--rationale", "r", "--json", "--root", str(scopes_repo))
    write(scopes_repo, "src/.context.yaml", (scopes_repo / "lib/.context.yaml").read_text())
    repeated = json.loads(run_cli(*base, "--operations", json.dumps(first), "--operations", json.dumps(second)).stdout)
    as_array = json.loads(run_cli(*base, "--operations", json.dumps([first, second])).stdout)
    assert repeated["ok"] and as_array["ok"], (repeated, as_array)
    assert as_array["proposal"] == repeated["proposal"]  # one proposal: the same operations, in order
    assert as_array["proposal"]["files"] == ["lib/.context.yaml", "src/.context.yaml"]


# --- generated summaries and descriptions ---------------------------------------------------


def test_generated_summaries_say_how_many_more_and_keep_sentences_whole(tmp_path):
    repo = tmp_path / "repo"
    for name in "abcde":
        write(repo, f"flat/{name}.py", "x = 1\n" * 700)
    write(repo, "tree/m.py", "x = 1\n" * 3000)
    for name in "abcdefg":
        write(repo, f"tree/{name}/m.py", "x = 1\n" * 700)
    write(repo, "pkg/__init__.py", '"""The package reads the manifest and the index,\nand answers the tools.\n\nMore."""\n'
          + "x = 1\n" * 3000)
    long = "A tool that " + " and ".join(f"does thing {i}" for i in range(12)) + "."
    assert 160 < len(long) < 300  # one sentence, longer than the 160 characters once kept
    write(repo, "pyproject.toml", f'[project]\nname = "demo"\ndescription = "{long}"\n')
    run_cli("init", "--quiet", "--root", str(repo), check=True)

    def show(scope: str) -> dict:
        return json.loads(run_cli("show", scope, "--json", "--root", str(repo), check=True).stdout)["context"]

    assert show("flat")["summary"] == "5 files (Python): a.py, b.py, c.py and 2 more."
    assert show("tree")["summary"].endswith("Subdirectories: a/, b/, c/, d/, e/ and 2 more.")
    pkg = show("pkg")
    assert pkg["files"][0]["purpose"] == "The package reads the manifest and the index, and answers the tools."
    assert pkg["summary"] == "The package reads the manifest and the index, and answers the tools."
    assert show(".")["project"]["description"] == long
    listed = json.loads(run_cli("status", "--json", "--root", str(repo)).stdout)["entries"]
    assert not [e["summary"] for e in listed if e.get("summary", "").endswith(("….", ",."))]
