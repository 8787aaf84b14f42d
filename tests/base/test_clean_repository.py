"""A repository left clean (issue 22): what repoctx writes for one machine under `.repoctx/`
(caches, runs, proposals, the journal, the session database, reports, temporary files) is
ignored by git from the moment it is written; what a team shares (context files,
`project.yaml`, `config.yaml`, `.repoctx/.gitignore`, `.contextia/`) is not, and gets the
person's normal mode (their umask), or keeps the mode of the file it replaces.

Each writer runs as a person runs it (the CLI, or `repoctx serve` with the official client)
in a real git repository, and git itself is asked: `git status --porcelain
--untracked-files=all` and `git add -A --dry-run`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPOCTX, mcp_client, run_cli, write
from repoctx.project.store import database_path
from sample_repo import CONTEXT

SHARED_STATE = {".repoctx/.gitignore", ".repoctx/project.yaml", ".repoctx/config.yaml"}
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not for git"


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True,
                          env=env).stdout


def _repo(root: Path) -> Path:
    """A git repository with a little code and documentation, committed."""
    write(root, "src/app.py", "def main():\n    return 'app'\n")
    write(root, "docs/guide.md", "# Guide\n\nRun the app.\n")
    _git(root.parent, "init", "-q", str(root))
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    return root


def _untracked(root: Path) -> set[str]:
    return {line[3:] for line in _git(root, "status", "--porcelain", "--untracked-files=all").splitlines()}


def _staged(root: Path) -> set[str]:
    return {line[len("add '"):-1] for line in _git(root, "add", "-A", "--dry-run").splitlines()}


def _shared(path: str) -> bool:
    """Whether a path is one a team commits."""
    name = path.rsplit("/", 1)[-1]
    return (path in SHARED_STATE or name == ".context.yaml" or path == ".mcp.json"
            or (path.startswith(".contextia/") and not name.startswith(".repoctx-")))


def _assert_clean(root: Path) -> None:
    """git sees nothing of repoctx's own under `.repoctx/` but the shared files, and would
    stage only files a team commits."""
    assert {p for p in _untracked(root) if p.startswith(".repoctx/")} <= SHARED_STATE
    staged = _staged(root)
    assert all(_shared(p) for p in staged), sorted(p for p in staged if not _shared(p))


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, "--root", str(root), check=True)


def _propose(root: Path, *operations: dict) -> str:
    ops = [arg for op in operations for arg in ("--operations", json.dumps(op))]
    proc = _cli(root, "propose", "--json", "--title", "Say more", "--rationale", "Learned it", *ops)
    return json.loads(proc.stdout)["proposal"]["id"]


def _context_write(scope: str, summary: str) -> dict:
    return {"op": "write", "path": f"{scope}/.context.yaml",
            "content": CONTEXT.format(fingerprint="00000000", scope=scope, summary=summary)}


def _apply(root: Path) -> list[Path]:
    _cli(root, "proposals", "apply", _propose(root, _context_write("src", "The app.")))
    return [root / ".repoctx/proposals", root / "src/.context.yaml"]


def _run(root: Path) -> list[Path]:
    _cli(root, "validate", "--run")
    return [root / ".repoctx/runs"]


# Each writer of local state, in a repository where nothing of repoctx's exists yet: what it
# is run as, and what it must have written (so the test is not passed by writing nothing).
WRITERS = {
    "cache build --repo": (lambda r: _cli(r, "cache", "build", "--repo", "--sources", ".", "--cache", "code"),
                           [".repoctx/caches/code/manifest.json", ".repoctx/caches/code/documents"]),
    "cache build": (lambda r: _cli(r, "cache", "build", "--sources", "docs", "--cache", "docs"),
                    [".repoctx/caches/docs/index.json"]),
    "validate --run": (lambda r: _cli(r, "validate", "--run"), [".repoctx/runs"]),
    "propose": (lambda r: _propose(r, _context_write("src", "The app.")), [".repoctx/proposals"]),
    "proposals apply": (_apply, [".repoctx/proposals", "src/.context.yaml"]),
    "report": (lambda r: _cli(r, "report"), [".repoctx/report.html"]),
    "report --out .repoctx/…": (lambda r: _cli(r, "report", "--out", ".repoctx/weekly/health.html"),
                                [".repoctx/weekly/health.html"]),
    "project init": (lambda r: _cli(r, "project", "init"), [".repoctx/project.yaml"]),
    "context": (lambda r: _cli(r, "context", "run the app"), [".repoctx/task-index.bin", ".repoctx/task-history.bin"]),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_each_writer_leaves_git_only_the_shared_files(tmp_path, writer):
    root = _repo(tmp_path / "repo")
    run, made = WRITERS[writer]
    run(root)
    for rel in made:
        assert (root / rel).exists(), rel
    _assert_clean(root)
    assert ".repoctx/.gitignore" in _staged(root)  # shared, so every clone ignores the same


def test_everything_together_stages_only_what_a_team_commits(tmp_path):
    root = _repo(tmp_path / "repo")
    write(root, ".repoctx/config.yaml", "keep_runs: 5\n")
    _cli(root, "project", "init")
    _cli(root, "init")
    for writer, (run, _made) in WRITERS.items():
        if writer != "project init":
            run(root)
    _cli(root, "artifacts", "init")
    _cli(root, "artifacts", "new", "task", "--title", "Ship it", "--kind", "feature")
    _cli(root, "artifacts", "log", "write", "TASK-001", "--body", "Started.")
    _cli(root, "install", "claude-code")
    _assert_clean(root)
    staged = _staged(root)
    assert SHARED_STATE <= staged
    assert {".context.yaml", "src/.context.yaml", ".contextia/config.yaml", ".contextia/work/tasks/TASK-001.md",
            ".mcp.json"} <= staged
    assert any(p.startswith(".contextia/work/logs/TASK-001/") and p.endswith("/001.md") for p in staged)
    # Local state there is, and git sees none of it.
    local = {str(p.relative_to(root)) for p in (root / ".repoctx").rglob("*") if p.is_file()} - SHARED_STATE
    assert len(local) > 10 and not local & staged


@pytest.mark.anyio
async def test_the_session_database_is_ignored_while_a_client_is_served(tmp_path):
    root = _repo(tmp_path / "repo")
    _cli(root, "project", "init")
    async with mcp_client("--root", str(root)) as client:
        await client.call_tool("check_freshness", {"scope": "src"})
        await client.call_tool("add_discovery", {"module": "src", "type": "rule", "content": "Keep it small"})
        assert os.path.isfile(database_path(str(root)) or "")  # outside the repository: git never sees it
        _assert_clean(root)
    _assert_clean(root)
    assert _staged(root) == {".repoctx/.gitignore", ".repoctx/project.yaml"}


KILLED_APPLY = """
import os, sys
from repoctx.base import journal
from repoctx.views.cli import main

