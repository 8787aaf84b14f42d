"""The Rust walk and fingerprints against a plain-Python oracle on random trees,
and against Node's own `fs.stat` (what dotcontext hashes) where node is installed."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from repoctx import _core

SKIP = set(_core.SKIP_DIRS)


def oracle_fingerprint(directory: str) -> str:
    lines = []
    for entry in os.scandir(directory):
        if entry.is_file(follow_symlinks=False) and entry.name != ".context.yaml":
            st_ = entry.stat(follow_symlinks=False)
            sec, nsec = divmod(st_.st_mtime_ns, 10**9)
            ms = math.floor(sec * 1000.0 + nsec / 1e6)
            lines.append(f"{entry.name}:{ms}:{st_.st_size}")
    lines.sort(key=lambda s: s.encode("utf-16-be"))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:8]


def oracle_walk(root: str, ignored_names: set[str], max_depth: int, min_tokens: int):
    """dotcontext's scan and min_tokens rule, for trees whose ignore rules are plain names."""
    rows = {}

    def scan(abs_dir: str, scope: str, depth: int) -> tuple[bool, bool]:
        source_bytes, source_files, children = 0, 0, []
        for entry in os.scandir(abs_dir):
            if entry.is_file(follow_symlinks=False):
                name = entry.name
                if name not in (".context.yaml", ".context.config.yaml") and _core.is_source_file(name):
                    source_bytes += entry.stat(follow_symlinks=False).st_size
                    source_files += 1
            elif entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") or entry.name in SKIP or entry.name in ignored_names:
                    continue
                children.append(entry.name)
        child_inc = child_kept = False
        if depth < max_depth:
            for name in children:
                inc, kept = scan(os.path.join(abs_dir, name), name if scope == "." else f"{scope}/{name}", depth + 1)
                child_inc |= inc
                child_kept |= kept
        root_ = scope == "."
        included = root_ or source_files > 0 or child_inc
        kept = included and (root_ or min_tokens <= 0 or math.ceil(source_bytes / 4) >= min_tokens or child_kept)
        rows[scope] = (oracle_fingerprint(abs_dir), source_bytes, included, kept)
        return included, kept

    scan(root, ".", 0)
    return rows


names = st.sampled_from(["a", "b", "src", "lib", "node_modules", ".hidden", "gen", "é", "z z", "target"])
file_names = st.sampled_from(["main.py", "x.rs", "README.md", "data.bin", "Makefile", ".env", "App.TSX", "notes"])


@st.composite
def trees(draw):
    """A list of (relative path, size, mtime_ns) files and the names the root .gitignore lists."""
    files = []
    for _ in range(draw(st.integers(1, 25))):
        depth = draw(st.integers(0, 4))
        parts = [draw(names) for _ in range(depth)]
        size = draw(st.sampled_from([0, 1, 3, 4, 5, 100, 4095, 4096, 4097, 20000]))
        # Nanoseconds near the top of a millisecond exercise Node's float rounding.
        mtime = draw(st.integers(1_500_000_000, 1_900_000_000)) * 10**9 + draw(
            st.sampled_from([0, 1, 999_999, 123_456_789, 999_999_999, 500_000_000])
        )
        files.append(("/".join([*parts, draw(file_names)]), size, mtime))
    ignored = draw(st.sets(st.sampled_from(["gen", "b", "lib"]), max_size=2))
    return files, ignored


def build(root: Path, files, ignored) -> None:
    for rel, size, mtime in files:
        path = root / rel
        if any(p.is_file() for p in [*path.parents][: len(Path(rel).parts) - 1]):
            continue  # a file already stands where this path wants a directory
        if path.is_dir():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
        os.utime(path, ns=(mtime, mtime))
    if ignored:
        (root / ".gitignore").write_text("".join(f"{n}/\n" for n in sorted(ignored)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=trees(), max_depth=st.sampled_from([1, 2, 10]), min_tokens=st.sampled_from([0, 1, 2, 1024, 4096]))
def test_walk_matches_oracle(tmp_path_factory, tree, max_depth, min_tokens):
    root = tmp_path_factory.mktemp("tree")
    files, ignored = tree
    build(root, files, ignored)
    table = _core.walk(str(root), [], max_depth, min_tokens)
    expected = oracle_walk(str(root), ignored, max_depth, min_tokens)
    got = {r.scope: (r.fingerprint, r.source_bytes, r.included, r.eligible) for r in table.rows}
    assert got == expected
    assert [r.scope for r in table.rows] == sorted(got, key=lambda s: s.encode())
    assert table.skipped == sum(1 for fp, b, inc, kept in expected.values() if inc and not kept)
    assert table.left_out == [] and table.generation == 0 and table.changed_at is None
    for r in table.rows:
        assert _core.fingerprint(str(root / r.scope)) == r.fingerprint


def test_walk_honours_nested_gitignore_contextignore_exclude_and_config(tmp_path):
    for d in ["keep", "sub/gen", "sub/keep", "ctxign", "excluded", "cfg", "neg/inner"]:
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "m.py").write_text("x" * 10)
    (tmp_path / "sub/.gitignore").write_text("gen/\n")
    (tmp_path / ".contextignore").write_text("ctxign\n")
    (tmp_path / ".git/info").mkdir(parents=True)
    (tmp_path / ".git/info/exclude").write_text("excluded\n")
    (tmp_path / ".gitignore").write_text("neg/*\n!neg/inner\n")
    scopes = [r.scope for r in _core.walk(str(tmp_path), ["cfg"], 10, 0).rows]
    assert scopes == [".", "keep", "neg", "neg/inner", "sub", "sub/keep"]


