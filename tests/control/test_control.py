"""The control surface black-box: the result envelope, validate --run and the runs
it records, bounded reads, schemas that describe what commands really print."""

from __future__ import annotations

import json
import sys

import jsonschema
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli, write
from repoctx.base.results import cut_utf8
from repoctx.base.workspace import Workspace
from repoctx.control import proposals
from repoctx.registry.catalog import all_commands
from sample_repo import EXAMPLES, build_sample_repo

CONTROL = [c for c in all_commands() if c.surface == "control"]


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


def cli_json(repo, *args):
    proc = run_cli(*args, "--json", "--root", str(repo))
    return proc.returncode, json.loads(proc.stdout)


# --- the envelope -------------------------------------------------------------


@pytest.mark.parametrize("args, code", [
    (["proposals", "inspect", "--id", "ffffffffffff"], "not_found"),
    (["proposals", "inspect", "--id", "../../etc/passwd"], "invalid_argument"),
    (["proposals", "validate", "--id", "nope"], "invalid_argument"),
    (["runs", "read", "--id", "20200101T000000000000Z"], "not_found"),
    (["runs", "read", "--id", "../config"], "invalid_argument"),
    (["proposals", "apply", "latest"], "invalid_argument"),  # a person names what they apply
])
def test_failures_are_structured_and_exit_non_zero(repo, args, code):
    status, out = cli_json(repo, *args)
    assert status == 1
    assert out["ok"] is False and out["command"] == " ".join(a for a in args[:2] if not a.startswith("-"))
    assert out["schema_version"] == 1 and out["error"]["code"] == code and out["error"]["message"]


def run_example(repo, cmd) -> dict:
    """The tool's example through the registry: the text `repoctx <cmd> --json` prints
    and the MCP tool returns (test_parity proves the three agree)."""
    return json.loads(cmd.encode(cmd.handler(Workspace.open(repo), cmd.parse(EXAMPLES[cmd.tool]))))


READ_ONLY_TOOLS = [c for c in CONTROL if c.tool and not c.writes]


def test_every_control_success_has_the_envelope_and_fits_its_schema(repo):
    status, doc = cli_json(repo, "schema")
    assert status == 0
    declared = {c["tool"]: c["result"] for c in doc["commands"] if c["tool"]}
    for cmd in READ_ONLY_TOOLS:
        out = run_example(repo, cmd)
        assert out["ok"] is True, (cmd.tool, out)
        assert list(out)[:3] == ["ok", "command", "schema_version"]
        assert out["command"] == cmd.name and out["schema_version"] == 1
        if cmd.tool != "ctxt_schema":
            validator(doc, declared[cmd.tool]).validate(out)


def validator(doc: dict, ref: dict):
    return jsonschema.Draft202012Validator({**ref, "$defs": doc["$defs"]})


def test_json_before_or_after_the_command(repo):
    before = run_cli("--json", "--root", str(repo), "proposals", "list")
    after = run_cli("proposals", "list", "--root", str(repo), "--json")
    assert before.stdout == after.stdout and json.loads(before.stdout)["ok"] is True


