"""Workspace globs that reach out (issue 32, item 7): `pnpm-workspace.yaml` packages,
`package.json` workspaces and Cargo workspace members name `../x/**`, `../../**`, absolute
paths and links out. `project init` (and `scan`) list members inside the root only, and a scan is bounded
(project/scan.py: MAX_GLOB_DIRS directories listed, `**` at most MAX_GLOB_DEPTH deep) so no
glob walks the machine or recurses until Python gives up."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from conftest import run_cli, write

OUT_PATTERNS = ["../outside/**", "../../**", "../*", "/**", str(Path("/")), "pkgs/../../outside/*", "linked/*",
                "linked/**", "**/../../outside/*"]


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    for name in ("a", "b"):
        write(root, f"pkgs/{name}/package.json", json.dumps({"name": name}))
        write(root, f"pkgs/{name}/index.js", "export const x = 1;\n")
        write(root, f"crates/{name}/Cargo.toml", f'[package]\nname = "{name}"\n')
        write(root, f"crates/{name}/src/lib.rs", "pub fn f() {}\n")
    for name in ("evil", "evil2"):  # what a glob out would find
        write(tmp_path, f"outside/{name}/package.json", json.dumps({"name": name}))
        write(tmp_path, f"outside/{name}/Cargo.toml", f'[package]\nname = "{name}"\n')
        write(tmp_path, f"outside/{name}/index.js", "export const y = 2;\n")
    os.symlink(tmp_path / "outside", root / "linked")
    return root


def _init(root: Path) -> tuple[str, float]:
    began = time.monotonic()
    proc = run_cli("project", "init", "--root", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return (root / ".repoctx/project.yaml").read_text(), time.monotonic() - began


@pytest.mark.parametrize("manifest", ["pnpm", "npm", "cargo"])
def test_member_globs_never_list_folders_outside(repo, manifest):
    patterns = ["pkgs/*", *OUT_PATTERNS] if manifest != "cargo" else ["crates/*", *OUT_PATTERNS]
    if manifest == "pnpm":
        write(repo, "pnpm-workspace.yaml", "packages:\n" + "".join(f"  - {json.dumps(p)}\n" for p in patterns))
        write(repo, "package.json", json.dumps({"name": "root", "private": True}))
    elif manifest == "npm":
        write(repo, "package.json", json.dumps({"name": "root", "workspaces": patterns}))
    else:
        write(repo, "Cargo.toml", "[workspace]\nmembers = [" + ", ".join(json.dumps(p) for p in patterns) + "]\n")
    text, took = _init(repo)
    assert "evil" not in text and "outside" not in text and "linked" not in text
    inside = "pkgs/a" if manifest != "cargo" else "crates/a"
    assert inside in text  # the members inside are still found
    assert took < 30, took


def test_a_deep_tree_under_a_double_star_is_bounded(repo):
    deep = repo / "pkgs"
    for i in range(60):  # deeper than any `**` goes
        deep = deep / f"d{i}"
    write(deep, "package.json", json.dumps({"name": "deep"}))
    write(repo, "package.json", json.dumps({"name": "root", "workspaces": ["**", "pkgs/**"]}))
    text, took = _init(repo)
    assert "pkgs/a" in text and "d59" not in text
    assert took < 30, took
