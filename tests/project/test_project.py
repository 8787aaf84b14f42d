"""The project surface: project.yaml derived from a polyglot fixture (golden),
scan keeping what people wrote, the schema's errors, discoveries under a lock,
the stat-keyed cache, the contract's markdown (golden) and its size limits."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli, write
from project_fixture import NOW, build_project_fixture, check_golden
from repoctx.base import clock
from repoctx.base.command import ResourceError
from repoctx.base.workspace import Workspace
from repoctx.formats import project_file as pf
from repoctx.project import overview as project
from repoctx.project import render as project_render
from repoctx.project import sessions
from repoctx.project.overview import AddDiscoveryParams, ProjectParams


@pytest.fixture
def fixed_clock(monkeypatch):
    monkeypatch.setattr(clock, "now", lambda: datetime(2026, 3, 1, 9, 0, tzinfo=UTC))


@pytest.fixture
def acme(tmp_path, fixed_clock):
    root = build_project_fixture(tmp_path / "acme")
    ws = Workspace.open(root)
    assert not project.project_init(ws, ProjectParams()).error
    return ws


def discover(ws, module, type_, content, solution=None):
    return project.add_discovery(ws, AddDiscoveryParams(module, type_, content, solution))


def project_yaml(ws) -> str:
    with open(os.path.join(ws.root, pf.PROJECT_FILE)) as fh:
        return fh.read()


# --- derived file and resources: golden ----------------------------------------


def test_init_derives_the_golden_project_file(acme):
    check_golden("acme.project.yaml", project_yaml(acme))


def test_resources_render_the_contract_markdown(acme, monkeypatch):
    monkeypatch.setattr(sessions.uuid, "uuid4", lambda: uuid.UUID("5e55102a" + "0" * 24))
    tracker = sessions.Tracker(acme)
    tracker.connected()
    try:
        assert discover(acme, "acme-core", "pattern", "Prices are integers in cents").recorded
        assert discover(acme, "acme-core", "rule", "A total never goes below zero").recorded
        assert discover(acme, "acme-core", "decision", "No floating point for money:\nrounding errors add up").recorded
        assert discover(acme, "acme-core", "issue", "Overflow on huge carts", "Use checked_add").recorded
    finally:
        tracker.disconnected()
    check_golden("overview.md", project.read_overview(acme, {}))
    check_golden("module-acme-core.md", project.read_module(acme, {"name": "acme-core"}))
    check_golden("module-web.md", project.read_module(acme, {"name": "web"}))


def test_every_module_is_listed_as_a_resource(acme):
    names = list(project.load(acme).modules)
    assert project.module_instances(acme) == [(f"context://module/{n}", f"Module: {n}") for n in names]
    assert project.module_uri("a b/c") == "context://module/a%20b%2Fc"


# --- CLI ---------------------------------------------------------------------------


def test_cli_init_writes_the_file_and_gitignores_local_state(tmp_path):
    root = build_project_fixture(tmp_path / "acme")
    first = run_cli("project", "init", "--root", str(root))
    assert first.returncode == 0, first.stderr
    assert "Wrote .repoctx/project.yaml: acme, 7 modules" in first.stdout
    assert {"/*", "!/project.yaml"} <= set((root / ".repoctx/.gitignore").read_text().splitlines())
    again = run_cli("project", "init", "--root", str(root))
    assert again.returncode == 1 and "already exists" in again.stderr
    assert str(root) not in (root / ".repoctx/project.yaml").read_text()  # paths stay relative
    scan = run_cli("project", "scan", "--json", "--root", str(root))
    assert scan.returncode == 0 and '"added": []' in scan.stdout


def test_cli_scan_without_a_project_file_says_how_to_start(tmp_path):
    proc = run_cli("project", "scan", "--root", str(tmp_path))
    assert proc.returncode == 1 and "repoctx project init" in proc.stderr
    assert not (tmp_path / ".repoctx").exists()


# --- scan keeps what people wrote ------------------------------------------------------


def test_scan_refreshes_derived_parts_and_keeps_what_people_wrote(acme, monkeypatch):
    root = Path(acme.root)
    text = project_yaml(acme)
    text = text.replace("  ui:\n    description: Shared React components.", "  design-system:\n    description: Our components.")
    text = text.replace("description: 7 modules found from workspace members, packages and top-level source directories.",
                        "description: Written by a person.")
    text = text.replace("    - path: crates/core/src/price.rs\n      role: core\n",
                        "    - path: crates/core/src/price.rs\n      role: core\n      description: Where totals happen.\n")
    text = text.replace("runtime: Python >=3.11", "runtime: Python 2")  # derived: refreshed
    write(root, pf.PROJECT_FILE, text)
    assert discover(acme, "design-system", "pattern", "Components are pure").recorded
    assert discover(acme, "api", "rule", "Every route checks auth").recorded
    # The tree changes: one crate goes, a package comes, the api's module keeps human content.
    shutil.rmtree(root / "crates/cli")
    shutil.rmtree(root / "services/api")
    write(root, "packages/admin/package.json", '{"name": "@acme/admin"}\n')
    write(root, "packages/admin/index.js", "require('@acme/ui')\n")
    monkeypatch.setattr(clock, "now", lambda: datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    result = project.project_scan_cmd(acme, ProjectParams())
    assert not result.error
    assert result.added == ["admin"] and result.removed == ["acme-cli"]
    after = project.load(acme)
    ds = after.modules["design-system"]
    assert ds.description == "Our components." and ds.patterns == ["Components are pure"] and ds.path == "packages/ui"
    assert "ui" not in after.modules
    assert after.modules["admin"].dependencies == ["design-system"]
    assert after.modules["api"].business_rules == ["Every route checks auth"]  # vanished, but kept
    price = [k for k in after.modules["acme-core"].key_files if k.path.endswith("price.rs")]
    assert price[0].description == "Where totals happen."
    assert after.architecture.description == "Written by a person."
    assert after.tech.runtime.startswith("Python >=3.11")
    assert after.metadata.created == NOW and after.metadata.last_scan == "2026-03-02T09:00:00Z"


# --- the schema ------------------------------------------------------------------------------

BASE = "version: 1\nproject:\n  name: x\n"


@pytest.mark.parametrize(("text", "expected"), [
    (BASE + "modules:\n  core:\n    patterns: [1]\n", "field `modules.core.patterns[0]`"),
    (BASE + "modules:\n  core:\n    pattern: []\n", "unknown field `pattern`"),
    (BASE + "tech:\n  stack: Python\n", "field `tech.stack`"),
    ("version: 1\n", "missing required field `project`"),
    ("version: 2\nproject:\n  name: x\n", "has version 2; this repoctx reads version 1"),
    (BASE + "modules:\n  core:\n    common_issues:\n      - solution: s\n", "field `modules.core.common_issues[0]`"),
    (BASE.replace("name: x", "name: x\n  path: /home/me/x"), "`project.path` must be a path relative"),
    (BASE.replace("name: x", "name: x\n  path: ../x"), "`project.path` must be a path relative"),
    (BASE + "modules:\n  core:\n    key_files:\n      - {path: /etc/passwd, role: core}\n", "modules.core.key_files[0].path"),
    ("project: [unclosed\n", "not valid YAML at line"),
    ("- a list\n", "must be a mapping"),
])
def test_invalid_files_name_the_field(text, expected):
    with pytest.raises(pf.InvalidProjectFile) as info:
        pf.loads(text.encode())
    assert expected in str(info.value)
    assert str(info.value).startswith(".repoctx/project.yaml")


def test_unquoted_yaml_timestamps_are_read_as_text():
    loaded = pf.loads((BASE + "metadata:\n  created: 2026-01-02T03:04:05Z\n  updated: 2026-01-02\n").encode())
    assert loaded.metadata.created == "2026-01-02T03:04:05Z" and loaded.metadata.updated == "2026-01-02"


text_st = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(text_st.filter(str.strip), st.lists(text_st, max_size=3), max_size=4), text_st)
def test_dump_then_load_is_the_identity(modules, description):
    original = pf.ProjectFile(
        version=1,
        project=pf.Project(name="p", type="library"),
        architecture=pf.Architecture(description=description),
        modules={n: pf.Module(patterns=ps, key_files=[pf.KeyFile("a/b.py", "core")]) for n, ps in modules.items()},
    )
    assert pf.loads(pf.dumps(original)) == original


# --- add_discovery -----------------------------------------------------------------------------


def test_discovery_errors_are_results_not_exceptions(acme, tmp_path):
    assert discover(acme, "nope", "pattern", "x").error == (
        "Module not found: nope (modules: acme-cli, acme-core, ui, web, api, acme_tools, tests)")
    assert "needs a solution" in discover(acme, "web", "issue", "Broken").error
    assert "only for discoveries of type issue" in discover(acme, "web", "rule", "x", "y").error
    assert "read-only" in project.add_discovery(Workspace.open(acme.root, read_only=True),
                                                AddDiscoveryParams("web", "rule", "x")).error
    empty = Workspace.open(tmp_path)
    assert "repoctx project init" in discover(empty, "web", "rule", "x").error
    assert not (tmp_path / ".repoctx").exists()


def test_the_same_discovery_twice_is_kept_once(acme):
    for _ in range(2):
        assert discover(acme, "web", "pattern", "  Prices render through format()  ").recorded
    assert project.load(acme).modules["web"].patterns == ["Prices render through format()"]


def _add_many(root: str, who: str, n: int) -> None:
    ws = Workspace.open(root)
    for i in range(n):
        assert project.add_discovery(ws, AddDiscoveryParams("web", "pattern", f"{who} {i}")).recorded


def test_concurrent_writers_lose_no_discovery(acme):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_add_many, args=(acme.root, who, 15)) for who in ("left", "right")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    patterns = project.load(acme).modules["web"].patterns
    assert sorted(patterns) == sorted(f"{w} {i}" for w in ("left", "right") for i in range(15))


# --- parsed once per change --------------------------------------------------------------------


def test_project_file_is_parsed_once_and_again_only_after_a_change(acme, monkeypatch):
    calls = []
    real = pf.loads
    monkeypatch.setattr(pf, "loads", lambda raw: calls.append(1) or real(raw))
    path = project.file_path(acme)

    def settle() -> None:  # older than the racy window (workspace.stat_key): its stat is trusted
        then = os.stat(path).st_mtime_ns - 10 * 10**9
        os.utime(path, ns=(then, then))

    project._cache.clear()
    settle()
    first = project.load(acme)
    assert project.load(acme) is first and len(calls) == 1
    discover(acme, "web", "pattern", "New")  # rewrites the file (reads it once, under the lock)
    second = project.load(acme)  # written this second: read again each time, as a same-size
    assert second is not first and "New" in second.modules["web"].patterns  # rewrite may keep its stat
    assert project.load(acme) is not second and len(calls) == 4
    settle()
    third = project.load(acme)
    assert project.load(acme) is third and len(calls) == 5


# --- resource errors ----------------------------------------------------------------------------


def test_unknown_module_names_it_in_the_data_block(acme):
    with pytest.raises(ResourceError) as info:
        project.read_module(acme, {"name": "invalidModule"})
    e = info.value
    assert (e.rpc_code, e.message) == (-32602, "Module not found: invalidModule")
    assert e.data == {"resource": "context://module/invalidModule", "module": "invalidModule",
                      "reason": "Module 'invalidModule' not found in project.yaml"}


def test_missing_and_invalid_files_fail_without_leaking_paths(tmp_path):
    ws = Workspace.open(tmp_path)
    with pytest.raises(ResourceError) as info:
        project.read_overview(ws, {})
    assert info.value.rpc_code == -32602 and info.value.message == "Project not initialized"
    write(tmp_path, pf.PROJECT_FILE, BASE + "modules: 3\n")
    with pytest.raises(ResourceError) as info:
        project.read_overview(ws, {})
    e = info.value
    assert e.rpc_code == -32603 and "field `modules`" in e.data["reason"]
    assert str(tmp_path) not in repr((e.message, e.data))


def test_a_project_dir_linking_out_of_the_repository_is_refused(tmp_path):
    outside = tmp_path / "outside"
    write(outside, "project.yaml", BASE)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".repoctx").symlink_to(outside)
    with pytest.raises(pf.InvalidProjectFile, match="outside the repository"):
        project.load(Workspace.open(repo))


# --- size limits ---------------------------------------------------------------------------------


def test_responses_are_truncated_to_the_contract_limits_with_a_note():
    big = pf.Module(description="Big.", patterns=[f"pattern number {i} " + "é" * 40 for i in range(2000)])
    text = project_render.module("big", big, "context://module/big")
    assert len(text.encode()) <= project_render.MODULE_MAX
    assert text.startswith("# Module: big\n") and "*Truncated: " in text and "20 KB limit" in text
    many = pf.ProjectFile(version=1, project=pf.Project("p"),
                          modules={f"m{i}": pf.Module(description="x" * 200) for i in range(1000)})
    overview = project_render.overview(many)
    assert len(overview.encode()) <= project_render.OVERVIEW_MAX and "context://module/{name}" in overview


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000), st.integers(min_value=200, max_value=2000))
def test_fit_keeps_whole_lines_within_the_limit(text, limit):
    out = project_render.fit(text, limit, "hint")
    assert len(out.encode()) <= max(limit, len(text.encode()) if out == text else limit)
    if out != text:
        kept = out.split("\n\n---\n*Truncated")[0]
        assert text.startswith(kept)