def test_no_network_and_the_roots_it_may_read(repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    proc = run_cli("capabilities", "--json", "--root", str(repo), "--allow-root", str(other), check=True)
    caps = json.loads(proc.stdout)
    assert caps["network_used"] is False
    assert caps["allowed_roots"] == [str(repo.resolve()), str(other.resolve())]


def test_self_report_names_version_root_surfaces_and_core(repo):
    from repoctx import __version__

    status, out = cli_json(repo, "self", "report")
    assert status == 0 and out["version"] == __version__ and out["root"] == str(repo.resolve())
    assert [s["name"] for s in out["surfaces"]] == ["scopes", "caches", "artifacts", "project", "tasks", "control"]
    assert {s["name"] for s in out["surfaces"] if s["has_data"]} >= {"scopes", "project", "control"}
    assert out["core"]["version"] and out["core"]["profile"] in ("debug", "release")
    assert out["watching"]["by"] == {"linux": "inotify", "darwin": "fsevents", "win32": "windows"}.get(sys.platform, "polling")


# --- validate --run and runs ------------------------------------------------------


def test_validate_run_records_a_run_that_runs_read_returns(repo):
    status, out = cli_json(repo, "validate", "--run")
    assert status == 0 and out["passed"] is True and out["recorded"] is True
    names = [c["name"] for c in out["checks"]]
    assert {"scopes.context_files", "project.file", "control.proposals", "control.config"} <= set(names)
    stale = next(c for c in out["checks"] if c["name"] == "scopes.context_files")
    assert stale["status"] == "warn" and any("src/.context.yaml" in p for p in stale["problems"])
    _, listing = cli_json(repo, "runs", "list")
    newest = listing["runs"][0]
    assert newest["command"] == "validate" and newest["status"] == "passed" and newest["steps"] == len(names)
    _, read = cli_json(repo, "runs", "read", "latest")
    assert read["id"] == newest["id"] and read["truncated"] is False
    run = json.loads(read["content"])
    assert [s["name"] for s in run["steps"]] == names
    assert all(s["duration_ms"] >= 0 for s in run["steps"]) and run["started_at"].endswith("Z")
    assert cli_json(repo, "runs", "read", "--id", newest["id"])[1] == read


def test_validate_fails_on_an_invalid_context_file_and_records_the_failure(repo):
    write(repo, "src/core/.context.yaml", "version: 1\nscope: src/core\n")
    status, out = cli_json(repo, "validate")
    assert status == 1 and out["ok"] is False and out["error"]["code"] == "validation_failed"
    bad = next(c for c in out["checks"] if c["name"] == "scopes.context_files")
    assert bad["status"] == "fail" and any(p.startswith("src/core/.context.yaml") for p in bad["problems"])
    _, listing = cli_json(repo, "runs", "list")
    assert listing["runs"][0]["status"] == "failed"
    human = run_cli("validate", "--no-run", "--root", str(repo))
    assert human.returncode == 1 and "✗ scopes.context_files" in human.stdout


def test_many_problems_are_cut_to_a_bounded_result(tmp_path):
    for i in range(130):
        write(tmp_path, f"d{i:03}/.context.yaml", "version: 1\n")
        write(tmp_path, f"d{i:03}/m.py", "x = 1\n" * 2000)
    status, out = cli_json(tmp_path, "validate", "--no-run")
    problems = next(c for c in out["checks"] if c["name"] == "scopes.context_files")["problems"]
    assert status == 1 and len(problems) == 101 and problems[-1] == "… and 30 more"


def test_a_pending_proposal_that_no_longer_applies_warns(repo):
    write(repo, "docs/.context.yaml", "someone wrote it meanwhile\n")  # the sample proposal creates it
    _, out = cli_json(repo, "validate", "--no-run")
    check = next(c for c in out["checks"] if c["name"] == "control.proposals")
    assert check["status"] == "warn" and "docs/.context.yaml" in check["problems"][0]


def test_runs_are_kept_to_the_configured_number(repo):
    write(repo, ".repoctx/config.yaml", "profile: all\nkeep_runs: 2\n")
    for _ in range(3):
        assert cli_json(repo, "validate")[0] == 0
    _, listing = cli_json(repo, "runs", "list")
    assert len(listing["runs"]) == 2 and len(list((repo / ".repoctx/runs").glob("*.json"))) == 2
    ids = [r["id"] for r in listing["runs"]]
    assert ids == sorted(ids, reverse=True)


def test_runs_read_latest_without_runs(tmp_path):
    write(tmp_path, "a.py", "x = 1\n")
    status, out = cli_json(tmp_path, "runs", "read", "latest")
    assert status == 1 and out["error"]["code"] == "not_found"
    assert cli_json(tmp_path, "runs", "list") == (0, {"ok": True, "command": "runs list", "schema_version": 1, "runs": []})


CI_MODE = [c for c in all_commands() if c.cli and {f for f in ("check", "ci") if f in c.params.__struct_fields__}
           and not c.cli.positional and c.name != "validate"]


@pytest.mark.skipif(not CI_MODE, reason="no command has a CI mode (--check/--ci) yet")
def test_a_check_in_ci_mode_is_recorded_as_a_run(repo):
    cmd = CI_MODE[0]
    flag = "--check" if "check" in cmd.params.__struct_fields__ else "--ci"
    proc = run_cli(*cmd.name.split(), flag, "--root", str(repo))
    _, listing = cli_json(repo, "runs", "list")
    assert listing["runs"][0]["command"] == cmd.name
    assert listing["runs"][0]["status"] == ("failed" if proc.returncode else "passed")


# --- bounded reads ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(), st.integers(min_value=1, max_value=64))
def test_cut_never_exceeds_the_limit_nor_splits_a_character(text, limit):
    data = text.encode("utf-8")
    cut, truncated = cut_utf8(data, limit)
    encoded = cut.encode("utf-8")
    assert len(encoded) <= limit and data.startswith(encoded)
    assert truncated == (len(data) > limit)
    if truncated:  # the longest whole-character prefix that fits
        assert len(text[len(cut)].encode("utf-8")) > limit - len(encoded)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="aé€𝄞\n\"\\", min_size=1, max_size=200), st.integers(min_value=1, max_value=2000))
