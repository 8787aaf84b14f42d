"""The closed allowlist, black-box: what `repoctx serve` lists and accepts under
profiles, `--tools`, `tools:` in .repoctx/config.yaml and read-only mode, and
that ctxt_capabilities reports exactly what is listed."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest
from mcp.shared.exceptions import MCPError

from conftest import mcp_client, run_cli, write
from repoctx.formats.config import PROFILES, SURFACES
from repoctx.registry import catalog
from repoctx.registry.catalog import all_commands, all_prompts, all_resources
from sample_repo import build_sample_repo, write_context

TOOLS = {c.tool: c for c in all_commands() if c.tool}


def tools_of(*profiles: str) -> set[str]:
    """The tools a server started with these profiles lists (a profile is a surface, or propose)."""
    return {name for name, c in TOOLS.items() if c.profile in profiles}


@pytest.fixture
def scopes_only(tmp_path):
    """A repository whose only data is a context file: the scopes surface."""
    root = tmp_path / "repo"
    write(root, "src/main.py", "print('hi')\n" * 500)
    write_context(root, ".", "Only scopes here.")
    return root


def test_every_command_and_resource_belongs_to_a_surface():
    assert {c.surface for c in all_commands()} <= set(SURFACES)
    assert {r.surface for r in all_resources()} <= set(SURFACES)
    assert {p.surface for p in all_prompts()} <= set(SURFACES)


@pytest.mark.parametrize("package", SURFACES)
def test_the_catalog_stamps_what_a_package_declares_with_that_package_as_its_surface(package):
    modules = importlib.import_module(f"repoctx.{package}").MODULES
    for kind in ("commands", "resources", "prompts"):
        for module in modules.get(kind, ()):
            assert {x.surface for x in catalog.declared(f"{package}.{module}", kind)} <= {package}
    assert package in {c.surface for c in all_commands()}
    # a profile defaults to the surface; propose_change keeps its own
    assert {c.profile for c in all_commands() if c.surface == package} <= {package, "propose"}


async def listed(client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def resource_uris(client) -> set[str]:
    """Resources and templates listed; none when the server offers no resources at all."""
    try:
        fixed = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
    except MCPError as exc:
        assert "Method not found" in str(exc)
        return set()
    return {str(r.uri) for r in fixed} | {t.uri_template for t in templates}


@pytest.mark.anyio
async def test_default_profile_serves_the_surfaces_with_data(scopes_only):
    # The artifacts' tools are listed without their data: their answer says how to start a project.
    default = tools_of("scopes", "tasks", "control", "artifacts")
    async with mcp_client("--root", str(scopes_only)) as client:
        assert await listed(client) == default
        assert await resource_uris(client) == set()
        caps = (await client.call_tool("ctxt_capabilities", {})).structured_content
        assert caps["profile"] is None and caps["surfaces"] == ["scopes", "tasks", "control"]
        assert set(caps["tools"]) == default
        assert caps["network_used"] is False and caps["read_only"] is False
        assert caps["allowed_roots"] == [str(scopes_only.resolve())]
        report = (await client.call_tool("ctxt_self_report", {})).structured_content
        assert {s["name"]: s["has_data"] for s in report["surfaces"]} == {
            "scopes": True, "caches": False, "artifacts": False, "project": False, "tasks": True, "control": True}
        # A contract's tool that is not listed still gives its contract's answer…
        answer = await client.call_tool("add_discovery", {"module": "x", "type": "rule", "content": "y"})
        assert answer.is_error and "No .repoctx/project.yaml" in answer.content[0].text
        # …but a tool outside every contract (propose_change has a profile of its own) does not exist.
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("propose_change", {})


@pytest.mark.anyio
async def test_a_repository_without_any_data_still_gets_scopes(tmp_path):
    root = tmp_path / "bare"
    write(root, "src/main.py", "print('hi')\n" * 2000)
    async with mcp_client("--root", str(root)) as client:
        assert await listed(client) == tools_of("scopes", "tasks", "control", "artifacts")
        listing = json.loads((await client.call_tool("list_contexts", {})).content[0].text)
        assert [(e["scope"], e["state"]) for e in listing["entries"]] == [(".", "missing"), ("src", "missing")]


@pytest.mark.anyio
@pytest.mark.parametrize("profile", PROFILES)
async def test_a_profile_lists_its_surface_and_nothing_else(scopes_only, profile):
    expected = tools_of(*(PROFILES if profile == "all" else (profile,)))
    async with mcp_client("--root", str(scopes_only), "--profile", profile) as client:
        assert await listed(client) == expected
        others = sorted(set(TOOLS) - expected)
        if others:  # a tool of another surface does not exist for the client
            with pytest.raises(MCPError, match="Unknown tool"):
                await client.call_tool(others[0], {})


@pytest.mark.anyio
async def test_project_resources_follow_the_profile(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    project = {r.uri for r in all_resources() if r.surface == "project"}
    async with mcp_client("--root", str(repo), "--profile", "project") as client:
        assert project and project <= await resource_uris(client)
    async with mcp_client("--root", str(repo), "--profile", "scopes") as client:
        assert not (project & await resource_uris(client))


@pytest.mark.anyio
async def test_tools_in_the_config_are_the_closed_allowlist(scopes_only):
    write(scopes_only, ".repoctx/config.yaml", "tools: [ctxt_capabilities, check_freshness]\n")
    async with mcp_client("--root", str(scopes_only)) as client:
        assert await listed(client) == {"ctxt_capabilities", "check_freshness"}
        caps = (await client.call_tool("ctxt_capabilities", {})).structured_content
        assert caps["tools"] == ["check_freshness", "ctxt_capabilities"]
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("list_contexts", {})
    # The CLI reports what a server started here would expose.
    cli = run_cli("capabilities", "--json", "--root", str(scopes_only), check=True)
    assert '"check_freshness"' in cli.stdout and '"list_contexts"' not in cli.stdout


async def prompt_names(client) -> set[str]:
    try:
        return {p.name for p in (await client.list_prompts()).prompts}
    except MCPError as exc:
        assert "Method not found" in str(exc)
        return set()


@pytest.mark.anyio
async def test_a_tools_list_serves_only_the_resources_and_prompts_of_its_tools_surfaces(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")  # data for every surface but caches
    project = {r.uri for r in all_resources() if r.surface == "project"}
    artifacts = {r.uri for r in all_resources() if r.surface == "artifacts"}
    prompts = {p.name for p in all_prompts() if p.surface == "artifacts"}
    async with mcp_client("--root", str(repo), "--tools", "list_contexts,ctxt_capabilities") as client:
        assert await resource_uris(client) == set() and await prompt_names(client) == set()
        with pytest.raises(MCPError):
            await client.read_resource("context://project/overview")
        with pytest.raises(MCPError):
            await client.get_prompt("end_session", {})
        caps = (await client.call_tool("ctxt_capabilities", {})).structured_content
        assert caps["surfaces"] == ["scopes", "control"] and caps["resources"] == []
    async with mcp_client("--root", str(repo), "--tools", "list_contexts,mcp_show") as client:
        assert await resource_uris(client) == artifacts and await prompt_names(client) == prompts
        assert (await client.read_resource("contextia://identity")).contents[0].text
        with pytest.raises(MCPError):
            await client.read_resource("context://project/overview")
    # Read-only drops add_discovery, the project's only tool, yet naming it asked for the surface:
    # the way to serve project resources beside scopes tools without any writing tool.
    async with mcp_client("--root", str(repo), "--tools", "list_contexts,add_discovery", "--read-only") as client:
        assert await listed(client) == {"list_contexts"}
        uris = await resource_uris(client)  # with each module listed as a resource
        assert project <= uris and all(u.startswith("context://") for u in uris)
        assert await prompt_names(client) == set()
        assert "# " in (await client.read_resource("context://project/overview")).contents[0].text
    # With a profile, the two intersect for resources as for tools.
    async with mcp_client("--root", str(repo), "--tools", "mcp_show,add_discovery", "--profile", "project") as client:
        assert await listed(client) == {"add_discovery"}
        uris = await resource_uris(client)
        assert project <= uris and all(u.startswith("context://") for u in uris)
        assert await prompt_names(client) == set()


@pytest.mark.anyio
async def test_capabilities_report_what_the_server_started_with(scopes_only):
    write(scopes_only, ".repoctx/config.yaml", "tools: [ctxt_capabilities, list_contexts]\n")
    async with mcp_client("--root", str(scopes_only)) as client:
        assert await listed(client) == {"list_contexts", "ctxt_capabilities"}
        write(scopes_only, ".repoctx/config.yaml", "profile: all\n")  # changed while serving
        caps = (await client.call_tool("ctxt_capabilities", {})).structured_content
        assert caps["tools"] == ["list_contexts", "ctxt_capabilities"]
        assert await listed(client) == {"list_contexts", "ctxt_capabilities"}


@pytest.mark.anyio
async def test_serve_tools_overrides_the_config_and_intersects_a_profile(scopes_only):
    write(scopes_only, ".repoctx/config.yaml", "tools: [ctxt_capabilities]\n")
    async with mcp_client("--root", str(scopes_only), "--tools", "list_contexts,ctxt_schema") as client:
        assert await listed(client) == {"list_contexts", "ctxt_schema"}
    async with mcp_client("--root", str(scopes_only), "--tools", "list_contexts,ctxt_schema",
                          "--profile", "control") as client:
        assert await listed(client) == {"ctxt_schema"}


@pytest.mark.anyio
async def test_read_only_drops_writing_tools_from_every_profile(scopes_only):
    async with mcp_client("--root", str(scopes_only), "--profile", "all", "--read-only") as client:
        names = await listed(client)
        caps = (await client.call_tool("ctxt_capabilities", {})).structured_content
        checked = (await client.call_tool("ctxt_validate_run", {})).structured_content
    assert checked["ok"] and checked["recorded"] is False  # checks run; nothing is written
    assert not (scopes_only / ".repoctx/runs").exists()
    assert "propose_change" not in names and names == tools_of(*SURFACES) - {t for t, c in TOOLS.items() if c.writes}
    assert caps["read_only"] is True and caps["writing_tools"] == []


@pytest.mark.anyio
async def test_annotations_say_which_tools_change_anything(scopes_only):
    """readOnlyHint is true only for tools that change nothing on disk: ctxt_validate_run
    records a run, so it is neither read-only nor idempotent (each call adds a run), though a
    read-only server still serves it, recording nothing."""
    async with mcp_client("--root", str(scopes_only), "--profile", "all") as client:
        tools = {t.name: t.annotations for t in (await client.list_tools()).tools}
        before = len(list((scopes_only / ".repoctx/runs").glob("*.json")))
        await client.call_tool("ctxt_validate_run", {})
        await client.call_tool("ctxt_validate_run", {})
    assert len(list((scopes_only / ".repoctx/runs").glob("*.json"))) == before + 2  # each call writes
    validate = tools["ctxt_validate_run"]
    assert validate.read_only_hint is False and validate.idempotent_hint is False
    assert validate.destructive_hint is False and validate.open_world_hint is False
    for name, a in tools.items():
        assert a.read_only_hint is (not TOOLS[name].writes and name != "ctxt_validate_run"), name
    async with mcp_client("--root", str(scopes_only), "--profile", "all", "--read-only") as client:
        assert "ctxt_validate_run" in await listed(client)


ALIASED = [c for c in TOOLS.values() if c.aliases]


@pytest.mark.anyio
@pytest.mark.skipif(not ALIASED, reason="no command has dotted aliases")
async def test_dotted_aliases_follow_the_allowlist(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    cmd = ALIASED[0]
    alias = cmd.aliases[0]
    async with mcp_client("--root", str(repo), "--profile", "scopes") as client:
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool(alias, {})
    async with mcp_client("--root", str(repo), "--tools", alias) as client:
        assert await listed(client) == {cmd.tool}  # the tool is listed by its own name
        result = await client.call_tool(alias, {})  # and both names reach it
        assert result.content


@pytest.mark.parametrize("config, needle", [
    ("tools: [no_such_tool]\n", "no_such_tool"),
    ("profile: everything\n", "profile"),
    ("tools: [\n", "YAML"),
])
def test_a_bad_allowlist_in_the_config_stops_the_server(scopes_only, config, needle):
    write(scopes_only, ".repoctx/config.yaml", config)
    proc = subprocess.run([sys.executable, "-m", "repoctx", "serve", "--root", str(scopes_only)],
                          capture_output=True, text=True, timeout=60, input="")
    assert proc.returncode == 2 and needle in proc.stderr and proc.stdout == ""
    caps = run_cli("capabilities", "--json", "--root", str(scopes_only))
    assert caps.returncode == 1 and '"config_error"' in caps.stdout
