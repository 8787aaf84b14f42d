"""The Contextia contract beyond the golden outputs: no project, confinement,
read-only mode, resources, prompts, `artifacts init/new` (next free id under
concurrency), `artifacts check --ci`, and answers that follow edits to the tree."""

from __future__ import annotations

import os
import subprocess

import pytest
from mcp.shared.exceptions import MCPError

from artifacts_fixture import copy_fixture
from conftest import REPOCTX, mcp_client, run_cli, write
from repoctx.artifacts import log_tools
from repoctx.base.workspace import Workspace


@pytest.fixture
def project(tmp_path):
    return copy_fixture(tmp_path / "authkit")


@pytest.mark.anyio
async def test_no_project_says_how_to_create_one(tmp_path):
    async with mcp_client("--root", str(tmp_path), "--profile", "artifacts") as client:
        for tool, args in [("mcp_list", {"type": "spec"}), ("mcp_show", {"artifact_id": "SPEC-001"}),
                           ("mcp_context", {"task_id": "TASK-001"}), ("mcp_check", {})]:
            result = await client.call_tool(tool, args)
            assert result.is_error, tool
            assert result.content[0].text == (
                f"No Contextia project found in {tmp_path.resolve()} or any parent. "
                "Run `repoctx artifacts init` to create one.")
            assert result.structured_content["error"] == result.content[0].text
        with pytest.raises(MCPError):
            await client.read_resource("contextia://index")


@pytest.mark.anyio
async def test_paths_outside_the_root_are_refused(project, tmp_path):
    (tmp_path / "secret.py").write_text("# @spec SPEC-001\n")
    os.symlink(tmp_path / "secret.py", project / "src/link.py")
    os.symlink(tmp_path, project / "src/up")
    async with mcp_client("--root", str(project)) as client:
        for path in ["../secret.py", str(tmp_path / "secret.py"), "src/link.py", "src/up/secret.py", "a\x00b",
                     "src/../../secret.py"]:
            for tool, key in [("mcp_trace", "path"), ("mcp_find_by_path", "file_path")]:
                result = await client.call_tool(tool, {key: path})
                assert result.is_error, (tool, path)
                assert "leads outside the project" in result.content[0].text, (tool, path)
        result = await client.call_tool("mcp_find_by_path", {"file_path": "../**"})
        assert result.is_error
        # A glob inside the root never reaches through the symlinks.
        result = await client.call_tool("mcp_find_by_path", {"file_path": "src/**"})
        assert "secret" not in result.content[0].text and "link.py" not in result.content[0].text


@pytest.mark.anyio
async def test_read_only_server_neither_lists_nor_runs_log_writes(project):
    async with mcp_client("--root", str(project), "--read-only") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"mcp_show", "mcp_read_log", "mcp_context"} <= names
        assert not names & {"mcp_write_log", "mcp_close_log"}
        with pytest.raises(MCPError):
            await client.call_tool("mcp_write_log", {"task_id": "TASK-002", "body": "x"})
    # The handlers refuse too, whichever view calls them.
    ws = Workspace.open(project, read_only=True)
    write_result = log_tools.write_log(ws, log_tools.WriteLogParams("TASK-002", "x"))
    close_result = log_tools.close_log(ws, log_tools.CloseLogParams("TASK-002"))
    assert write_result.error == close_result.error == log_tools.READ_ONLY
    assert not (project / ".contextia/work/logs/TASK-002/.lock").exists()


@pytest.mark.anyio
async def test_resources_and_prompts(project):
    async with mcp_client("--root", str(project)) as client:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"contextia://identity", "contextia://index"} <= uris
        identity = (await client.read_resource("contextia://identity")).contents[0]
        assert identity.mime_type == "text/markdown" and identity.text.startswith("# authkit\n")
        index = (await client.read_resource("contextia://index")).contents[0].text
        assert index.startswith("# Contextia index: authkit\n")
        assert "- SPEC-001: User Authentication Flow [approved]" in index
        assert "- TASK-002: Implement token rotation [feature, in_progress]" in index
        assert "Error reading SPEC-013: missing required field 'status'" in index

        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert sorted(prompts) == ["end_session", "start_bug_fix", "start_feature_task"]
        assert all(p.arguments[0].name == "task_id" and p.arguments[0].required for p in prompts.values())
        got = await client.get_prompt("start_feature_task", {"task_id": "TASK-002"})
        text = got.messages[0].content.text
        assert "TASK-002: Implement token rotation (in_progress)" in text
        assert 'mcp_context(task_id="TASK-002")' in text and "mcp_write_log" in text
        bug = (await client.get_prompt("start_bug_fix", {"task_id": "TASK-003"})).messages[0].content.text
        assert "Reproduce the bug" in bug
        end = (await client.get_prompt("end_session", {"task_id": "TASK-002"})).messages[0].content.text
        assert 'mcp_close_log(task_id="TASK-002")' in end
        with pytest.raises(MCPError):
            await client.get_prompt("start_feature_task", {})

    (project / ".contextia/system/identity.md").unlink()
    async with mcp_client("--root", str(project)) as client:
        with pytest.raises(MCPError) as err:
            await client.read_resource("contextia://identity")
        assert "identity.md" in str(err.value)


