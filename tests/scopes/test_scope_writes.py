"""Writing `.context.yaml`: init and regen derive schema-valid files from the code and
never destroy what people wrote; update_context merges, validates and records the
fingerprint; rehash, `scopes validate` (against the reference conformance cases),
`status --check`, list_contexts paging, and freshness by git content after a clone."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import mcp_client, run_cli, shared_path, write
from repoctx.base.workspace import Workspace
from repoctx.formats import bounded
from repoctx.formats import context_file as cf
from repoctx.registry.catalog import by_tool_name
from repoctx.scopes import generate
from repoctx.views.server import call


def polyglot(root: Path) -> Path:
    """Python, Rust, TypeScript and Go with their manifests; min_tokens 0 makes every source directory a scope."""
    write(root, ".context.config.yaml", "provider: anthropic\nmin_tokens: 0\n")
    write(root, "README.md", "# Poly\n\nA polyglot sample.\n")
    write(root, "pyproject.toml", '[project]\nname = "poly"\ndescription = "A polyglot sample."\n'
          'dependencies = ["msgspec>=0.19", "pyyaml>=6"]\n[project.optional-dependencies]\ntest = ["pytest>=8"]\n')
    write(root, "src/poly/__init__.py", '"""Poly: the Python package."""\n')
    write(root, "src/poly/engine.py", '"""Runs jobs in order."""\nimport yaml\nfrom poly.store import Store\n\n\n'
          'def run(job, retries=3) -> int:\n    """Run one job."""\n    return 1\n\n\nclass Engine:\n    pass\n\n\n'
          "def _hidden():\n    pass\n")
    write(root, "src/poly/store.py", '"""Keeps rows."""\n\n\nclass Store:\n    pass\n')
    write(root, "tests/test_engine.py", "from poly.engine import run\n\n\ndef test_run():\n    assert run(1)\n")
    write(root, "crates/core/Cargo.toml", '[package]\nname = "poly-core"\nversion = "0.1.0"\n'
          'description = "The Rust core."\n\n[dependencies]\nserde = "1"\nrayon = { version = "1.10" }\n')
    write(root, "crates/core/src/lib.rs", "//! The Rust core of poly.\nuse serde::Serialize;\nuse crate::walk::Table;\n\n"
          "/// Parse a line.\npub fn parse(s: &str) -> usize {\n    s.len()\n}\n\npub(crate) fn hidden() {}\n")
    write(root, "crates/core/src/walk/mod.rs", "//! Walking trees.\npub struct Table;\n")
    write(root, "web/package.json", '{"name": "@poly/web", "description": "The web UI.", '
          '"dependencies": {"react": "^18.2.0"}, "scripts": {"test": "vitest run"}}')
    write(root, "web/src/index.ts", "// Entry point of the web UI.\nimport React from 'react';\n"
          "import { fmt } from './util/fmt';\n\n/** Mount the app. */\nexport function mount(el: HTMLElement): void {}\n"
          "export class App {}\n")
    write(root, "web/src/util/fmt.ts", "// Formatting helpers.\nexport const fmt = (n: number) => String(n);\n")
    write(root, "svc/go.mod", "module example.com/poly/svc\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n"
          "\tgolang.org/x/text v0.14.0 // indirect\n)\n")
    write(root, "svc/main.go", '// Package main serves poly over HTTP.\npackage main\n\nimport (\n\t"fmt"\n'
          '\t"github.com/google/uuid"\n\t"example.com/poly/svc/store"\n)\n\n// Serve starts the server.\n'
          "func Serve(addr string) error {\n\treturn nil\n}\n")
    write(root, "svc/store/store.go", "// Package store keeps rows.\npackage store\n\ntype DB struct{}\n\n"
          "func (d *DB) Close() error { return nil }\n")
    return root


SCOPES = [".", "crates", "crates/core", "crates/core/src", "crates/core/src/walk", "src", "src/poly", "svc",
          "svc/store", "tests", "web", "web/src", "web/src/util"]


def tool(ws: Workspace, name: str, **args):
    result = call(ws, by_tool_name()[name], args)
    return json.loads(result.content[0].text), result.is_error


def load(root: Path, scope: str) -> dict:
    return yaml.safe_load((root / scope / ".context.yaml").read_text())


@pytest.fixture
def repo(tmp_path) -> Path:
    return polyglot(tmp_path / "repo")


def test_init_writes_a_schema_valid_file_for_every_scope_and_all_read_fresh(repo):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(shared_path("reference", "dotcontext", "context.schema.json").read_text())
    proc = run_cli("init", "--root", str(repo))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"Wrote {len(SCOPES)} context files (0 unchanged, 0 skipped)."
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal
    listed, _ = tool(Workspace.open(repo), "list_contexts")
    assert [(e["scope"], e["state"]) for e in listed["entries"]] == [(s, "fresh") for s in SCOPES]
    for scope in SCOPES:
        data = load(repo, scope)
        jsonschema.validate(data, schema)
        cf.from_data(data)
        assert data["scope"] == scope
        assert data["maintenance"] == generate.MAINTENANCE
        derived = [k for k in ("summary", "files", "interfaces", "subdirectories", "testing", "exports", "project",
                               "structure", "evidence", "maintenance") if k in data]
        derived += [f"dependencies.{k}" for k in data.get("dependencies", {})]
        assert sorted(data["derived_fields"]) == sorted(derived), scope


def test_init_derives_purposes_exports_dependencies_tests_and_the_root(repo):
    run_cli("init", "--root", str(repo), check=True)
    poly = load(repo, "src/poly")
    assert poly["summary"] == "Poly: the Python package."
    assert {f["name"]: f["purpose"] for f in poly["files"]} == {
        "__init__.py": "Poly: the Python package.", "engine.py": "Runs jobs in order.", "store.py": "Keeps rows."}
    assert poly["exports"] == ["run(job, retries=3) -> int", "class Engine", "class Store"]
    assert poly["interfaces"] == [{"name": "run(job, retries=3) -> int", "description": "Run one job."}]
    assert poly["dependencies"] == {"external": ["pyyaml>=6"]}
    assert load(repo, "tests")["dependencies"] == {"internal": ["src/poly"]}
    assert load(repo, "tests")["testing"] == ["pytest tests"]

    core = load(repo, "crates/core/src")
    assert core["exports"] == ["parse(s: &str) -> usize"]
    assert core["dependencies"] == {"internal": ["crates/core/src/walk"], "external": ["serde 1"]}
    assert load(repo, "crates/core")["testing"] == ["cd crates/core && cargo test"]
    assert load(repo, "crates/core")["dependencies"] == {"external": ["rayon 1.10", "serde 1"]}

    web = load(repo, "web/src")
    assert web["exports"] == ["mount(el: HTMLElement): void", "class App"]
    assert web["dependencies"] == {"internal": ["web/src/util"], "external": ["react ^18.2.0"]}
    assert load(repo, "web")["testing"] == ["cd web && npm test"]
    assert load(repo, "web/src/util")["exports"] == ["fmt(n: number)"]

    svc = load(repo, "svc")
    assert svc["summary"].startswith("Package main serves poly over HTTP.")
    assert svc["exports"] == ["Serve(addr string) error"]
    assert svc["dependencies"] == {"internal": ["svc/store"], "external": ["github.com/google/uuid v1.6.0"]}
    assert load(repo, "svc/store")["exports"] == ["type DB struct", "DB.Close() error"]
    assert svc["testing"] == ["cd svc && go test ./..."]

    root = load(repo, ".")
    assert root["project"] == {"name": "poly", "description": "A polyglot sample.", "language": "python",
                               "package_manager": "pip"}
    assert root["summary"].startswith("A polyglot sample.")
    assert root["testing"] == ["pytest"]
    # Parents list their children's final summaries.
    subs = {s["name"]: s["summary"] for s in root["subdirectories"]}
    assert subs["web/"] == "The web UI."
    assert [s["path"] for s in root["structure"]] == ["crates", "crates/core", "src", "src/poly", "svc", "tests", "web"]
    assert {s["name"]: s["summary"] for s in load(repo, "src")["subdirectories"]} == {"poly/": "Poly: the Python package."}


def test_regen_refreshes_derived_fields_and_keeps_what_people_wrote(repo):
    run_cli("init", "--root", str(repo), check=True)
    path = repo / "src/poly/.context.yaml"
    data = yaml.safe_load(path.read_text())
    human = {
        "summary": "The engine room: jobs go in, results come out.",
        "decisions": [{"what": "Jobs run in-process", "why": "Simplicity", "tradeoff": "No isolation"}],
        "constraints": ["No network access"],
        "current_state": {"working": ["run"], "broken": ["retries"], "in_progress": ["cancel"]},
        "todos": ["Add cancellation"],
        "environment": ["POLY_HOME"],
        "maintenance": "Ask the jobs team before changing the retry rules.",
    }
    assert "maintenance" in data["derived_fields"]
    data.update(human)
    data["files"][1]["purpose"] = "Hand-written purpose"  # still listed in derived_fields: machine-owned
    # Written as repoctx writes it: PyYAML's own dumper leaves a fingerprint such as `123456e7`
    # bare, which YAML 1.2 (and the schema's reader) reads as a number (the test failed so).
    path.write_text(bounded.dump_yaml(data, sort_keys=False))
    web = repo / "web/src/.context.yaml"
    wdata = yaml.safe_load(web.read_text())
    wdata["exports"] = ["mount — hand-curated"]
    wdata["derived_fields"].remove("exports")  # taken over by a person
    web.write_text(bounded.dump_yaml(wdata, sort_keys=False))

    write(repo, "src/poly/extra.py", '"""More jobs."""\n\n\ndef more():\n    pass\n')
    write(repo, "web/src/more.ts", "export function later(): void {}\n")
    assert run_cli("regen", "--root", str(repo)).returncode == 0
    after = load(repo, "src/poly")
    for key, value in human.items():
        assert after[key] == value, key
    assert "summary" not in after["derived_fields"] and "maintenance" not in after["derived_fields"]
    assert "more()" in after["exports"]
    assert {f["name"] for f in after["files"]} == {"__init__.py", "engine.py", "extra.py", "store.py"}
    assert load(repo, "web/src")["exports"] == ["mount — hand-curated"]
    assert "exports" not in load(repo, "web/src")["derived_fields"]
    assert "maintenance" in load(repo, "web/src")["derived_fields"]  # repoctx's text: still repoctx's
    # The parent lists the child's summary as it now is, edited or not.
    assert {s["name"]: s["summary"] for s in load(repo, "src")["subdirectories"]}["poly/"] == \
        "The engine room: jobs go in, results come out."
    listed, _ = tool(Workspace.open(repo), "list_contexts")
    assert all(e["state"] == "fresh" for e in listed["entries"])


def test_regen_rewrites_nothing_that_has_not_changed(repo):
    run_cli("init", "--root", str(repo), check=True)
    before = {s: (repo / s / ".context.yaml").read_bytes() for s in SCOPES}
    proc = run_cli("--json", "regen", "--root", str(repo))
    assert json.loads(proc.stdout) == {"root": str(repo.resolve()), "written": [], "unchanged": len(SCOPES), "skipped": []}
    assert before == {s: (repo / s / ".context.yaml").read_bytes() for s in SCOPES}


def test_regen_stale_and_subtrees(repo):
    run_cli("init", "--root", str(repo), check=True)
    write(repo, "svc/store/more.go", "package store\n\nfunc Open() {}\n")
    write(repo, "web/src/util/x.ts", "export const x = 1;\n")
    out = json.loads(run_cli("--json", "regen", "--stale", "--root", str(repo)).stdout)
    assert out["written"] == ["svc/store", "web/src/util"]
    write(repo, "svc/store/more.go", "package store\n\nfunc Open() {}\nfunc Close() {}\n")
    write(repo, "web/src/util/x.ts", "export const x = 2;\n")
    out = json.loads(run_cli("--json", "regen", "svc", "--root", str(repo)).stdout)
    assert out["written"] == ["svc/store"] and out["unchanged"] == 1
    proc = run_cli("--json", "regen", "../elsewhere", "--root", str(repo))
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"] == "Invalid scope: path traversal detected"


def test_invalid_and_newer_files_are_left_alone_and_reported(repo):
    write(repo, "svc/.context.yaml", "version: 1\nsummary: [unclosed\n")
    write(repo, "tests/.context.yaml", "version: 2\nsummary: from the future\n")
    proc = run_cli("--json", "init", "--root", str(repo))
    out = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert [s["scope"] for s in out["skipped"]] == ["svc", "tests"]
    assert "unsupported schema version 2" in out["skipped"][1]["reason"]
    assert (repo / "svc/.context.yaml").read_text() == "version: 1\nsummary: [unclosed\n"
    assert (repo / "tests/.context.yaml").read_text() == "version: 2\nsummary: from the future\n"


def test_update_context_merges_validates_and_records_the_fingerprint(repo):
    run_cli("init", "--root", str(repo), check=True)
    os.utime(repo / "svc/main.go", ns=(1, 1))
    ws = Workspace.open(repo)
    assert tool(ws, "check_freshness", scope="svc")[0]["state"] == "stale"
    data, is_error = tool(ws, "update_context", scope="svc",
                          fields={"decisions": [{"what": "HTTP only", "why": "Clients"}], "summary": "The service."})
    assert not is_error and data["updated"] and data["fields"] == ["decisions", "summary"]
    check, _ = tool(ws, "check_freshness", scope="svc")
    assert check["state"] == "fresh" and check["fingerprint"]["stored"] == data["fingerprint"]
    saved = load(repo, "svc")
    assert saved["summary"] == "The service." and saved["decisions"] == [{"what": "HTTP only", "why": "Clients"}]
    assert "summary" not in saved["derived_fields"] and "exports" in saved["derived_fields"]
    # Regeneration keeps what the agent wrote.
    run_cli("regen", "svc", "--root", str(repo), check=True)
    assert load(repo, "svc")["summary"] == "The service."

    before = (repo / "svc/.context.yaml").read_bytes()
    for fields, fragment in [
        ({"decisions": [{"what": "no why"}]}, "decisions[0]"),
        ({"files": "not a list"}, "files"),
        ({"summary": None}, "summary"),
        ({"fingerprint": "00000000"}, "managed by repoctx"),
        ({"nonsense": 1}, 'Unknown field "nonsense"'),
        ({}, "No fields"),
        ({"evidence": {"collected_at": "now", "coverage_percent": 140}}, "coverage_percent"),
    ]:
        data, is_error = tool(ws, "update_context", scope="svc", fields=fields)
        assert is_error and not data["updated"] and fragment in data["error"], fields
        assert (repo / "svc/.context.yaml").read_bytes() == before, fields
    data, is_error = tool(ws, "update_context", scope="svc", fields={"todos": ["x"], "environment": None})
    assert not is_error and "environment" not in load(repo, "svc")


def test_update_context_creates_a_missing_file_and_refuses_outside_the_root(repo, tmp_path):
    ws = Workspace.open(repo)
    data, is_error = tool(ws, "update_context", scope="svc/store", fields={"todos": ["Add indexes"]})
    assert not is_error and data["created"]
    saved = load(repo, "svc/store")
    assert saved["todos"] == ["Add indexes"] and saved["exports"] == ["type DB struct", "DB.Close() error"]
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", repo / "link")
    for scope in ["..", "../outside", "/etc", "link"]:
        data, is_error = tool(ws, "update_context", scope=scope, fields={"todos": ["x"]})
        assert is_error and data["error"] == "Invalid scope: path traversal detected", scope
    assert list((tmp_path / "outside").iterdir()) == []
    data, is_error = tool(ws, "update_context", scope="nowhere", fields={"todos": ["x"]})
    assert is_error and data["error"] == 'No directory at scope "nowhere"'
    data, is_error = tool(Workspace.open(repo, read_only=True), "update_context", scope="svc", fields={"todos": ["x"]})
    assert is_error and "read-only" in data["error"]


@pytest.mark.anyio
async def test_update_context_over_mcp_and_not_in_read_only_servers(repo):
    async with mcp_client("--root", str(repo)) as client:
        result = await client.call_tool("update_context", {"scope": "web", "fields": {"todos": ["Dark mode"]}})
        assert not result.is_error and result.structured_content["updated"] is True
    assert load(repo, "web")["todos"] == ["Dark mode"]
    async with mcp_client("--root", str(repo), "--read-only") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "update_context" not in names and "list_contexts" in names


def test_concurrent_updates_both_land(repo):
    run_cli("init", "--root", str(repo), check=True)
    import sys

    procs = [subprocess.Popen([sys.executable, "-m", "repoctx", "update", "web", "--root", str(repo),
                               "--fields", json.dumps({field: [f"{field} {i}" for i in range(3)]})],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for field in ("todos", "constraints", "environment", "events")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    saved = load(repo, "web")
    assert all(saved[f] == [f"{f} {i}" for i in range(3)] for f in ("todos", "constraints", "environment", "events"))


def test_rehash_records_fingerprints_and_keeps_comments(repo):
    run_cli("init", "--root", str(repo), check=True)
    hand = ("# Written by hand; keep this comment.\nversion: 1\nlast_updated: 2026-01-01T00:00:00Z\n"
            "fingerprint: '00000000'  # was stale\nscope: tests\nsummary: >-\n  Tests, folded\n  over two lines.\n"
            "maintenance: Keep it.\n")
    (repo / "tests/.context.yaml").write_text(hand)
    os.utime(repo / "svc/main.go", ns=(1, 1))
    ws = Workspace.open(repo)
    stale = [e["scope"] for e in tool(ws, "list_contexts")[0]["entries"] if e["state"] == "stale"]
    assert stale == ["svc", "tests"]
    before = load(repo, "svc")
    proc = run_cli("--json", "rehash", "--root", str(repo))
    assert json.loads(proc.stdout)["written"] == SCOPES
    assert all(e["state"] == "fresh" for e in tool(ws, "list_contexts")[0]["entries"])
    text = (repo / "tests/.context.yaml").read_text()
    assert text.startswith("# Written by hand; keep this comment.\n") and "# was stale" in text
    assert "Tests, folded\n  over two lines." in text and yaml.safe_load(text)["last_updated"] != "2026-01-01T00:00:00Z"
    after = load(repo, "svc")
    assert {k: v for k, v in after.items() if k not in ("fingerprint", "last_updated")} == \
        {k: v for k, v in before.items() if k not in ("fingerprint", "last_updated")}


def conformance_cases():
    base = shared_path("reference", "dotcontext", "conformance")
    for meta in sorted(base.glob("*/*.meta.json")):
        yield meta.name.removesuffix(".meta.json"), json.loads(meta.read_text()), meta.with_name(
            meta.name.replace(".meta.json", ".yaml")).read_bytes()


def test_scopes_validate_agrees_with_every_conformance_case(tmp_path):
    repo = tmp_path / "repo"
    cases = list(conformance_cases())
    assert len(cases) >= 20
    for name, _meta, text in cases:
        write(repo, f"cases/{name}/.context.yaml", text)
    out = json.loads(run_cli("--json", "scopes", "validate", "--root", str(repo)).stdout)
    problems = {p["scope"].removeprefix("cases/"): p for p in out["problems"]}
    for name, meta, _text in cases:
        if meta["expected"] == "valid":
            assert name not in problems, (name, problems.get(name))
        else:
            assert name in problems and not problems[name]["valid"], name
            if "error_field" in meta:
                named = problems[name].get("field", "") + " " + problems[name]["error"]
                assert meta["error_field"] in named, (name, problems[name])
    invalid = sum(1 for _, m, _ in cases if m["expected"] == "invalid")
    assert (out["valid"], out["invalid"]) == (len(cases) - invalid, invalid)
    assert run_cli("scopes", "validate", "--root", str(repo)).returncode == 1
    for name, meta, _ in cases:
        if meta["expected"] == "invalid":
            (repo / f"cases/{name}/.context.yaml").unlink()
    assert run_cli("scopes", "validate", "--root", str(repo)).returncode == 0


def test_strict_validation_finds_what_drifted_from_the_code(repo):
    run_cli("init", "--root", str(repo), check=True)
    assert run_cli("scopes", "validate", "--strict", "--root", str(repo)).returncode == 0
    (repo / "src/poly/store.py").unlink()
    write(repo, "src/poly/engine.py", '"""Runs jobs."""\n\n\ndef start():\n    pass\n')
    write(repo, "web/src/new.ts", "export const y = 1;\n")
    proc = run_cli("--json", "scopes", "validate", "--strict", "--root", str(repo))
    assert proc.returncode == 1
    found = {(p["scope"], f["kind"], f["name"]) for p in json.loads(proc.stdout)["problems"] for f in p["findings"]}
    assert found == {
        ("src/poly", "phantom_file", "store.py"),
        ("src/poly", "phantom_export", "run"),
        ("src/poly", "phantom_export", "Engine"),
        ("src/poly", "phantom_export", "Store"),
        ("web/src", "unlisted_file", "new.ts"),
    }
    assert run_cli("scopes", "validate", "--root", str(repo)).returncode == 0  # schema-valid all the same
    run_cli("regen", "--root", str(repo), check=True)
    assert run_cli("scopes", "validate", "--strict", "--root", str(repo)).returncode == 0


def test_status_check_fails_on_stale_or_missing(repo):
    assert run_cli("status", "--check", "--root", str(repo)).returncode == 1  # all missing
    run_cli("init", "--root", str(repo), check=True)
    proc = run_cli("status", "--check", "--root", str(repo))
    assert proc.returncode == 0 and "check passed" in proc.stdout
    os.utime(repo / "web/package.json", ns=(1, 1))
    proc = run_cli("--json", "status", "--check", "--root", str(repo))
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["check"] == {"passed": False, "fresh": len(SCOPES) - 1, "stale": 1, "missing": 0,
                                                "invalid": 0}


def test_list_contexts_filters_and_pages_leaving_the_default_as_the_contract_says(repo):
    run_cli("init", "--root", str(repo), check=True)
    (repo / "svc/store/.context.yaml").unlink()
    os.utime(repo / "web/package.json", ns=(1, 1))
    ws = Workspace.open(repo)
    full, _ = tool(ws, "list_contexts")
    assert list(full) == ["root", "total_directories", "skipped_directories", "tracked", "entries"]
    under, _ = tool(ws, "list_contexts", under="svc")
    assert [e["scope"] for e in under["entries"]] == ["svc", "svc/store"] and under["matched"] == 2
    assert under["total_directories"] == full["total_directories"]
    assert [e["scope"] for e in tool(ws, "list_contexts", state="missing")[0]["entries"]] == ["svc/store"]
    assert [e["scope"] for e in tool(ws, "list_contexts", state="stale", under="web")[0]["entries"]] == ["web"]
    pages, cursor = [], None
    while True:
        args = {"limit": 4} | ({"cursor": cursor} if cursor else {})
        page, is_error = tool(ws, "list_contexts", **args)
        assert not is_error and len(page["entries"]) <= 4 and page["matched"] == len(SCOPES)
        pages += page["entries"]
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    assert pages == full["entries"]
    bad, is_error = tool(ws, "list_contexts", under="../..")
    assert is_error and bad["error"] == "Invalid scope: path traversal detected"
    result = call(ws, by_tool_name()["list_contexts"], {"limit": 0})
    assert result.is_error


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_fresh_after_a_clone_and_stale_exactly_where_content_changed(repo, tmp_path):
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code")
    run_cli("init", "--root", str(repo), check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "context")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    for dirpath, dirnames, filenames in os.walk(clone):  # every mtime differs from the original's
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for f in filenames:
            os.utime(os.path.join(dirpath, f), ns=(10**18, 10**18))
    ws = Workspace.open(clone)
    listed, _ = tool(ws, "list_contexts")
    assert [(e["scope"], e["state"]) for e in listed["entries"]] == [(s, "fresh") for s in SCOPES]
    check, _ = tool(ws, "check_freshness", scope="svc/store")
    assert check["state"] == "fresh" and check["fingerprint"]["stored"] != check["fingerprint"]["computed"]
    for scope in SCOPES:  # still plain v1 files
        cf.from_data(load(clone, scope))
    assert set(load(clone, "svc")["evidence"]) == {"collected_at", "commit_sha"}

    os.utime(clone / "src/poly/store.py", ns=(1, 1))  # touched, same content: still fresh
    write(clone, "svc/store/store.go", (clone / "svc/store/store.go").read_text() + "// edited\n")
    listed, _ = tool(ws, "list_contexts")
    assert [e["scope"] for e in listed["entries"] if e["state"] != "fresh"] == ["svc/store"]
    assert tool(ws, "check_freshness", scope="svc/store")[0]["state"] == "stale"
    write(clone, "web/untracked.ts", "export const u = 1;\n")  # a new file is a change too
    listed, _ = tool(ws, "list_contexts")
    assert [e["scope"] for e in listed["entries"] if e["state"] != "fresh"] == ["svc/store", "web"]
    # regen --stale rewrites exactly those; the others keep their bytes (no churn in the clone).
    before = (clone / "src/poly/.context.yaml").read_bytes()
    out = json.loads(run_cli("--json", "regen", "--stale", "--root", str(clone)).stdout)
    assert out["written"] == ["svc/store", "web"]
    assert (clone / "src/poly/.context.yaml").read_bytes() == before
    assert json.loads(run_cli("--json", "regen", "--root", str(clone)).stdout)["written"] == []


def stderr_on_a_terminal(*args: str) -> str:
    """What `repoctx …` writes to stderr when stderr is a terminal (a pseudo-terminal here)."""
    import pty
    import sys

    leader, follower = pty.openpty()
    proc = subprocess.run([sys.executable, "-m", "repoctx", *args], stdout=subprocess.PIPE, stderr=follower, timeout=120)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the other end is closed and everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.returncode == 0
    return b"".join(chunks).decode()


def test_progress_bar_only_on_a_terminal(repo):
    seen = stderr_on_a_terminal("init", "--root", str(repo))
    assert "init [" in seen and f"{len(SCOPES)}/{len(SCOPES)}" in seen
    for scope in SCOPES:
        (repo / scope / ".context.yaml").unlink()
    assert stderr_on_a_terminal("init", "--quiet", "--root", str(repo)) == ""