def test_inspect_content_is_a_bounded_prefix_of_the_stored_proposal(tmp_path_factory, body, limit):
    repo = tmp_path_factory.mktemp("bounded")
    write(repo, ".contextia/notes.md", "# Notes\n")
    ws = Workspace.open(repo)
    made = proposals.propose(ws, proposals.ProposeParams(
        title="t", rationale=body,
        operations=[msgspec.convert({"op": "write", "path": ".contextia/notes.md", "content": body}, proposals.Operation)]))
    assert made.ok
    stored = (repo / f".repoctx/proposals/{made.proposal.id}.json").read_bytes()
    out = proposals.inspect(ws, proposals.InspectParams(id=made.proposal.id, max_bytes=limit))
    content = out.content.encode("utf-8")
    assert len(content) <= limit and stored.startswith(content) and out.total_bytes == len(stored)
    assert out.truncated == (len(stored) > limit)


def test_bounded_reads_on_the_cli_say_they_were_cut(repo):
    status, out = cli_json(repo, "proposals", "inspect", "latest", "--max-bytes", "100")
    assert status == 0 and out["truncated"] is True and len(out["content"].encode()) <= 100
    human = run_cli("runs", "read", "latest", "--max-bytes", "50", "--root", str(repo)).stdout
    assert "[cut at" in human and "raise --max-bytes" in human
    status, out = cli_json(repo, "runs", "read", "latest", "--max-bytes", "0")
    assert status != 0


# --- schemas -----------------------------------------------------------------------


def test_schema_describes_every_command_and_the_files_repoctx_writes(repo):
    status, doc = cli_json(repo, "schema")
    assert status == 0
    assert [(c["name"], c["tool"]) for c in doc["commands"]] == [(c.name, c.tool) for c in all_commands()]
    assert {"context_file.ContextFile", "proposal.Proposal", "run.Run", "config.RepoctxConfig"} <= set(doc["formats"])
    pid = json.loads(run_cli("proposals", "list", "--json", "--root", str(repo)).stdout)["proposals"][0]["id"]
    proposal = validator(doc, doc["formats"]["proposal.Proposal"])
    proposal.validate(json.loads((repo / f".repoctx/proposals/{pid}.json").read_text()))
    run = validator(doc, doc["formats"]["run.Run"])
    run.validate(json.loads(next((repo / ".repoctx/runs").glob("*.json")).read_text()))
    assert not run.is_valid({"id": "x"})