def test_init_creates_the_layout_once_and_keeps_what_is_there(tmp_path):
    first = run_cli("artifacts", "init", "--root", str(tmp_path), check=True)
    assert ".contextia/config.yaml" in first.stdout
    for d in ["system/specs", "system/rationale", "system/norms", "work/tasks", "work/logs"]:
        assert (tmp_path / ".contextia" / d).is_dir()
    (tmp_path / ".contextia/config.yaml").write_text("project: mine\n")
    again = run_cli("artifacts", "init", "--root", str(tmp_path), check=True)
    assert "already set up" in again.stdout
    assert (tmp_path / ".contextia/config.yaml").read_text() == "project: mine\n"


@pytest.mark.anyio
async def test_init_writes_a_starter_identity_that_the_listed_resource_reads(tmp_path):
    made = run_cli("artifacts", "init", "--project", "Acme\nBilling", "--root", str(tmp_path), check=True)
    assert ".contextia/system/identity.md" in made.stdout
    async with mcp_client("--root", str(tmp_path)) as client:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert "contextia://identity" in listed
        text = (await client.read_resource("contextia://identity")).contents[0].text
        assert text.startswith("# Acme Billing\n") and "What Acme Billing is" in text
        (tmp_path / ".contextia/system/identity.md").write_text("# Acme\n\nInvoices for small shops.\n")
        text = (await client.read_resource("contextia://identity")).contents[0].text
        assert text == "# Acme\n\nInvoices for small shops.\n"
    run_cli("artifacts", "init", "--root", str(tmp_path), check=True)  # the person's text is kept
    assert (tmp_path / ".contextia/system/identity.md").read_text() == "# Acme\n\nInvoices for small shops.\n"


def test_new_takes_the_next_free_id_and_writes_a_readable_artifact(project):
    made = run_cli("artifacts", "new", "spec", "--title", "Session Revocation", "--root", str(project), check=True)
    assert made.stdout == "Created SPEC-014: Session Revocation (.contextia/system/specs/SPEC-014.md)\n"
    task = run_cli("artifacts", "new", "task", "--title", "Revoke on logout", "--kind", "bug", "--json",
                   "--root", str(project), check=True)
    assert '"id": "TASK-009"' in task.stdout
    shown = run_cli("artifacts", "task", "show", "TASK-009", "--format", "meta", "--root", str(project), check=True)
    assert shown.stdout == "# TASK-009: Revoke on logout\nstatus: backlog\nkind: bug\n"
    bad = run_cli("artifacts", "new", "epic", "--title", "x", "--root", str(project))
    assert bad.returncode == 1 and "Invalid type 'epic'. Valid types: spec, decision, norm, task" in bad.stderr


