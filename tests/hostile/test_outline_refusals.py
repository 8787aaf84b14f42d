"""`file_outline` (`repoctx outline PATH`) refuses what every door refuses: `..` out of the root,
an absolute path outside it, git's own files, and a link that leads out (the confined layer);
nothing of the outside file reaches the answer. (tests/hostile/test_security_paths.py puts it
through the whole table of hostile paths with every other tool that takes one.)"""

from __future__ import annotations

import json
import os

import pytest

from conftest import run_cli, write

SECRET = "OUTLINE-SECRET-41c9"


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    write(tmp_path, "outside/secret.py", f"def {SECRET.replace('-', '_')}():\n    pass\n")
    write(root, "src/ok.py", "def fine():\n    pass\n")
    write(root, ".git/config.py", "def hidden():\n    pass\n")
    os.symlink(tmp_path / "outside/secret.py", root / "src/linked.py")
    os.symlink(tmp_path / "outside", root / "src/linkdir")
    return root


@pytest.mark.parametrize("path", [
    "../outside/secret.py", "src/../../outside/secret.py", "src/linked.py", "src/linkdir/secret.py",
    ".git/config.py", "{outside}", "{outside}/secret.py", "/etc/passwd",
])
def test_paths_out_of_the_root_are_refused(repo, path):
    path = path.format(outside=repo.parent / "outside")
    proc = run_cli("outline", path, "--json", cwd=repo)
    answer = json.loads(proc.stdout)
    assert proc.returncode != 0
    assert answer["error"]["code"] == "invalid_path", answer
    assert SECRET.replace("-", "_") not in proc.stdout + proc.stderr


def test_a_path_inside_is_answered(repo):
    proc = run_cli("outline", "src/ok.py", "--json", cwd=repo, check=True)
    assert json.loads(proc.stdout)["definitions"][0]["name"] == "fine"
