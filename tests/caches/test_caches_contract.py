"""The caches contract on our own fixtures: errors and exit codes, confinement
of cache names, verification of tampered caches, the in-memory view, builds
(markdown and repository), list and inspect semantics, aliases and the
allowlist."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from conftest import mcp_client, run_cli, write
from repoctx.base.workspace import Workspace
from repoctx.caches import engine as caches
from repoctx.formats import cache as fmt

ERR = {code: json.dumps({"error": {"code": code, "message": msg}}, separators=(",", ":")) + "\n"
       for code, msg in fmt.MESSAGES.items()}
DOCS = {
    "deploy.md": "Deployment guide for deploy deploy.",
    "Ops/Security.md": "Security hardening guide",
    "empty.md": "",
}


def build(tmp: Path, name: str = "docs", docs: dict | None = None, root: Path | None = None, **kw) -> Path:
    """A cache built in-process from `docs` under `root` (default tmp/caches)."""
    src = tmp / f"src-{name}"
    for rel, text in (DOCS if docs is None else docs).items():
        write(src, rel, text)
    root = root or tmp / "caches"
    ws = Workspace.open(tmp, cache_root=root)
    caches.build(ws, caches.BuildParams(sources=str(src), cache=name, **kw))
    return root


def resolve(root: Path, cache: str, query: str = "guide", budget: int = 100) -> str:
    cmd = next(c for c in caches.COMMANDS if c.tool == "context_resolve")
    ws = Workspace.open(root, cache_root=root)
    return cmd.encode(cmd.handler(ws, cmd.parse({"cache": cache, "query": query, "budget": budget})))


def inspect(root: Path, cache: str) -> str:
    cmd = next(c for c in caches.COMMANDS if c.tool == "context_inspect_cache")
    ws = Workspace.open(root, cache_root=root)
    return cmd.encode(cmd.handler(ws, cmd.parse({"cache": cache})))


def cli(root: Path, *args: str):
    return run_cli(*args, "--json", "--cache-root", str(root))


def settle() -> None:
    """Files changed within the racy window (2 s) are re-verified on every call; wait that out."""
    time.sleep(caches.SETTLE_NS / 1e9 + 0.1)


# --- confinement ---------------------------------------------------------------


def test_names_leaving_the_root_are_cache_missing(tmp_path):
    root = build(tmp_path)
    outside = build(tmp_path, "secret", root=tmp_path / "elsewhere")
    os.symlink(outside / "secret", root / "link_out")
    os.symlink(root / "docs", root / "link_in")
    for name in ["..", "../elsewhere/secret", "docs/../../elsewhere/secret", "docs/..", str(outside / "secret"),
                 "/docs", "\\docs", "C:\\docs", "", ".", "./", "link_out", "nope", "docs/documents/..x"]:
        assert resolve(root, name) == inspect(root, name) == ERR["cache_missing"], name
    proc = cli(root, "cache", "inspect", "--cache", "link_out")
    assert (proc.returncode, proc.stdout) == (4, ERR["cache_missing"])
    # A symlink that stays inside the root is the cache it points to.
    assert resolve(root, "link_in") == resolve(root, "docs") == resolve(root, "./docs/")
    assert json.loads(resolve(root, "docs"))["selection"]["documents_considered"] == 3


@pytest.mark.anyio
async def test_mcp_refuses_escapes_and_nul(tmp_path):
    root = build(tmp_path)
    async with mcp_client("--cache-root", str(root), "--profile", "caches") as client:
        for name in ["../x", "/etc", "do\x00cs", "docs/../.."]:
            for tool in ("context_resolve", "context_inspect_cache"):
                r = await client.call_tool(tool, {"cache": name, "query": "x", "budget": 1})
                assert r.is_error and r.content[0].text == ERR["cache_missing"], (tool, name)


def test_symlinked_files_inside_a_cache_are_never_followed(tmp_path):
    root = build(tmp_path)
    docs = root / "docs" / "documents"
    victim = sorted(docs.iterdir())[0]
    copy = tmp_path / "copy.json"
    copy.write_bytes(victim.read_bytes())
    victim.unlink()
    victim.symlink_to(copy)  # same bytes, but through a link
    assert resolve(root, "docs") == ERR["cache_invalid"]
    manifest = root / "docs" / "manifest.json"
    saved = tmp_path / "manifest.json"
    saved.write_bytes(manifest.read_bytes())
    manifest.unlink()
    manifest.symlink_to(saved)
    proc = cli(root, "cache", "inspect", "--cache", "docs")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"cache_version": "", "document_count": 0, "total_bytes": 0, "valid": False}


# --- verification --------------------------------------------------------------


def _doc_files(cache: Path) -> list[Path]:
    return sorted((cache / "documents").iterdir())


def _rewrite_doc(path: Path, **fields) -> None:
    doc = json.loads(path.read_text())
    doc.update(fields)
    path.write_text(json.dumps(doc, separators=(",", ":")))


def _replace_with_dir(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _edit_json(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data, indent=2))


TAMPERS = {
    "content changed": lambda c: _rewrite_doc(_doc_files(c)[0], content="Tampered."),
    "version field changed": lambda c: _rewrite_doc(_doc_files(c)[0], version="sha256:" + "0" * 64),
    "id changed": lambda c: _rewrite_doc(_doc_files(c)[0], id="other.md"),
    "document not JSON": lambda c: _doc_files(c)[0].write_text("{"),
    "document missing": lambda c: _doc_files(c)[0].unlink(),
    "document is a directory": lambda c: _replace_with_dir(_doc_files(c)[0]),
    "orphan file": lambda c: (c / "documents" / "ffffffffffff.json").write_text("{}"),
    "index entry changed": lambda c: _edit_json(c / "index.json", lambda d: d.update({"deploy.md": "documents/x.json"})),
    "index missing": lambda c: (c / "index.json").unlink(),
    "manifest missing": lambda c: (c / "manifest.json").unlink(),
    "manifest not JSON": lambda c: (c / "manifest.json").write_text("not json"),
    "cache_version wrong": lambda c: _edit_json(c / "manifest.json", lambda d: d.update(cache_version="sha256:" + "0" * 64)),
    "future build_config": lambda c: _edit_json(c / "manifest.json", lambda d: d["build_config"].update(version="999")),
    "document_count wrong": lambda c: _edit_json(c / "manifest.json", lambda d: d.update(document_count=2)),
    "entry file outside documents/": lambda c: _edit_json(
        c / "manifest.json", lambda d: d["documents"][0].update(file="../../etc/passwd")),
    "documents/ missing": lambda c: shutil.rmtree(c / "documents"),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_a_tampered_cache_is_cache_invalid(tmp_path, tamper):
    root = build(tmp_path)
    assert not resolve(root, "docs").startswith('{"error"')
    TAMPERS[tamper](root / "docs")
    assert resolve(root, "docs") == ERR["cache_invalid"]


def test_cli_exit_code_of_a_tampered_cache(tmp_path):
    root = build(tmp_path)
    _rewrite_doc(_doc_files(root / "docs")[0], content="Tampered.")
    proc = cli(root, "resolve", "--cache", "docs", "--query", "x", "--budget", "10")
    assert (proc.returncode, proc.stdout) == (5, ERR["cache_invalid"])


@pytest.mark.parametrize("watching", [True, False], ids=["inotify", "stat-only"])
def test_the_verified_view_is_reused_until_a_file_changes(tmp_path, monkeypatch, watching):
    root = build(tmp_path)
    if watching:
        if not caches.load_view(str(root / "docs"), ".").watching:
            pytest.skip("inotify is not available here")
    else:  # a watch that cannot begin: every document's stat key is checked instead
        real_watch = caches._core.CacheWatch
        monkeypatch.setattr(caches._core, "CacheWatch", lambda dirs: real_watch([str(tmp_path / "absent")]))
        settle()
    loads = []
    real_load = caches._core.load_cache
    monkeypatch.setattr(caches._core, "load_cache", lambda *a: loads.append(1) or real_load(*a))
    first = resolve(root, "docs")
    assert resolve(root, "docs", "security") != first and resolve(root, "docs") == first
    assert len(loads) == 1  # verified once, then scoring only
    victim = next(p for p in _doc_files(root / "docs") if b"guide" in p.read_bytes())
    original = victim.read_bytes()
    victim.write_bytes(original.replace(b"guide", b"GUIDE"))  # same size, new content
    assert resolve(root, "docs") == ERR["cache_invalid"]
    victim.write_bytes(original)
    if not watching:
        settle()
    assert resolve(root, "docs") == first == resolve(root, "docs")
    assert len(loads) == 3
    (root / "docs" / "index.json").write_bytes((root / "docs" / "index.json").read_bytes())  # rewritten, same bytes
    assert resolve(root, "docs") == first and len(loads) == 4  # any change means verifying again


@pytest.mark.anyio
async def test_a_served_cache_fails_as_soon_as_a_document_is_tampered(tmp_path):
    root = build(tmp_path)
    victim = _doc_files(root / "docs")[0]
    original = victim.read_bytes()
    args = {"cache": "docs", "query": "guide", "budget": 100}
    async with mcp_client("--cache-root", str(root), "--profile", "caches") as client:
        good = (await client.call_tool("context_resolve", args)).content[0].text
        assert (await client.call_tool("context_resolve", args)).content[0].text == good
        victim.write_bytes(original.replace(b"e", b"E", 1))
        r = await client.call_tool("context.resolve", args)
        assert r.is_error and r.content[0].text == ERR["cache_invalid"]
        victim.write_bytes(original)
        assert (await client.call_tool("context_resolve", args)).content[0].text == good


# --- selection details ---------------------------------------------------------


def test_budget_zero_selects_nothing_even_empty_documents(tmp_path):
    root = build(tmp_path)
    out = json.loads(resolve(root, "docs", "guide", 0))
    assert out["documents"] == []
    assert out["selection"] == {"query": "guide", "budget": 0, "tokens_used": 0, "documents_considered": 3,
                                "documents_selected": 0, "documents_excluded_by_budget": 3}
    # Budget 1: the empty document (0 tokens) fits, the others do not.
    assert [d["id"] for d in json.loads(resolve(root, "docs", "guide", 1))["documents"]] == ["empty.md"]


def test_repeated_query_terms_keep_the_score_within_one(tmp_path):
    root = build(tmp_path, docs={"a.md": "deploy"})
    doc = json.loads(resolve(root, "docs", "deploy Deploy DEPLOY", 10))["documents"][0]
    assert doc["score"] == 1.0 and doc["why"] == {"query_terms": ["deploy"] * 3, "term_matches": 1, "total_words": 1}


def test_ids_are_lowercased_paths_and_output_is_ordered(tmp_path):
    root = build(tmp_path)
    out = json.loads(resolve(root, "docs", "guide", 100))
    assert [(d["id"], d["score"]) for d in out["documents"]] == [
        ("ops/security.md", 0.33333334), ("deploy.md", 0.2), ("empty.md", 0.0)]


# --- arguments -------------------------------------------------------------------


@pytest.mark.anyio
async def test_invalid_arguments_are_contract_errors(tmp_path):
    root = build(tmp_path)
    cases = [
        ({"cache": "docs", "query": "x", "budget": -1}, "invalid_budget"),
        ({"cache": "docs", "query": "x", "budget": "10"}, "invalid_budget"),
        ({"cache": "docs", "query": "x", "budget": 1.5}, "invalid_budget"),
        ({"cache": "docs", "query": "x", "budget": True}, "invalid_budget"),
        ({"cache": "docs", "query": "x", "budget": 2**63}, "invalid_budget"),
        ({"cache": "docs", "query": "x"}, "invalid_budget"),
        ({"cache": "docs", "query": 5, "budget": 1}, "invalid_query"),
        ({"cache": "docs", "budget": 1}, "invalid_query"),
        ({"cache": 7, "query": "x", "budget": 1}, "cache_missing"),
        ({"query": "x", "budget": 1}, "cache_missing"),
    ]
    async with mcp_client("--cache-root", str(root), "--profile", "caches") as client:
        for args, code in cases:
            r = await client.call_tool("context_resolve", args)
            assert r.is_error and r.content[0].text == ERR[code], args
        r = await client.call_tool("context_inspect_cache", {})
        assert r.is_error and r.content[0].text == ERR["cache_missing"]
        # Unknown fields are ignored (list_caches never takes a client-supplied root).
        r = await client.call_tool("context_list_caches", {"root": "/"})
        assert r.content[0].text == '{"caches":[{"path":"docs","has_manifest":true}]}\n'
        ok = await client.call_tool("context_resolve", {"cache": "docs", "query": "", "budget": 2**63 - 1})
        assert not ok.is_error


def test_cli_budget_errors_and_formats(tmp_path):
    root = build(tmp_path)
    bad = cli(root, "resolve", "--cache", "docs", "--query", "x", "--budget", "-3")
    assert (bad.returncode, bad.stdout) == (3, ERR["invalid_budget"])
    not_utf8 = cli(root, "resolve", "--cache", "docs", "--query", os.fsdecode(b"caf\xe9"), "--budget", "3")
    assert (not_utf8.returncode, not_utf8.stdout) == (2, ERR["invalid_query"])
    as_json = cli(root, "resolve", "--cache", "docs", "--query", "guide", "--budget", "50")
    fmt_json = run_cli("resolve", "--cache", "docs", "--query", "guide", "--budget", "50", "--format", "json",
                       "--cache-root", str(root))
    pretty = run_cli("resolve", "--cache", "docs", "--query", "guide", "--budget", "50", "--cache-root", str(root))
    assert as_json.stdout == fmt_json.stdout and as_json.stdout.endswith("}\n") and "\n" not in as_json.stdout[:-1]
    assert pretty.stdout == msgspec.json.format(as_json.stdout.strip().encode(), indent=2).decode() + "\n"


def test_env_cache_root_and_default_root(tmp_path):
    root = build(tmp_path)
    env = {**os.environ, "CONTEXT_CACHE_ROOT": str(root)}
    proc = subprocess.run([sys.executable, "-m", "repoctx", "cache", "list", "--json"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert proc.stdout == '{"caches":[{"path":"docs","has_manifest":true}]}\n'
    # Without either, the cache root is <root>/.repoctx/caches.
    repo = tmp_path / "repo"
    build(tmp_path, "mine", root=repo / ".repoctx" / "caches")
    env.pop("CONTEXT_CACHE_ROOT")
    proc = subprocess.run([sys.executable, "-m", "repoctx", "cache", "list", "--json", "--root", str(repo)],
                          capture_output=True, text=True, env=env)
    assert proc.stdout == '{"caches":[{"path":"mine","has_manifest":true}]}\n'


# --- list and inspect --------------------------------------------------------------


def test_list_caches_enumerates_immediate_directories_in_byte_order(tmp_path):
    root = build(tmp_path, "a")
    for name in ("B", "z", "é", "no_manifest", "manifest_dir", "manifest_link"):
        (root / name).mkdir()
    for name in ("B", "z", "é"):
        (root / name / "manifest.json").write_text("not even JSON")  # existence only
    (root / "manifest_dir" / "manifest.json").mkdir()
    (root / "manifest_link" / "manifest.json").symlink_to(root / "B" / "manifest.json")
    (root / "file.txt").write_text("ignored")
    (root / "dir_link").symlink_to(root / "a")
    proc = cli(root, "cache", "list")
    got = json.loads(proc.stdout)["caches"]
    assert [c["path"] for c in got] == ["B", "a", "manifest_dir", "manifest_link", "no_manifest", "z", "é"]
    assert {c["path"]: c["has_manifest"] for c in got} == {
        "B": True, "a": True, "manifest_dir": False, "manifest_link": False, "no_manifest": False, "z": True, "é": True}
    missing = cli(tmp_path / "nowhere", "cache", "list")
    assert (missing.returncode, missing.stdout) == (4, ERR["cache_missing"])


def test_inspect_reports_validity_without_failing(tmp_path):
    root = build(tmp_path)
    cache = root / "docs"
    doc_bytes = sum(p.stat().st_size for p in _doc_files(cache))
    out = json.loads(cli(root, "cache", "inspect", "--cache", "docs").stdout)
    manifest = json.loads((cache / "manifest.json").read_text())
    assert out == {"cache_version": manifest["cache_version"], "document_count": 3, "total_bytes": doc_bytes, "valid": True}
    _doc_files(cache)[0].unlink()
    proc = cli(root, "cache", "inspect", "--cache", "docs")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"cache_version": manifest["cache_version"], "document_count": 3,
                                       "total_bytes": 0, "valid": False}
    _edit_json(cache / "manifest.json", lambda d: d.pop("document_count"))
    assert json.loads(cli(root, "cache", "inspect", "--cache", "docs").stdout)["document_count"] == 0
    (cache / "manifest.json").unlink()
    assert json.loads(cli(root, "cache", "inspect", "--cache", "docs").stdout) == {
        "cache_version": "", "document_count": 0, "total_bytes": 0, "valid": False}


# --- building --------------------------------------------------------------------


def test_build_errors_have_their_codes_and_leave_nothing_behind(tmp_path):
    root = tmp_path / "caches"
    src = tmp_path / "src"
    write(src, "a.md", "alpha")

    def build_cli(*extra: str, sources: Path = src, name: str = "c"):
        return cli(root, "cache", "build", "--sources", str(sources), "--cache", name, *extra)

    assert json.loads(build_cli("--json").stdout)["document_count"] == 1
    version = json.loads((root / "c" / "manifest.json").read_text())["cache_version"]
    again = build_cli()
    assert again.returncode == 6 and json.loads(again.stdout)["error"]["code"] == "io_error"
    write(src, "b.md", "beta")
    forced = build_cli("--force")
    assert forced.returncode == 0 and json.loads(forced.stdout)["cache_version"] != version
    assert json.loads(forced.stdout)["document_count"] == 2

    (root / "plain").mkdir()
    (root / "plain" / "keep.txt").write_text("mine")
    refused = build_cli("--force", name="plain")
    assert refused.returncode == 6 and (root / "plain" / "keep.txt").read_text() == "mine"

    assert build_cli(sources=tmp_path / "absent", name="x").returncode == 6
    dup = tmp_path / "dup"
    write(dup, "A.md", "one")
    write(dup, "a.md", "two")
    proc = build_cli(sources=dup, name="dup")
    assert (proc.returncode, json.loads(proc.stdout)["error"]["code"]) == (5, "cache_invalid")
    bad = tmp_path / "bad"
    write(bad, "x.md", b"\xff\xfe not utf-8")
    proc = build_cli(sources=bad, name="bad")
    assert (proc.returncode, json.loads(proc.stdout)["error"]["code"]) == (7, "internal_error")
    same = tmp_path / "same"
    write(same, "one.md", "twin")
    write(same, "two.md", "twin")
    assert build_cli(sources=same, name="same").returncode == 7  # one document file name for both
    twins = json.loads(build_cli("--repo", sources=same, name="same").stdout)
    assert (twins["document_count"], twins["skipped"]) == (1, 1)
    assert build_cli(name="../out").returncode == 4
    assert sorted(os.listdir(root)) == ["c", "plain", "same"]  # no temporary directories left


def test_repository_builds_take_text_files_and_skip_the_rest(tmp_path):
    repo = tmp_path / "repo"
    files = {
        ".gitignore": "build/\n*.log\n",
        "README.md": "# Readme", "src/Main.py": "print('deploy')\n", "docs/guide.txt": "deploy guide",
        "build/out.txt": "ignored", "debug.log": "ignored", ".hidden/notes.md": "hidden",
        ".env": "TOKEN=x", "certs/server.pem": "secret", "id_rsa": "secret", "img.png": b"\x89PNG\x00\x01",
        "big.txt": "x" * ((1 << 20) + 1),
    }
    for rel, text in files.items():
        write(repo, rel, text)
    root = tmp_path / "caches"
    out = json.loads(cli(root, "cache", "build", "--sources", str(repo), "--cache", "repo", "--repo").stdout)
    index = json.loads((root / "repo" / "index.json").read_text())
    assert sorted(index) == ["docs/guide.txt", "readme.md", "src/main.py"]
    assert out["document_count"] == 3 and out["skipped"] == 4  # pem, id_rsa, png, big (.env is hidden)
    md = json.loads(cli(root, "cache", "build", "--sources", str(repo), "--cache", "md").stdout)
    assert sorted(json.loads((root / "md" / "index.json").read_text())) == [".hidden/notes.md", "readme.md"]
    assert md["document_count"] == 2
    doc = json.loads((root / "repo" / index["src/main.py"]).read_text())
    assert (doc["id"], doc["source"], doc["metadata"]) == ("src/main.py", "src/Main.py", {})


# --- aliases and the allowlist ---------------------------------------------------------


@pytest.mark.anyio
async def test_dotted_names_follow_the_allowlist(tmp_path):
    from mcp.shared.exceptions import MCPError

    root = build(tmp_path)
    args = {"cache": "docs", "query": "guide", "budget": 100}
    async with mcp_client("--cache-root", str(root), "--tools", "context.resolve") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["context_resolve"]
        a = await client.call_tool("context.resolve", args)
        b = await client.call_tool("context_resolve", args)
        assert a.content[0].text == b.content[0].text and not a.is_error
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("context.list_caches", {})