def test_symlinks_are_neither_followed_nor_hashed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x" * 100)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("x")
    before = _core.fingerprint(str(repo))
    os.symlink(outside, repo / "link")
    os.symlink(outside / "secret.py", repo / "secret.py")
    assert [r.scope for r in _core.walk(str(repo), [], 10, 0).rows] == ["."]
    assert _core.fingerprint(str(repo)) == before


CONTRACT_KEYS = {"root", "total_directories", "skipped_directories", "tracked", "entries"}


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no mode that makes a directory unreadable")
def test_unreadable_subdirectory_is_reported_not_fatal(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads every directory whatever its mode")
    for d in ("locked", "open"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "a.py").write_text("x")
    (tmp_path / ".context.config.yaml").write_text("min_tokens: 0\n")
    (tmp_path / "locked").chmod(0)
    try:
        table = _core.walk(str(tmp_path), [], 10, 0)
        proc = run_cli("--json", "status", "--root", str(tmp_path))
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert [r.scope for r in table.rows] == [".", "open"]
    [gone] = table.left_out
    assert gone.path == "locked" and "Permission denied" in gone.reason
    # The person is told; the JSON stays exactly the contract's.
    assert proc.returncode == 0
    assert "directory locked was left out of the scan: Permission denied" in proc.stderr
    listed = json.loads(proc.stdout)
    assert set(listed) == CONTRACT_KEYS and [e["scope"] for e in listed["entries"]] == [".", "open"]


def test_a_directory_whose_name_is_not_utf8_is_left_out_and_named(tmp_path):
    # Read lossily, its name would become "caf\ufffd": a scope no later read could find.
    for parent in (b"", b"sub"):
        os.makedirs(os.path.join(bytes(tmp_path), parent, b"caf\xe9"))
        with open(os.path.join(bytes(tmp_path), parent, b"caf\xe9", b"f\xff.py"), "wb") as fh:
            fh.write(b"x" * 10)
    (tmp_path / "sub/m.py").write_text("m")
    (tmp_path / ".context.config.yaml").write_text("min_tokens: 0\n")
    table = _core.walk(str(tmp_path), [], 10, 0)
    assert [r.scope for r in table.rows] == [".", "sub"]
    assert [(gone.path, gone.reason) for gone in table.left_out] == [
        ("caf\\xe9", "its name is not valid UTF-8"), ("sub/caf\\xe9", "its name is not valid UTF-8")]
    proc = run_cli("--json", "status", "--root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert [e["scope"] for e in json.loads(proc.stdout)["entries"]] == [".", "sub"]
    assert "directory sub/caf\\xe9 was left out of the scan: its name is not valid UTF-8" in proc.stderr
    assert proc.stderr.count("caf\\xe9 was left out") == 2  # each named once
    # Writing context files skips it too, instead of failing on a path that does not exist.
    init = run_cli("init", "--root", str(tmp_path))
    assert init.returncode == 0, init.stdout + init.stderr
    assert (tmp_path / "sub/.context.yaml").is_file()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the cross-check with Node's fs.stat needs it")
def test_fingerprint_equals_what_node_hashes(tmp_path):
    names = ["a.py", "B.md", "z", "é.txt", "\U0001F600.rs", "\uff5e.go", ".context.config.yaml"]
    for i, name in enumerate(names):
        p = tmp_path / name
        p.write_bytes(b"y" * (i * 7))
        ns = 1_700_000_000 * 10**9 + [0, 999_999_999, 123_456_789, 999_999, 1, 500_000_000, 42][i]
        os.utime(p, ns=(ns, ns))
    (tmp_path / ".context.yaml").write_text("ignored")
    (tmp_path / "dir").mkdir()
    script = """
const fs = require('fs'), path = require('path'), crypto = require('crypto');
const dir = process.argv[1];
const lines = [];
for (const e of fs.readdirSync(dir, {withFileTypes: true})) {
  if (!e.isFile() || e.name === '.context.yaml') continue;
  const s = fs.statSync(path.join(dir, e.name));
  lines.push(`${e.name}:${Math.floor(s.mtimeMs)}:${s.size}`);
}
lines.sort();
process.stdout.write(crypto.createHash('sha256').update(lines.join('\\n')).digest('hex').slice(0, 8));
"""
    node = subprocess.run(["node", "-e", script, str(tmp_path)], capture_output=True, text=True, check=True)
    assert _core.fingerprint(str(tmp_path)) == node.stdout
