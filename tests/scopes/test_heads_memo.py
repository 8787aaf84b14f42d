"""The memo of context-file heads that `repoctx status` keeps between runs: it must never
make an answer differ from a fresh parse, whatever happened to the files or the memo."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from conftest import run_cli
from sample_repo import write_context


def status(root: Path) -> dict:
    proc = run_cli("status", "--json", "--root", str(root), cwd=root)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def summaries(root: Path) -> dict[str, str]:
    return {e["scope"]: e.get("summary") for e in status(root)["entries"]}


def memo_files() -> list[Path]:
    return sorted((Path(os.environ["XDG_CACHE_HOME"]) / "repoctx").glob("heads-*"))


def age(path: Path, seconds: float) -> int:
    """Set the file's mtime `seconds` in the past, old enough for the memo to trust it."""
    ns = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(ns, ns))
    return ns


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    for scope in ("a", "b"):
        (root / scope).mkdir(parents=True)
        (root / scope / "mod.py").write_text("x = 1\n" * 3000)
    return root


def test_an_edited_context_file_is_read_again(repo):
    context = write_context(repo, "a", "First words.")
    age(context, 60)
    assert summaries(repo)["a"] == "First words."
    assert memo_files(), "status left no memo in the cache directory"
    write_context(repo, "a", "Other words, longer.")
    assert summaries(repo)["a"] == "Other words, longer."


def test_a_recent_file_is_not_trusted_to_its_stamp(repo):
    """Rewritten within the same clock tick with the same size, a file keeps its (mtime, size):
    only a file modified well before the memo was written may be known by its stamp."""
    context = write_context(repo, "a", "Summary AAAA")
    stamp = context.stat().st_mtime_ns
    assert summaries(repo)["a"] == "Summary AAAA"
    write_context(repo, "a", "Summary BBBB")
    os.utime(context, ns=(stamp, stamp))
    assert summaries(repo)["a"] == "Summary BBBB"


def test_a_broken_memo_is_ignored(repo):
    age(write_context(repo, "a", "Kept."), 60)
    age(write_context(repo, "b", "Also kept."), 60)
    before = status(repo)
    for memo in memo_files():
        memo.write_bytes(b"\x00not msgpack at all")
    assert status(repo) == before
    for memo in memo_files():
        memo.write_bytes(b"\x81\xa1a\x93\x01\x02\xc0")  # valid msgpack, a wrong stamp for "a"
    assert status(repo) == before


def test_answers_with_and_without_the_memo_agree(repo):
    age(write_context(repo, "a", "Alpha."), 60)
    (repo / "b" / ".context.yaml").write_text("version: 1\nsummary: [unclosed\n")
    age(repo / "b" / ".context.yaml", 60)
    cold = status(repo)
    warm = status(repo)  # from the memo
    for memo in memo_files():
        memo.unlink()
    assert warm == cold == status(repo)
    assert {e["scope"]: e["state"] for e in cold["entries"]}["b"] == "invalid"
