"""Reads outside through `.git` (issue 32, item 6). A hostile repository's `.git` (a gitdir
file, a link, `commondir`, `alternates`, `info` or `info/exclude` linked out,
a nested `.git` file) names git metadata outside the root: a canary
repository beside it is never read (checked by its files' access times, and by the answers:
git's view cannot tell, or rules kept outside do not apply). A linked worktree, whose gitdir
file legitimately points elsewhere, keeps its git view. A FIFO anywhere git's view reads never
hangs it (docs/security.md, "git's own files")."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from repoctx import _core
from sample_repo import build_sample_repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, env=env,
                          check=True, capture_output=True, text=True).stdout.strip()


def committed(path: Path) -> Path:
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path


def make_old(directory: Path) -> dict[Path, int]:
    """Every file below `directory` given an access time an hour before its mtime (so a read
    moves it, under relatime too); returns those access times."""
    seen = {}
    for dirpath, _, names in os.walk(directory):
        for name in names:
            p = Path(dirpath, name)
            st = p.lstat()
            os.utime(p, ns=(st.st_mtime_ns - 3600 * 10**9, st.st_mtime_ns), follow_symlinks=False)
            seen[p] = p.lstat().st_atime_ns
    return seen


def read_files(seen: dict[Path, int]) -> list[str]:
    return sorted(str(p) for p, atime in seen.items() if p.lstat().st_atime_ns != atime)


def atimes_move(tmp_path: Path) -> bool:
    """Whether this file system records a read in the access time (not with noatime)."""
    probe = tmp_path / "probe"
    probe.write_text("x")
    before = make_old(tmp_path)[probe]
    probe.read_text()
    moved = probe.lstat().st_atime_ns != before
    probe.unlink()
    return moved


def plant(repo: Path, out: Path, case: str) -> None:
    dot = repo / ".git"
    if case == "gitdir file":
        shutil.rmtree(dot)
        dot.write_text(f"gitdir: {out / '.git'}\n")
    elif case == ".git link":
        shutil.rmtree(dot)
        os.symlink(out / ".git", dot)
    elif case == "commondir":
        (dot / "commondir").write_text(f"{out / '.git'}\n")
    elif case == "alternates":
        (dot / "objects/info").mkdir(parents=True, exist_ok=True)
        (dot / "objects/info/alternates").write_text(f"{out / '.git/objects'}\n")
    elif case == "info link":
        shutil.rmtree(dot / "info", ignore_errors=True)
        os.symlink(out / ".git/info", dot / "info")
    elif case == "exclude link":
        (dot / "info").mkdir(exist_ok=True)
        (dot / "info/exclude").unlink(missing_ok=True)
        os.symlink(out / "rules", dot / "info/exclude")
    elif case in ("config link", "HEAD link"):
        name = case.split()[0]
        (dot / name).unlink()
        os.symlink(out / ".git" / name, dot / name)
    elif case in ("refs link", "objects link"):
        sub = "refs/heads" if case == "refs link" else "objects"
        shutil.rmtree(dot / sub)
        os.symlink(out / ".git" / sub, dot / sub)
    elif case == "nested gitdir file":
        (repo / "sub").mkdir()
        (repo / "sub/.git").write_text(f"gitdir: {out / '.git'}\n")
        (repo / "sub/a.py").write_text("a = 1\n")


CASES = ["gitdir file", ".git link", "commondir", "alternates", "info link", "exclude link", "config link",
         "HEAD link", "refs link", "objects link", "nested gitdir file"]
# What git's view answers then: nothing (it cannot tell), or an answer in which the rules kept
# outside (`src/`) do not apply: the untracked src/new.py counts.
CANNOT_TELL = {"gitdir file", ".git link", "commondir", "alternates", "info link", "exclude link", "config link",
               "HEAD link", "refs link", "objects link"}


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_git_directory_reads_nothing_outside_the_root(tmp_path, case):
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.py").write_text("CANARY = 1\n")
    committed(out)
    (out / "rules").write_text("src/\n")
    (out / ".git/info").mkdir(exist_ok=True)
    (out / ".git/info/exclude").write_text("src/\n")
    repo = committed(build_sample_repo(tmp_path / "repo"))
    head = git(repo, "rev-parse", "HEAD")
    (repo / "src/new.py").write_text("n = 1\n")
    plant(repo, out, case)
    seen = make_old(out)

    view = _core.GitRepo(str(repo))
    answers = (view.head(), view.changed_dirs(head, ["."]), view.unchanged(head, ["src"]))
    status = run_cli("--root", str(repo), "status", "--json")
    check = run_cli("--root", str(repo), "check", "src", "--json")

    if atimes_move(tmp_path):
        assert read_files(seen) == []
    assert status.returncode == 0, status.stderr
    assert check.returncode in (0, 1), check.stderr
    # Rules kept outside never shape the repository: `src` stays listed.
    assert "src" in [e["scope"] for e in json.loads(status.stdout)["entries"]]
    if case in CANNOT_TELL:
        assert answers == (None, None, None)
    else:
        assert answers[0] == head
        assert "src" in answers[1] and answers[2] == set()
    if case == "nested gitdir file":
        assert "sub" in answers[1]  # a repository of its own, listed unread


def test_a_linked_worktree_keeps_its_git_view(tmp_path):
    """The rule's exception: a `.git` file naming `<main>/.git/worktrees/<id>`, whose `gitdir`
    names it back, is git's own layout; its view answers as in the main worktree."""
    main = committed(build_sample_repo(tmp_path / "main"))
    git(main, "worktree", "add", "-q", str(tmp_path / "feature"))
    head = git(main, "rev-parse", "HEAD")
    view = _core.GitRepo(str(tmp_path / "feature"))
    assert view.head() == head
    assert view.changed_dirs(head, ["."]) == set()
    (tmp_path / "feature/src/new.py").write_text("n = 1\n")
    assert view.changed_dirs(head, ["."]) == {"src"}
    # The same gitdir file copied into another checkout is not the worktree it names back.
    other = tmp_path / "other"
    shutil.copytree(tmp_path / "feature", other, symlinks=True)
    assert _core.GitRepo(str(other)).head() is None


FIFO_PLACES = ["packed-refs", "config", "index", "sharedindex.0123abcd", "refs/heads/main", "info/exclude",
               "objects/info/commit-graph", "objects/info/alternates", "objects/pack/pack-x.idx", "shallow",
               "objects/ab"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("place", FIFO_PLACES)
def test_a_fifo_anywhere_in_git_never_hangs_the_git_view(tmp_path, place):
    repo = committed(build_sample_repo(tmp_path / "repo"))
    head = git(repo, "rev-parse", "HEAD")
    target = repo / ".git" / place
    if place == "objects/ab":  # a fan-out directory no loose object of this sample uses (hashes vary with the clock)
        target = next(repo / ".git/objects" / f"{n:02x}" for n in range(256)
                      if not (repo / ".git/objects" / f"{n:02x}").exists())
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    code = ("import sys; from repoctx import _core; r = _core.GitRepo(sys.argv[1]); "
            "print(r.head(), r.changed_dirs(sys.argv[2], ['.']), r.unchanged(sys.argv[2], ['src']))")
    proc = subprocess.run([sys.executable, "-c", code, str(repo), head], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "None None None"
