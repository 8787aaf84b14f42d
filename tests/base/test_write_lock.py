"""The one write lock (base/locks.py) leaves nothing in the repository for `git status` to
show. POSIX flocks the directory itself; Windows locks a file that `lock_file` names outside
the repository, one per directory however the directory is spelled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, write
from repoctx.base import locks


def test_the_windows_lock_file_is_outside_the_directory_and_one_per_directory(tmp_path):
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    path = Path(locks.lock_file(str(repo)))
    assert path.is_absolute() and not path.resolve().is_relative_to(repo.resolve())
    assert locks.lock_file(str(repo / "sub" / "..")) == str(path)
    assert locks.lock_file(str(tmp_path / "other")) != str(path)
    assert locks.lock_file(str(repo / "sub")) != str(path)
    try:
        (tmp_path / "alias").symlink_to(repo, target_is_directory=True)
    except OSError:
        pytest.skip("no right to make a symbolic link here")
    assert locks.lock_file(str(tmp_path / "alias")) == str(path), "a link to it names the same lock"
    if sys.platform == "win32":
        assert locks.lock_file(str(repo).upper()) == str(path), "NTFS ignores case"


def test_writers_leave_git_status_as_their_files_make_it(tmp_path):
    repo = tmp_path / "repo"
    write(repo, "src/app.py", "def run():\n    return 1\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    with locks.exclusive(str(repo)):
        held = subprocess.run([*git, "status", "--porcelain", "--untracked-files=all"],
                              capture_output=True, text=True, check=True).stdout
    assert held == "", "taking the lock makes nothing in the repository"
    run_cli("--root", str(repo), "init", check=True)
    status = subprocess.run([*git, "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    written = sorted(line[3:] for line in status)
    assert written and all(os.path.basename(p) == ".context.yaml" for p in written), written
