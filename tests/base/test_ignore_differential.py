"""Ignore semantics: the Rust walk (`_core.walk`) against `git check-ignore` on generated trees
with nested .gitignore files, negations, anchored, `**`, character-class (POSIX ones too),
escaped and space-padded patterns (rust/tree/ignore.rs matches them as git does).

The walk prunes directories (files inside a walked directory all count toward its
fingerprint, as dotcontext does), so that comparison is over directories: a directory is
walked exactly when neither it nor any ancestor is ignored by git. The files a context file
lists (rust/lang/extract.rs) and the annotation index (rust/artifacts/srcindex.rs) leave out files, so they
are compared over files. REPOCTX_IGNORE_TREES sets the number of generated trees (20; 300 under REPOCTX_DEEP=1).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess

import pytest

from conftest import how_deep
from repoctx import _core

TREES = how_deep("REPOCTX_IGNORE_TREES", 20, 300)
NAMES = ["a", "b", "ab", "ba", "x1", "x2", "lib", "src", "gen", "A"]


def _pattern(rng: random.Random, dirs: list[str]) -> str:
    name = rng.choice(NAMES)
    other = rng.choice(NAMES)
    pat = rng.choice([
        name, f"/{name}", f"{name}/", f"/{name}/", f"**/{name}", f"{name}/**", f"{other}/**/{name}",
        f"{other}/{name}", "[ab]*", "x[0-9]", "?", "*b", "[!a]*", f"{name[0]}*", "*", f"**/{other}/{name}/",
        rng.choice(dirs) if dirs else name, f"{name}*/", f"\\!{name}", f"{name} ", f"#{name}",
        "[[:upper:]]*", "[[:digit:]]", "[]a]*", "[a-]b", f"***/{name}", f"{other}/***", f"{other}/**/{name}/**",
        f"*{name}.py", f"{name}?py", f"\\{name}", f"{name}\\ ", "**", f"{name}.*", f"/**/{name}",
    ])
    return ("!" + pat) if rng.random() < 0.3 else pat


def _tree(root: str, rng: random.Random) -> list[str]:
    dirs: list[str] = []
    frontier = [""]
    while frontier and len(dirs) < 40:
        parent = frontier.pop(0)
        for name in rng.sample(NAMES, rng.randint(0, 3)):
            rel = f"{parent}/{name}" if parent else name
            if parent.count("/") >= 3:
                continue
            os.makedirs(os.path.join(root, rel), exist_ok=True)
            for file in ("f.py", f"{rng.choice(NAMES)}.py"):
                with open(os.path.join(root, rel, file), "w") as fh:
                    fh.write("# @spec SPEC-001\n")
            dirs.append(rel)
            frontier.append(rel)
    for where in [""] + rng.sample(dirs, min(len(dirs), 3)):
        lines = [_pattern(rng, dirs) for _ in range(rng.randint(1, 5))]
        with open(os.path.join(root, where, ".gitignore"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return dirs


def _git_ignored(root: str, dirs: list[str]) -> set[str]:
    proc = subprocess.run(["git", "check-ignore", "--stdin", "--no-index"], cwd=root, input="\n".join(dirs),
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return {line.rstrip("/") for line in proc.stdout.splitlines()}


def _repositories(tmp_path):
    """(seed, root, directories) of TREES random repositories, each with its ignore files."""
    for seed in range(TREES):
        root = str(tmp_path / f"t{seed}")
        os.makedirs(root)
        subprocess.run(["git", "init", "-q", root], check=True)
        yield seed, root, _tree(root, random.Random(seed))


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_walk_prunes_what_git_ignores(tmp_path):
    disagreements = []
    for seed, root, dirs in _repositories(tmp_path):
        ignored = _git_ignored(root, dirs)
        expected = {d for d in dirs if not any(d == i or d.startswith(i + "/") for i in ignored)}
        walked = {r.scope for r in _core.walk(root, [], 50, 0).rows} - {"."}
        for d in sorted(expected ^ walked):
            rules = {w: open(os.path.join(root, w, ".gitignore")).read() for w in [""] + dirs
                     if os.path.isfile(os.path.join(root, w, ".gitignore"))}
            disagreements.append(f"seed {seed}: {d} git={'walked' if d in expected else 'ignored'} rules={rules}")
    print(f"\nignore differential: {TREES} trees, {len(disagreements)} disagreements")
    assert not disagreements, disagreements[:5]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_listings_leave_out_the_files_git_ignores(tmp_path):
    disagreements = []
    for seed, root, _dirs in _repositories(tmp_path):
        walked = sorted(r.scope for r in _core.walk(root, [], 50, 0).rows)
        files = [f"{d}/{n}" if d != "." else n for d in walked for n in os.listdir(os.path.join(root, d))
                 if n.endswith(".py")]
        expected = set(files) - _git_ignored(root, files)
        listed = _core.ScopeSources(root, walked).source_files(walked)
        by_extract = {f"{d}/{n}" if d != "." else n for d, names in zip(walked, listed) for n in names}
        by_index = {a.path for a in _core.SourceIndex(root, "@", ["."]).annotations()}
        for name, got in (("extract", by_extract), ("srcindex", by_index)):
            for f in sorted(expected ^ got):
                disagreements.append(f"seed {seed}: {name}: {f} git={'kept' if f in expected else 'ignored'}")
    print(f"\nignore differential (files): {TREES} trees, {len(disagreements)} disagreements")
    assert not disagreements, disagreements[:5]
