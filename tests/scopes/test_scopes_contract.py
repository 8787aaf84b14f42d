"""The scopes surface against the dotcontext MCP contract: every field, state,
error message and isError rule, the path override, and path confinement."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repoctx import _core
from repoctx.base.workspace import Workspace
from repoctx.registry.catalog import by_tool_name
from repoctx.views.server import call
from sample_repo import CONTEXT, write_context

TRAVERSAL = "Invalid scope: path traversal detected"


def missing(scope: str) -> str:
    return (
        f'No .context.yaml found at scope "{scope}". This scope may be below the min_tokens '
        "threshold; use list_contexts to see eligible scopes."
    )


def tool(ws: Workspace, name: str, **args):
    cmd = by_tool_name()[name]
    result = call(ws, cmd, args)
    data = json.loads(result.content[0].text)
    assert result.structured_content == (data if cmd.mcp.structured else None)
    return data, result.is_error


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "src/core").mkdir(parents=True)
    (root / "src/core/scan.py").write_text("x = 1\n" * 4000)  # 24,000 bytes: 6,000 tokens
    (root / "src/tiny").mkdir()
    (root / "src/tiny/t.py").write_text("y = 2\n")
    (root / "tests").mkdir()
    (root / "tests/test_a.py").write_text("z = 3\n" * 3000)
    (root / "assets").mkdir()
    (root / "assets/logo.png").write_bytes(b"\x89PNG" * 10000)  # not source: not a scope
    write_context(root, ".", "REST API for task management")
    write_context(root, "src/core", "Core scanning.")
    write_context(root, "src", "Source code", fingerprint="deadbeef")
    return root


@pytest.fixture
def ws(repo) -> Workspace:
    return Workspace.open(repo)


def test_list_contexts_shape_states_and_order(ws, repo):
    data, is_error = tool(ws, "list_contexts")
    assert not is_error
    assert data == {
        "root": str(repo.resolve()),
        "total_directories": 4,
        "skipped_directories": 1,  # src/tiny is below min_tokens
        "tracked": 3,
        "entries": [
            {"scope": ".", "state": "fresh", "has_context": True,
             "last_updated": "2026-02-13T10:00:00Z", "summary": "REST API for task management"},
            {"scope": "src", "state": "stale", "has_context": True,
             "last_updated": "2026-02-13T10:00:00Z", "summary": "Source code"},
            {"scope": "src/core", "state": "fresh", "has_context": True,
             "last_updated": "2026-02-13T10:00:00Z", "summary": "Core scanning."},
            {"scope": "tests", "state": "missing", "has_context": False},
        ],
    }
    assert list(data) == ["root", "total_directories", "skipped_directories", "tracked", "entries"]


def test_min_tokens_zero_keeps_every_source_directory(ws, repo):
    (repo / ".context.config.yaml").write_text("provider: openai\nmin_tokens: 0\n")
    data, _ = tool(ws, "list_contexts")
    assert [e["scope"] for e in data["entries"]] == [".", "src", "src/core", "src/tiny", "tests"]
    assert data["skipped_directories"] == 0


def test_check_freshness_fresh_stale_and_missing(ws, repo):
    data, is_error = tool(ws, "check_freshness", scope="src/core")
    fp = _core.fingerprint(str(repo / "src/core"))
    assert (data, is_error) == (
        {"scope": "src/core", "state": "fresh", "fingerprint": {"stored": fp, "computed": fp},
         "last_updated": "2026-02-13T10:00:00Z"},
        False,
    )
    os.utime(repo / "src/core/scan.py", ns=(1, 1))
    data, is_error = tool(ws, "check_freshness", scope="src/core")
    assert data["state"] == "stale" and data["fingerprint"]["stored"] == fp
    assert data["fingerprint"]["computed"] != fp and not is_error  # stale is not an error
    data, is_error = tool(ws, "check_freshness", scope="tests")
    assert (data, is_error) == ({"scope": "tests", "state": "missing", "error": missing("tests")}, True)


def test_query_context_full_and_filtered(ws, repo):
    data, is_error = tool(ws, "query_context", scope="src/core")
    assert not is_error and data["found"] is True and data["scope"] == "src/core"
    ctx = data["context"]
    assert list(ctx) == ["version", "last_updated", "fingerprint", "scope", "summary", "maintenance", "decisions"]
    data, _ = tool(ws, "query_context", scope="src/core", filter=["decisions", "nonsense"])
    assert data["context"] == {
        "version": 1, "scope": "src/core", "fingerprint": ctx["fingerprint"],
        "last_updated": "2026-02-13T10:00:00Z",
        "decisions": [{"what": "Fingerprint uses stat() only", "why": "Performance"}],
    }
    data, is_error = tool(ws, "query_context", scope="src/tiny")
    assert (data, is_error) == ({"found": False, "scope": "src/tiny", "error": missing("src/tiny")}, True)


def test_an_unchanged_context_file_is_parsed_once(ws, repo, monkeypatch):
    from repoctx.scopes import state as scope_state

    reads = []
    real = scope_state.read_contexts
    monkeypatch.setattr(scope_state, "read_contexts", lambda paths: reads.append(paths) or real(paths))
    path = repo / "src/core/.context.yaml"
    os.utime(path, ns=(10**18, 10**18))  # written long ago
    for name in ["query_context", "check_freshness", "query_context"]:
        tool(ws, name, scope="src/core")
    assert len(reads) == 1
    # New text of the same size, its old mtime put back: the change time still moves.
    time.sleep(0.05)  # past the file system's clock tick
    path.write_text(path.read_text().replace("Core scanning.", "Core scanners."))
    os.utime(path, ns=(10**18, 10**18))
    data, _ = tool(ws, "query_context", scope="src/core")
    assert len(reads) == 2 and data["context"]["summary"] == "Core scanners."


def test_a_context_file_written_in_the_last_seconds_is_read_every_time(ws, repo, monkeypatch):
    """File times are coarse: on file systems with a clock tick of a few ms, a same-size rewrite
    right after a read can leave the stat as it was, so such a file is not served from memory."""
    from repoctx.scopes import state as scope_state

    reads = []
    real = scope_state.read_contexts
    monkeypatch.setattr(scope_state, "read_contexts", lambda paths: reads.append(paths) or real(paths))
    for _ in range(3):
        tool(ws, "query_context", scope="src/core")  # the fixture has just written it
    assert len(reads) == 3


def test_unsupported_version_and_corrupt_files(ws, repo):
    (repo / "tests/.context.yaml").write_text(CONTEXT.format(fingerprint="x", scope="tests", summary="s").replace("version: 1", "version: 2"))
    data, is_error = tool(ws, "query_context", scope="tests")
    # The contract's fields as it fixes them; `invalid` is added beside them (issue 22).
    newer = {"reason": "schema version 2, which repoctx does not read (version 1 is the only schema): set "
                       "`version: 1` if the file follows it, or remove the file and run `repoctx init` to write a new one"}
    assert is_error and data == {
        "found": False, "scope": "tests",
        "error": "Unsupported schema version 2 (this tool supports version 1). Upgrade dotcontext to read this file.",
        "invalid": newer,
    }
    data, is_error = tool(ws, "check_freshness", scope="tests")
    assert is_error and data["state"] == "invalid" and data["error"].startswith("Unsupported schema version 2")
    listed, _ = tool(ws, "list_contexts")
    assert {"scope": "tests", "state": "invalid", "has_context": False, "invalid": newer} in listed["entries"]

    for bad in ["version: 1\nsummary: [unclosed\n", "just a string", "version: 1\nscope: .\n",
                CONTEXT.format(fingerprint="x", scope="tests", summary="s") + "extra_field: 1\n", "\xff\xfe"]:
        (repo / "tests/.context.yaml").write_text(bad, errors="surrogateescape")
        data, is_error = tool(ws, "query_context", scope="tests")
        invalid = data.pop("invalid")
        assert (data, is_error) == (
            {"found": False, "scope": "tests", "error": 'Invalid or corrupt .context.yaml at scope "tests"'}, True
        ), bad
        assert invalid["reason"], bad


def test_a_context_file_over_the_bound_is_refused_as_invalid(ws, repo):
    from repoctx.scopes.state import MAX_CONTEXT_BYTES

    (repo / "tests/.context.yaml").write_text("summary: " + "x" * MAX_CONTEXT_BYTES)
    data, is_error = tool(ws, "query_context", scope="tests")
    assert is_error and data["error"] == 'Invalid or corrupt .context.yaml at scope "tests"'


@pytest.mark.parametrize(
    "scope", ["..", "../..", "../../etc", "src/../../etc", "/etc", "src/../..", "src\\..\\..", "a\x00b", "\\..\\x"]
)
def test_traversal_is_refused_with_the_contract_error(ws, scope):
    for name, _key in [("query_context", "found"), ("check_freshness", "state")]:
        data, is_error = tool(ws, name, scope=scope)
        assert is_error and data["error"] == TRAVERSAL and data["scope"] == scope


@pytest.mark.parametrize(
    "scope,normalised", [("src/../src/core", "src/core"), ("src\\core", "src/core"), ("./src/core/", "src/core"), (".", ".")]
)
def test_paths_that_stay_inside_are_normalised_and_served(ws, scope, normalised):
    data, is_error = tool(ws, "query_context", scope=scope)
    assert not is_error and data["scope"] == normalised


def test_absolute_path_under_root_and_dotdot_prefixed_names(ws, repo):
    data, is_error = tool(ws, "check_freshness", scope=str(repo / "src/core"))
    assert not is_error and data["scope"] == "src/core"
    (repo / "..foo").mkdir()
    (repo / "..foo/m.py").write_text("m")
    write_context(repo, "..foo", "dots")
    data, is_error = tool(ws, "query_context", scope="..foo")
    assert not is_error and data["context"]["summary"] == "dots"


def test_symlinks_leading_outside_are_refused(ws, repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    write_context(outside, ".", "secret")
    os.symlink(outside, repo / "escape")
    os.symlink(outside / ".context.yaml", repo / "assets/.context.yaml")
    for scope in ["escape", "assets"]:
        data, is_error = tool(ws, "query_context", scope=scope)
        assert is_error and data["error"] == TRAVERSAL, scope
    listed, _ = tool(ws, "list_contexts")
    assert "escape" not in [e["scope"] for e in listed["entries"]]


def test_path_override_only_for_allowed_roots(repo, tmp_path):
    other = tmp_path / "other"
    (other / "lib").mkdir(parents=True)
    (other / "lib/x.py").write_text("x" * 20000)
    write_context(other, "lib", "Other lib")
    closed = Workspace.open(repo)
    data, is_error = tool(closed, "query_context", scope="lib", path=str(other))
    assert is_error and not data["found"] and "--allow-root" in data["error"]
    data, is_error = tool(closed, "list_contexts", path=str(other))
    assert is_error and data["entries"] == [] and data["total_directories"] == 0 and "error" in data
    data, is_error = tool(closed, "list_contexts", path=str(repo))  # the root itself is always allowed
    assert not is_error

    opened = Workspace.open(repo, allowed_roots=[other])
    data, is_error = tool(opened, "query_context", scope="lib", path=str(other))
    assert not is_error and data["context"]["summary"] == "Other lib"
    data, is_error = tool(opened, "query_context", scope="../repo", path=str(other))
    assert is_error and data["error"] == TRAVERSAL


def test_global_scan_failure(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    ws = Workspace.open(gone)
    gone.rmdir()
    data, is_error = tool(ws, "list_contexts")
    assert is_error and data["entries"] == [] and data["error"] == f'Failed to scan project at "{ws.root}"'


def test_invalid_arguments_are_an_error_result_not_a_crash(ws):
    result = call(ws, by_tool_name()["query_context"], {"scope": 3})
    assert result.is_error and "Invalid arguments" in result.content[0].text
    result = call(ws, by_tool_name()["check_freshness"], {})
    assert result.is_error


@settings(max_examples=150, deadline=None)
@given(scope=st.lists(st.sampled_from(["..", ".", "src", "core", "/", "\\", "etc", "~", "%2e%2e", "\x00", "é"]), max_size=6).map("".join))
def test_no_scope_reads_outside_the_root(tmp_path_factory, scope):
    root = tmp_path_factory.mktemp("confine")
    (root / "repo/src/core").mkdir(parents=True)
    write_context(root / "repo", "src/core", "inside")
    write_context(root, ".", "outside")
    ws = Workspace.open(root / "repo")
    for name in ["query_context", "check_freshness"]:
        data, _ = tool(ws, name, scope=scope)
        if name == "query_context" and data["found"]:
            assert data["context"]["summary"] != "outside"
        if "error" in data and data["error"] != TRAVERSAL:
            # Whatever was served was resolved inside the root.
            _rel, abs_ = ws.resolve(scope)
            assert abs_.startswith(ws.root)