def _killed(root, files, dirs, forward):  # at the commit point, before any rename
    os._exit(137)

journal._finish = _killed
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_apply_leaves_git_nothing_of_its_journal(tmp_path):
    root = _repo(tmp_path / "repo")
    pid = _propose(root, _context_write("src", "The app."), _context_write("docs", "The guide."))
    killed = subprocess.run([sys.executable, "-c", KILLED_APPLY, "proposals", "apply", pid, "--root", str(root)],
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == 137, killed.stderr
    assert (root / ".repoctx/journal").is_file()
    assert list((root / ".repoctx/proposals").glob(".repoctx-txn-*.tmp"))  # the record's staged copy
    assert {p for p in _untracked(root) if p.startswith(".repoctx/")} == {".repoctx/.gitignore"}
    # The new contents wait beside their files (a rename must not leave the directory) until
    # the next command of repoctx, whatever it is, finishes the apply.
    assert _untracked(root) - {".repoctx/.gitignore"} == {"src/.repoctx-txn-0.tmp", "docs/.repoctx-txn-1.tmp"}
    # The next command finishes the apply: both files, and no temporary file anywhere.
    _cli(root, "status")
    assert not (root / ".repoctx/journal").exists()
    assert _untracked(root) == {".repoctx/.gitignore", "src/.context.yaml", "docs/.context.yaml"}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _under(umask: int, root: Path, *args: str) -> None:
    proc = subprocess.run(["sh", "-c", f'umask {umask:03o} && exec "$@"', "sh", *REPOCTX, *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_shared_files_get_the_persons_mode(tmp_path, umask):
    root = _repo(tmp_path / "repo")
    for args in (["project", "init"], ["init"], ["artifacts", "init"],
                 ["artifacts", "new", "spec", "--title", "Login"],
                 ["artifacts", "new", "task", "--title", "Ship", "--kind", "chore"], ["artifacts", "log", "write", "TASK-001"],
                 ["install", "claude-code"]):
        _under(umask, root, *args)
    pid = _propose(root, _context_write("src/deep", "Made by apply."))
    _under(umask, root, "proposals", "apply", pid)
    files = [".repoctx/project.yaml", ".repoctx/.gitignore", ".context.yaml", ".contextia/config.yaml",
             ".contextia/system/specs/SPEC-001.md", ".mcp.json", "src/deep/.context.yaml",
             *(str(p.relative_to(root)) for p in (root / ".contextia/work/logs").rglob("*") if p.is_file())]
    assert {rel: oct(_mode(root / rel)) for rel in files} == {rel: oct(0o666 & ~umask) for rel in files}
    dirs = [".repoctx", ".contextia/system/specs", ".contextia/work/logs/TASK-001", "src/deep"]
    assert {rel: oct(_mode(root / rel)) for rel in dirs} == {rel: oct(0o777 & ~umask) for rel in dirs}


def test_a_replaced_file_keeps_its_mode(tmp_path):
    root = _repo(tmp_path / "repo")
    _cli(root, "project", "init")
    _cli(root, "init")
    _propose(root, _context_write("src", "first"))
    modes = {".context.yaml": 0o640, ".repoctx/project.yaml": 0o600, ".repoctx/.gitignore": 0o644}
    for rel, mode in modes.items():
        os.chmod(root / rel, mode)
    (root / ".repoctx/.gitignore").write_text("sessions.db*\n")  # an older repoctx's rules: rewritten
    _cli(root, "update", ".", "--fields", json.dumps({"summary": "The whole app."}))
    write(root, "src/more.py", "X = 1\n")
    assert "Rehashed 1 context file" in _cli(root, "rehash").stdout  # the staged writes of init/regen/rehash
    _cli(root, "project", "scan")
    _cli(root, "validate", "--run")
    assert {rel: oct(_mode(root / rel)) for rel in modes} == {rel: oct(m) for rel, m in modes.items()}
    write(root, "src/.context.yaml", CONTEXT.format(fingerprint="00000000", scope="src", summary="old"))
    os.chmod(root / "src/.context.yaml", 0o604)
    pid = _propose(root, {"op": "replace", "path": "src/.context.yaml", "old": '"old"', "new": '"new"'})
    _cli(root, "proposals", "apply", pid)
    assert '"new"' in (root / "src/.context.yaml").read_text() and _mode(root / "src/.context.yaml") == 0o604


def test_rules_of_the_person_are_kept_and_an_old_file_gets_the_new_rules(tmp_path):
    root = _repo(tmp_path / "repo")
    write(root, ".repoctx/.gitignore", "# Local state of repoctx, not shared through git.\nsessions.db*\n*.lock")
    _cli(root, "validate", "--run")
    lines = (root / ".repoctx/.gitignore").read_text().splitlines()
    assert lines[:3] == ["# Local state of repoctx, not shared through git.", "sessions.db*", "*.lock"]
    assert lines[3:] == ["/*", "!/.gitignore", "!/config.yaml", "!/project.yaml"]
    _assert_clean(root)
    # A person who wants runs shared says so after the rules; repoctx leaves that alone.
    with open(root / ".repoctx/.gitignore", "a") as fh:
        fh.write("!/runs/\n")
    _cli(root, "validate", "--run")
    assert (root / ".repoctx/.gitignore").read_text().endswith("!/project.yaml\n!/runs/\n")
    assert any(p.startswith(".repoctx/runs/") for p in _staged(root))


@pytest.mark.parametrize("writer", [w for w in WRITERS if w != "project init"])
def test_a_gitignore_linked_out_is_refused_and_nothing_is_written(tmp_path, writer):
    """`.repoctx/.gitignore` linked to a file outside: the writer fails naming the link and
    makes nothing where git would see it; the file outside is neither read nor changed."""
    root = _repo(tmp_path / "repo")
    outside = write(tmp_path, "outside/id_rsa", SECRET)
    (root / ".repoctx").mkdir()
    os.symlink(outside, root / ".repoctx/.gitignore")
    run, _made = WRITERS[writer]
    try:
        run(root)
        said = ""
    except AssertionError as failed:  # the command failed: its output
        said = str(failed)
    # validate answers its checks, the run not recorded; context answers, its index not saved
    if writer not in ("validate --run", "context"):
        assert "'.repoctx/.gitignore' is a link that leads outside the repository; not followed" in said
    assert SECRET not in said
    assert os.listdir(root / ".repoctx") == [".gitignore"] and (root / ".repoctx/.gitignore").is_symlink()
    assert outside.read_text() == SECRET and os.listdir(outside.parent) == ["id_rsa"]
    assert not (root / "src/.context.yaml").exists()
