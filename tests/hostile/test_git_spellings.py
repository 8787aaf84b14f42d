"""git's directory is never served, in any spelling some OS opens as `.git`: another case
(APFS, NTFS), trailing dots and spaces (Windows drops them), the 8.3 name GIT~1 (NTFS). One
rule on every OS (docs/platforms.md), so it is asserted on Linux too."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, write
from sample_repo import write_context


@pytest.mark.parametrize("typed", [".GIT", ".Git/config", ".git.", ".git ", "GIT~1", "a/.gIt"])
def test_gits_directory_is_refused_in_any_spelling_an_os_opens(tmp_path, typed):
    root = tmp_path / "repo"
    write(root, "a/main.py", "print('hi')\n")
    write_context(root, ".", "Root")
    shown = json.loads(run_cli("show", typed, "--json", "--root", str(root)).stdout)
    assert shown["found"] is False and "traversal" in shown["error"].lower(), shown