def test_concurrent_new_never_share_an_id(tmp_path):
    run_cli("artifacts", "init", "--root", str(tmp_path), check=True)
    procs = [subprocess.Popen([*REPOCTX, "artifacts", "new", "decision", "--title", f"Choice {i}", "--root",
                               str(tmp_path)], stdout=subprocess.PIPE, text=True) for i in range(6)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    ids = sorted(line.split(":")[0].split()[-1] for line in outs)
    assert ids == [f"DEC-00{i}" for i in range(1, 7)]
    assert len(list((tmp_path / ".contextia/system/rationale").glob("DEC-*.md"))) == 6


def test_check_ci_exits_non_zero_only_on_errors(project, tmp_path):
    plain = run_cli("artifacts", "check", "--root", str(project))
    assert plain.returncode == 0 and "5 errors:" in plain.stdout
    ci = run_cli("artifacts", "check", "--ci", "--root", str(project))
    assert ci.returncode == 1 and ci.stdout == plain.stdout
    clean = tmp_path / "clean"
    clean.mkdir()
    run_cli("artifacts", "init", "--root", str(clean), check=True)
    write(clean, ".contextia/system/specs/SPEC-001.md", "---\nid: SPEC-001\ntitle: A\nstatus: draft\n---\nBody\n")
    write(clean, ".contextia/work/tasks/TASK-001.md",
          "---\nid: TASK-001\ntitle: T\nstatus: backlog\nkind: chore\nlinks: [SPEC-001]\n---\n")
    ok = run_cli("artifacts", "check", "--ci", "--root", str(clean))
    assert ok.returncode == 0, ok.stdout
    assert ok.stdout == "Check results:\n  0 errors\n  0 warnings\n  0 info\n"


def test_config_turns_rules_off_and_changes_the_prefix(project):
    config = project / ".contextia/config.yaml"
    config.write_text(config.read_text().replace("unannotated_spec: info", "orphan_spec: off\n  nonsense: error"))
    out = run_cli("artifacts", "check", "--baseline", "links", "--json", "--root", str(project)).stdout
    assert "(orphan spec)" not in out and "unknown check rule 'nonsense'" in out
    config.write_text("project: authkit\nannotation_prefix: \"contextia:\"\n")
    write(project, "src/auth/extra.py", "# contextia:spec SPEC-002\n# @spec SPEC-001\ndef f():\n    pass\n")
    traced = run_cli("artifacts", "trace", "src/auth/extra.py", "--root", str(project), check=True).stdout
    assert "contextia:spec SPEC-002 (line 1, function: f)" in traced and "SPEC-001 (line" not in traced


@pytest.mark.anyio
async def test_answers_follow_edits_to_the_tree(project):
    """The server keeps its annotation index between calls; every edit shows in the next answer."""
    async with mcp_client("--root", str(project)) as client:

        async def find(q: str) -> str:
            return (await client.call_tool("mcp_find_by_path", {"file_path": q})).content[0].text

        assert "SPEC-006" not in await find("src/**")
        # An in-place edit of a file that had no annotations (its directory does not change).
        with open(project / "src/auth/providers.py", "a") as fh:
            fh.write("# @spec SPEC-006 resets reuse the provider list\n")
        assert "SPEC-006: Password Reset (annotations: src/auth/providers.py:4)" in await find("src/**")
        # A new file, and a new .gitignore rule that hides it again.
        write(project, "src/audit/log.py", "# @spec SPEC-005\n")
        assert "src/audit/log.py:1" in await find("src/**")
        (project / ".gitignore").write_text("build/\nsrc/audit/\n")
        assert "src/audit/log.py" not in await find("src/**")
        # A removed annotation disappears.
        (project / "web/src/legacy.js").write_text("function legacyLogin() {}\n")
        assert "SPEC-099" not in await find("web/**")
        # An artifact edit shows at once too.
        spec = project / ".contextia/system/specs/SPEC-012.md"
        spec.write_text(spec.read_text().replace("Provider Configuration", "Provider Settings"))
        assert "SPEC-012: Provider Settings" in await find("src/auth/providers.py")


@pytest.mark.anyio
async def test_the_index_built_as_the_server_starts_follows_edits_made_before_the_first_glob(project):
    """serve builds the annotation index in the background; an edit made meanwhile, or
    after it, is in the first answer all the same."""
    async with mcp_client("--root", str(project)) as client:
        await client.call_tool("list_contexts", {"limit": 1})  # the warm-up is at least this far
        with open(project / "src/auth/providers.py", "a") as fh:
            fh.write("# @spec SPEC-006 resets reuse the provider list\n")
        write(project, "src/audit/log.py", "# @spec SPEC-005\n")
        text = (await client.call_tool("mcp_find_by_path", {"file_path": "src/**"})).content[0].text
        assert "src/auth/providers.py:4" in text and "src/audit/log.py:1" in text


def test_cli_view_is_the_context_format(project):
    """The CLI's default output is the MCP text; --json the structured content."""
    text = run_cli("artifacts", "list", "decision", "--root", str(project), check=True).stdout
    assert text.startswith("6 decisions:\n- DEC-001: OAuth Provider Selection [accepted]\n")
    data = run_cli("artifacts", "list", "decision", "--json", "--root", str(project), check=True).stdout
    assert data.startswith('{\n  "type": "decision",\n  "count": 6,')
