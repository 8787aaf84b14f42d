"""Proposals, black-box where it can be: agents propose over MCP, people apply on
the CLI; apply is all-or-nothing and refuses when the files moved on."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from conftest import mcp_client, run_cli, write
from repoctx.base.workspace import Workspace
from repoctx.control import proposals
from sample_repo import CONTEXT, build_sample_repo

CORE = "src/core/.context.yaml"


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


def cli_json(repo, *args):
    proc = run_cli(*args, "--json", "--root", str(repo))
    return proc.returncode, json.loads(proc.stdout)


def replace_summary(new: str = "Core engine; run() is the entry point.") -> dict:
    return {"op": "replace", "path": CORE, "old": 'summary: "Core engine."', "new": f'summary: "{new}"'}


def propose(repo, *ops, title="Better summary", **extra):
    args = ["propose", "--title", title, "--rationale", "Learned while reading the code."]
    for op in ops:
        args += ["--operations", json.dumps(op)]
    for pre in extra.get("preconditions", []):
        args += ["--preconditions", json.dumps(pre)]
    return cli_json(repo, *args)


@pytest.mark.anyio
async def test_an_agent_proposes_over_mcp_and_only_the_proposal_is_written(repo):
    before = (repo / CORE).read_bytes()
    async with mcp_client("--root", str(repo)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "propose_change" in names and not any("apply" in n for n in names)
        result = await client.call_tool("propose_change", {
            "title": "Better summary", "rationale": "Learned while reading the code.",
            "operations": [replace_summary()]})
        assert not result.is_error
        made = result.structured_content
        assert made["ok"] is True and made["command"] == "propose" and made["schema_version"] == 1
        pid = made["proposal"]["id"]
        assert made["proposal"]["status"] == "pending" and made["proposal"]["files"] == [CORE]
        listed = (await client.call_tool("ctxt_proposals_list", {})).structured_content["proposals"]
        assert listed[0]["id"] == pid  # the newest first
        valid = (await client.call_tool("ctxt_proposals_validate_latest", {})).structured_content
        assert valid["ok"] and valid["valid"] and valid["proposal"]["id"] == pid
    assert (repo / CORE).read_bytes() == before
    stored = json.loads((repo / f".repoctx/proposals/{pid}.json").read_text())
    assert stored["rationale"] == "Learned while reading the code."
    assert stored["preconditions"] == [
        {"kind": "file", "path": CORE, "sha256": hashlib.sha256(before).hexdigest()}]


def test_the_same_proposal_twice_is_one_proposal(repo):
    code1, first = propose(repo, replace_summary())
    code2, second = propose(repo, replace_summary())
    assert code1 == code2 == 0 and first == second
    assert len(list((repo / ".repoctx/proposals").glob("*.json"))) == 2  # with the sample's own


@pytest.mark.parametrize("op, code", [
    ({"op": "write", "path": "../outside/.context.yaml", "content": "x"}, "invalid_path"),
    ({"op": "write", "path": "/etc/.context.yaml", "content": "x"}, "invalid_path"),
    ({"op": "write", "path": "src/util.py", "content": "x"}, "invalid_path"),  # not a context file
    ({"op": "write", "path": ".repoctx/config.yaml", "content": "tools: []"}, "invalid_path"),
    ({"op": "write", "path": ".mcp.json", "content": "{}"}, "invalid_path"),
    ({"op": "delete", "path": "docs/.context.yaml"}, "invalid_proposal"),  # no such file
    ({"op": "replace", "path": CORE, "old": "not in the file", "new": "x"}, "invalid_proposal"),
    ({"op": "write", "path": CORE, "content": "version: 1\nsummary: no required fields\n"}, "invalid_proposal"),
    ({"op": "write", "path": ".repoctx/project.yaml", "content": "version: 1\nproject: {nme: x}\n"}, "invalid_proposal"),
    ({"op": "write", "path": ".contextia/system/specs/SPEC-009.md", "content": "---\ntitle: no id\n---\nBody\n"},
     "invalid_proposal"),
])
def test_proposals_that_cannot_apply_are_refused_and_not_stored(repo, op, code):
    status, out = propose(repo, op)
    assert status == 1 and out["ok"] is False and out["error"]["code"] == code, out
    assert out["error"]["message"]
    assert len(list((repo / ".repoctx/proposals").glob("*.json"))) == 1  # only the sample's


def test_an_artifact_can_be_proposed_and_applied(repo):
    spec = "---\nid: SPEC-042\ntitle: Entry point\nstatus: draft\n---\nrun() starts everything.\n"
    status, out = propose(repo, {"op": "write", "path": ".contextia/system/specs/SPEC-042.md", "content": spec})
    assert status == 0, out
    code, _applied = cli_json(repo, "proposals", "apply", out["proposal"]["id"])
    assert code == 0 and (repo / ".contextia/system/specs/SPEC-042.md").read_text() == spec


def test_symlinked_context_files_leading_out_are_refused(repo, tmp_path):
    outside = tmp_path / "outside"
    write(outside, ".context.yaml", "secret: 1\n")
    os.symlink(outside, repo / "docs/link")
    status, out = propose(repo, {"op": "write", "path": "docs/link/.context.yaml", "content": "x"})
    assert status == 1 and out["error"]["code"] == "invalid_path"


def test_a_stale_precondition_is_refused_when_proposing(repo):
    status, out = propose(repo, replace_summary(),
                          preconditions=[{"kind": "file", "path": CORE, "sha256": "0" * 64}])
    assert status == 1 and out["error"]["code"] == "precondition_failed"


def test_apply_changes_the_files_and_marks_the_proposal_applied(repo):
    _, made = propose(repo, replace_summary(), {
        "op": "write", "path": "docs/.context.yaml",
        "content": CONTEXT.format(fingerprint="00000000", scope="docs", summary="Docs.")})
    pid = made["proposal"]["id"]
    code, applied = cli_json(repo, "proposals", "apply", pid)
    assert code == 0 and applied["ok"], applied
    assert applied["changes"] == [{"path": CORE, "action": "modified"},
                                  {"path": "docs/.context.yaml", "action": "created"}]
    assert "run() is the entry point" in (repo / CORE).read_text()
    assert (repo / "docs/.context.yaml").exists()
    assert run_cli("show", "docs", "--root", str(repo)).returncode == 0  # a valid context file
    again = cli_json(repo, "proposals", "apply", pid)
    assert again[0] == 1 and again[1]["error"]["code"] == "already_applied"
    code, listed = cli_json(repo, "proposals", "validate", "--id", pid)
    assert code == 1 and listed["error"]["code"] == "already_applied"
    human = run_cli("proposals", "list", "--root", str(repo)).stdout
    assert f"{pid}  applied" in human


def test_apply_refuses_when_a_file_changed_and_changes_nothing(repo):
    _, made = propose(repo, {
        "op": "write", "path": "docs/.context.yaml",
        "content": CONTEXT.format(fingerprint="00000000", scope="docs", summary="Docs.")}, replace_summary())
    pid = made["proposal"]["id"]
    edited = (repo / CORE).read_text().replace("Fingerprint uses stat() only", "A person edited this")
    (repo / CORE).write_text(edited)
    code, out = cli_json(repo, "proposals", "validate", "--id", pid)
    assert code == 1 and out["valid"] is False and out["error"]["code"] == "precondition_failed"
    assert any(CORE in p for p in out["problems"])
    code, out = cli_json(repo, "proposals", "apply", pid)
    assert code == 1 and out["error"]["code"] == "precondition_failed"
    assert (repo / CORE).read_text() == edited
    assert not (repo / "docs/.context.yaml").exists()  # the other file was not written either


def test_a_scope_fingerprint_precondition(repo):
    from repoctx import _core

    fp = _core.fingerprint(str(repo / "src/core"))
    _, made = propose(repo, replace_summary(), preconditions=[{"kind": "scope", "scope": "src/core", "fingerprint": fp}])
    write(repo, "src/core/new_module.py", "x = 1\n")
    code, out = cli_json(repo, "proposals", "apply", made["proposal"]["id"])
    assert code == 1 and out["error"]["code"] == "precondition_failed" and "src/core" in out["error"]["message"]


def test_a_proposal_edited_after_it_was_made_is_refused(repo):
    _, made = propose(repo, replace_summary())
    pid = made["proposal"]["id"]
    path = repo / f".repoctx/proposals/{pid}.json"
    data = json.loads(path.read_text())
    data["operations"][0]["new"] = 'summary: "Something the agent never proposed"'
    path.write_text(json.dumps(data))
    code, out = cli_json(repo, "proposals", "apply", pid)
    assert code == 1 and out["error"]["code"] == "invalid_proposal" and "edited" in out["error"]["message"]
    assert "Core engine." in (repo / CORE).read_text()


def test_apply_changes_nothing_when_a_file_cannot_be_written(repo, monkeypatch):
    """All or nothing: the disk fills while the second file is staged, so no file changes."""
    ws = Workspace.open(repo)
    made = proposals.propose(ws, proposals.ProposeParams(
        title="two files", rationale="r",
        operations=[proposals.msgspec.convert(op, proposals.Operation) for op in (
            replace_summary(),
            {"op": "replace", "path": ".context.yaml", "old": "The sample repository.", "new": "Changed."})]))
    assert made.ok, made
    before = {p: (repo / p).read_bytes() for p in (CORE, ".context.yaml")}
    real_write = os.write

    def flaky_write(fd, data):
        if b"Changed." in bytes(data):
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", flaky_write)
    out = proposals.apply(ws, proposals.ApplyParams(made.proposal.id))
    monkeypatch.undo()
    assert out.ok is False and out.error.code == "io_error"
    assert {p: (repo / p).read_bytes() for p in before} == before
    assert not [p for p in repo.rglob(".repoctx-*.tmp")]  # no staged file left behind
    assert not (repo / ".repoctx/journal").exists()
    assert proposals.load(ws, made.proposal.id)[0].status == "pending"


def test_apply_is_cli_only(repo):
    assert all(c.tool is None for c in proposals.COMMANDS if c.name == "proposals apply")


def test_two_people_applying_at_once_apply_it_once(repo):
    import subprocess

    from conftest import REPOCTX

    _, made = propose(repo, replace_summary())
    pid = made["proposal"]["id"]
    procs = [subprocess.Popen([*REPOCTX, "proposals", "apply", pid, "--json", "--root", str(repo)],
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert sorted(o["ok"] for o in outs) == [False, True]
    assert next(o for o in outs if not o["ok"])["error"]["code"] == "already_applied"
    assert (repo / CORE).read_text().count("run() is the entry point") == 1
