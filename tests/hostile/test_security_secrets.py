"""Secrets and reads: secret-looking files (.env*, keys, certificates), gitignored files and
.git/ never reach generated context files, caches built from the repository, bundles or any
tool's answer, and reads into .git/ are refused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import msgspec

from repoctx.base.workspace import Workspace
from repoctx.caches import engine as caches
from repoctx.registry.catalog import all_commands
from repoctx.views import server
from sample_repo import EXAMPLES, build_sample_repo

SECRET = "SECRET-5b1e-DO-NOT-LEAK"
SECRET_FILES = [".env", ".env.local", "src/.env.production", "id_rsa", "src/core/id_ed25519", "server.key",
                "certs/server.pem", "certs/client.crt", "keystore.p12", ".git/config", ".git/secret.md",
                "private/notes.md", "src/core/generated.local.py"]


def _repo(tmp_path: Path) -> Path:
    root = build_sample_repo(tmp_path / "repo")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("private/\n*.local.py\n")
    for rel in SECRET_FILES:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {SECRET}\nTOKEN={SECRET}\n")
    return root


def _text_under(root: Path, exclude: tuple[str, ...] = ()) -> str:
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and not rel.startswith(exclude):
            out.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def test_generated_context_caches_and_bundles_leave_secrets_out(tmp_path):
    root = _repo(tmp_path)
    ws = Workspace.open(root)
    by_tool = {c.tool: c for c in all_commands() if c.tool}

    # A cache built from the repository.
    built = caches.build(ws, caches.BuildParams(sources=str(root), cache="repo", repo=True))
    assert built.document_count > 0
    assert SECRET not in _text_under(root / ".repoctx/caches/repo")

    # Every read-only tool's answer (bundles included: mcp_context, context_resolve over the cache).
    calls = [(t, a) for t, a in EXAMPLES.items() if not by_tool[t].writes]
    calls += [("context_resolve", {"cache": "repo", "query": "TOKEN secret env key", "budget": 100000}),
              ("mcp_context", {"task_id": "TASK-001", "depth": "full", "budget": 100000}),
              ("mcp_search", {"query": "TOKEN", "limit": 100}),
              ("mcp_find_by_path", {"file_path": "**"})]
    for tool, args in calls:
        result = server.call(ws, by_tool[tool], args)
        text = result.content[0].text + msgspec.json.encode(result.structured_content).decode()
        assert SECRET not in text, tool


def test_reads_never_follow_into_git(tmp_path):
    root = _repo(tmp_path)
    ws = Workspace.open(root)
    by_tool = {c.tool: c for c in all_commands() if c.tool}
    (root / ".git/.context.yaml").write_text((root / "src/core/.context.yaml").read_text().replace(
        "Core engine.", SECRET))
    for tool, args in [("query_context", {"scope": ".git"}), ("check_freshness", {"scope": ".git"}),
                       ("query_context", {"scope": "src/../.git"}), ("mcp_trace", {"path": ".git/config"}),
                       ("mcp_find_by_path", {"file_path": ".git/*"}), ("list_contexts", {"under": ".git"})]:
        result = server.call(ws, by_tool[tool], args)
        text = result.content[0].text + msgspec.json.encode(result.structured_content).decode()
        assert SECRET not in text, (tool, args)


def _generated_contexts(root: Path) -> str:
    ws = Workspace.open(root)
    by_name = {c.name: c for c in all_commands()}
    for name in ("init", "regen"):
        by_name[name].handler(ws, by_name[name].parse({"quiet": True}))
    return "\n".join(p.read_text() for p in root.rglob(".context.yaml"))


def test_generated_context_leaves_secret_looking_files_out(tmp_path):
    root = _repo(tmp_path)
    for path in root.rglob("*.local.py"):
        path.unlink()  # the gitignored source file: see the test below
    contexts = _generated_contexts(root)
    assert SECRET not in contexts
    for rel in SECRET_FILES:
        assert os.path.basename(rel) not in contexts, rel


def test_generated_context_leaves_gitignored_files_out(tmp_path):
    contexts = _generated_contexts(_repo(tmp_path))
    assert SECRET not in contexts and "generated.local.py" not in contexts
