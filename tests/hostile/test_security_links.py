"""Links at every fixed place (issue 20, items 1, 2, 3 and 9): the repository's own files and
directories that repoctx reads or writes by a fixed name, each replaced by a link that leads
outside (to a copy of what it would hold with a secret planted in every file), a dangling
link out, or /dev/zero. Every command and every MCP tool then runs: the secret appears in no
output and in no file of the repository, nothing outside changes (names and bytes), nothing
is made where a dangling link points, and /dev/zero is never read until memory runs out."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import REPOCTX, mcp_client, run_cli, snapshot
from repoctx.base import task_index
from repoctx.base.workspace import Workspace
from repoctx.caches import engine as caches
from repoctx.views import cli
from sample_repo import EXAMPLES, build_sample_repo

SECRET = "LINKED-OUT-SECRET-91d2"

# Each fixed place and what it holds.
PLACES = {
    ".repoctx/.gitignore": "file",
    ".repoctx/project.yaml": "file",
    ".repoctx/config.yaml": "file",
    ".repoctx/task-index.bin": "file",
    ".repoctx/task-history.bin": "file",
    ".context.config.yaml": "file",
    ".contextignore": "file",
    ".gitignore": "file",
    ".contextia/config.yaml": "file",
    ".repoctx": "dir",
    ".repoctx/caches": "dir",
    ".contextia": "dir",
    ".contextia/system": "dir",  # the written context the task index reads (issue 32, item 1)
    ".contextia/system/specs": "dir",
    "docs": "dir",  # the sources of `cache build --sources docs`
}

# Every CLI command that reads or writes a fixed place.
COMMANDS = [
    ["status"], ["init"], ["regen"], ["check", "src/core"], ["validate"],
    ["project", "scan"], ["project", "discover", "core", "pattern", "Keep run() pure"],
    ["cache", "build", "--sources", "{repo}/docs", "--cache", "fresh"], ["cache", "list"],
    ["resolve", "--cache", "docs", "--query", "guide secret", "--budget", "8000"],
    ["artifacts", "check"], ["artifacts", "new", "spec", "--title", "Linked"], ["sessions"],
    ["update", "src/core", "--fields", '{"summary": "Updated"}'], ["report", "--out", "-"],
    ["context", "Call helper() from the engine's run()"],
]


def secret_in_repo(repo: Path) -> list[str]:
    hits = []
    for dirpath, _, filenames in os.walk(repo):  # os.walk does not follow links
        for name in filenames:
            p = Path(dirpath, name)
            if not p.is_symlink() and SECRET.encode() in p.read_bytes():
                hits.append(str(p.relative_to(repo)))
    return hits


def plant(repo: Path, out: Path, place: str) -> Path:
    """Outside the repository: what `place` holds, with the secret in every file (and for a
    directory holding caches, a valid cache of a secret document named as the repository's)."""
    target = out / place.strip(".").replace("/", "_")
    if PLACES[place] == "file":
        target.write_text(f"# {SECRET}\n{SECRET}: 1\n")
        return target
    shutil.copytree(repo / place, target, symlinks=True)
    for f in target.rglob("*"):
        if f.is_file() and not f.is_symlink():
            with open(f, "a") as fh:
                fh.write(f"\n{SECRET}\n")
    (target / f"{SECRET}.md").write_text(f"# {SECRET}\n")
    cache_root = {".repoctx": target / "caches", ".repoctx/caches": target}.get(place)
    if cache_root is not None:
        secret_docs = out / "secret-docs"
        secret_docs.mkdir(exist_ok=True)
        (secret_docs / "guide.md").write_text(f"# Guide\n\n{SECRET} guide\n")
        shutil.rmtree(cache_root / "docs")
        ws = Workspace.open(out, cache_root=cache_root)
        assert caches.build(ws, caches.BuildParams(sources=str(secret_docs), cache="docs")).document_count == 1
    return target


def link_case(tmp_path: Path, place: str, to: str) -> tuple[Path, Path, Path]:
    """(repository, outside directory, what the link points to), the link made."""
    repo, out = tmp_path / "repo", tmp_path / "out"
    build_sample_repo(repo)
    out.mkdir()
    (repo / ".gitignore").write_text("*.log\n")
    (repo / ".contextignore").write_text("vendor/\n")
    if to == "out":
        target = plant(repo, out, place)
    elif to == "dangling":
        target = out / "missing" / "place"
    else:
        target = Path("/dev/zero")
    path = repo / place
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    os.symlink(target, path)
    return repo, out, target


def run_in_process(repo: Path, args: list[str]) -> tuple[int, str]:
    """One CLI command in this process (a subprocess each would take minutes for the matrix)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = cli.main(["--root", str(repo), *(a.replace("{repo}", str(repo)) for a in args), "--json"])
    for thread in threading.enumerate():  # what a process waits for at exit (the saved task index)
        if thread.name == task_index.SAVE_THREAD:
            thread.join()
    return code, stdout.getvalue() + stderr.getvalue()


CASES = [(place, to) for place in PLACES for to in ("out", "dangling", "zero")]


@pytest.mark.parametrize("place, to", CASES, ids=[f"{p}->{t}" for p, t in CASES])
def test_no_command_follows_a_link_out_at_a_fixed_place(tmp_path, place, to):
    repo, out, _ = link_case(tmp_path, place, to)
    before = snapshot(out)
    named = set()
    for args in COMMANDS:
        _code, output = run_in_process(repo, args)
        assert SECRET not in output, (args, output)
        assert "Internal error" not in output and "unexpected error" not in output, (args, output)
        if f"'{place}' is a link that leads outside the repository" in output:
            named.add(args[0])
    assert snapshot(out) == before
    assert not (out / "missing").exists()
    assert secret_in_repo(repo) == []
    assert (repo / place).is_symlink()  # never replaced by what it pointed to
    # Some command tells the person which link it did not follow (the saved task index is
    # this machine's state: a link there is passed over in silence, the index built anew; an
    # artifact folder linked out holds no artifacts, as a missing one).
    silent = (".gitignore", ".contextignore", ".context.config.yaml", ".repoctx/task-index.bin",
              ".repoctx/task-history.bin", ".contextia/system",
              ".contextia/system/specs")
    assert named or place in silent or to == "dangling"


def test_a_secret_behind_the_state_gitignore_is_never_copied_in(tmp_path):
    """Item 1 as reported: `.repoctx/.gitignore` linked to a private key; `project init` and
    `project scan` neither read it nor write it back as a regular file."""
    repo, out = tmp_path / "repo", tmp_path / "home"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("x = 1\n")
    (repo / ".repoctx").mkdir()
    out.mkdir()
    (out / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    os.symlink(out / "id_rsa", repo / ".repoctx" / ".gitignore")
    named = []
    for args in (["project", "init"], ["project", "scan"]):
        proc = run_cli("--root", str(repo), *args)
        assert SECRET not in proc.stdout + proc.stderr
        named.append("'.repoctx/.gitignore' is a link that leads outside the repository" in proc.stdout + proc.stderr)
    assert named[0]  # init says which link it did not follow
    assert (repo / ".repoctx" / ".gitignore").is_symlink()
    assert secret_in_repo(repo) == []
    assert (out / "id_rsa").read_text() == f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n"


def test_sources_linked_out_are_refused_but_a_path_typed_outside_is_the_persons_choice(tmp_path):
    """Item 3: `docs` inside the repository linking out is not copied into a cache; the same
    directory named by its own path on the command line is."""
    repo, out, _ = link_case(tmp_path, "docs", "out")
    proc = run_cli("--root", str(repo), "cache", "build", "--sources", "docs", "--cache", "d", "--json", cwd=repo)
    assert proc.returncode != 0 and SECRET not in proc.stdout
    assert "'docs' is a link that leads outside the repository" in proc.stdout
    assert not (repo / ".repoctx" / "caches" / "d").exists()
    typed = run_cli("--root", str(repo), "cache", "build", "--sources", str(out / "docs"), "--cache", "d", "--json")
    assert typed.returncode == 0, typed.stdout + typed.stderr
    assert json.loads(typed.stdout)["document_count"] >= 1


def text_of(result) -> str:
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


MCP_PLACES = [".repoctx", ".repoctx/caches", ".repoctx/.gitignore", ".repoctx/project.yaml", ".repoctx/config.yaml",
              ".contextia", ".context.config.yaml", ".gitignore"]
MCP_CASES = [(place, to) for place in MCP_PLACES for to in ("out", "dangling")]


@pytest.mark.anyio
@pytest.mark.parametrize("place, to", MCP_CASES, ids=[f"{p}->{t}" for p, t in MCP_CASES])
async def test_no_tool_follows_a_link_out_at_a_fixed_place(tmp_path, place, to):
    repo, out, _ = link_case(tmp_path, place, to)
    before = snapshot(out)
    if place in (".repoctx", ".repoctx/config.yaml"):
        # The server's own config cannot be read: it does not start, and says which link.
        proc = subprocess.run([*REPOCTX, "serve", "--root", str(repo)], input="", capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode != 0 and SECRET not in proc.stdout + proc.stderr
        assert "'.repoctx' is a link that leads outside" in proc.stderr or \
            "'.repoctx/config.yaml' is a link that leads outside" in proc.stderr, proc.stderr
        assert snapshot(out) == before
        return
    async with mcp_client("--root", str(repo), "--profile", "all") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        replies = []
        for name, arguments in EXAMPLES.items():
            if name in tools:
                replies.append(text_of(await client.call_tool(name, arguments)))
        for resource in (await client.list_resources()).resources:
            try:
                replies.append(text_of(await client.read_resource(resource.uri)))
            except Exception as exc:  # an MCP error answer: its text is an output too
                replies.append(str(exc))
    for reply in replies:
        assert SECRET not in reply
    assert snapshot(out) == before
    assert not (out / "missing").exists()
    assert secret_in_repo(repo) == []


def test_project_init_derives_nothing_from_files_linked_out(tmp_path):
    """What `project init` and `project scan` derive (names, descriptions, versions) comes
    from files of the repository: manifests, READMEs and docstrings linked out are not read,
    so none of the secret reaches project.yaml."""
    repo, out = tmp_path / "repo", tmp_path / "out"
    (repo / "pkg").mkdir(parents=True)
    out.mkdir()
    secrets = {
        "package.json": f'{{"name": "{SECRET}", "description": "{SECRET}", "dependencies": {{"{SECRET}": "1"}}}}',
        "pyproject.toml": f'[project]\nname = "{SECRET}"\ndescription = "{SECRET}"\n',
        "README.md": f"{SECRET}\n",
        "pkg/__init__.py": f'"""{SECRET}"""\n',
        "go.mod": f"module {SECRET}\n\ngo 1.22\n",
        ".python-version": f"{SECRET}\n",
    }
    for rel, text in secrets.items():
        target = out / rel.replace("/", "_")
        target.write_text(text)
        os.symlink(target, repo / rel)
    (repo / "pkg" / "mod.py").write_text("x = 1\n")
    for args in (["project", "init"], ["project", "scan"]):
        proc = run_cli("--root", str(repo), *args)
        assert SECRET not in proc.stdout + proc.stderr
    assert (repo / ".repoctx" / "project.yaml").is_file()
    assert secret_in_repo(repo) == []


def test_report_out_is_the_persons_choice_outside_and_confined_inside(tmp_path):
    """`report --out /abs/elsewhere.html` (a path typed plainly outside) is written there; a
    path inside the repository through a link out is refused."""
    repo, out, _ = link_case(tmp_path, "docs", "out")
    before = snapshot(out)
    inside = run_cli("--root", str(repo), "report", "--out", str(repo / "docs" / "r.html"))
    assert inside.returncode == 1 and "outside the repository" in inside.stderr
    assert snapshot(out) == before
    elsewhere = tmp_path / "mine" / "r.html"
    elsewhere.parent.mkdir()  # (a folder typed must exist: report makes none, issue 32 item 2)
    typed = run_cli("--root", str(repo), "report", "--out", str(elsewhere))
    assert typed.returncode == 0, typed.stdout + typed.stderr
    assert elsewhere.read_text().startswith("<!doctype html>")


@pytest.mark.parametrize("name", [".gitignore", ".contextignore"])
def test_an_ignore_file_linked_out_holds_no_rules_for_the_walk(tmp_path, name):
    """Item 9 in the core's walk: an ignore file that is a link out of its directory is not
    read (git follows no link there), so rules kept outside do not shape the repository."""
    repo, out = build_sample_repo(tmp_path / "repo"), tmp_path / "out"
    out.mkdir()
    (out / "rules").write_text("src/\n")
    os.symlink(out / "rules", repo / name)
    proc = run_cli("--root", str(repo), "status", "--json")
    assert "src/core" in [e["scope"] for e in json.loads(proc.stdout)["entries"]]
    (repo / name).unlink()
    (repo / name).write_text("src/\n")  # the same rules in the repository itself do apply
    proc = run_cli("--root", str(repo), "status", "--json")
    assert "src/core" not in [e["scope"] for e in json.loads(proc.stdout)["entries"]]
