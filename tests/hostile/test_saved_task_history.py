"""A hostile `.repoctx/task-history.bin` (git's history saved per HEAD, rust/tasks/
history_store.rs): any bytes, a file far larger than a read can be, a directory, a FIFO or a
link out in its place. `repoctx context` answers exactly as with no file (git's history read
again), never hangs or crashes, says on stderr why crafted bytes are not used, reads and writes
nothing through a link that leads out, and leaves a good file where it may write one."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from conftest import NOT_A_FILE, git_history, put_not_a_file, run_cli, snapshot
from repoctx.base import task_index

HISTORY = task_index.HISTORY_FILE
TASK = "apply_discount coupon percentage"


def repo_with_answer(tmp_path: Path) -> tuple[Path, str, bytes]:
    """A repository whose history ties two files, its answer, and the good file it wrote."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git_history(repo, [{"shop/orders.py": f"def apply_discount(order, coupon):\n    return {n}\n",
                        "shop/ledger.py": f"def book(entry):\n    return {n}\n"} for n in range(2)])
    baseline = answer(repo)
    assert "changed with" in baseline
    return repo, baseline, (repo / HISTORY).read_bytes()


def answer(repo: Path) -> str:
    return cli(repo).stdout


def cli(repo: Path) -> subprocess.CompletedProcess:
    proc = run_cli("--root", str(repo), "context", TASK, "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    return proc


def flip(good: bytes, at: int) -> bytes:
    return good[:at] + bytes([good[at] ^ 0x40]) + good[at + 1:]


DAMAGE = {
    "empty": lambda good: b"",
    "cut in half": lambda good: good[: len(good) // 2],
    "one byte more": lambda good: good + b"\0",
    "random bytes": lambda good: random.Random(7).randbytes(len(good)),
    "another format version": lambda good: good[:8] + (99).to_bytes(4, "little") + good[12:],
    "a byte flipped in a path": lambda good: flip(good, len(good) - 12),
    "a byte flipped in the checksum": lambda good: flip(good, len(good) - 1),
    "the saved index's bytes": lambda good: b"RCTXTIDX" + good[8:],
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_damaged_bytes_answer_as_no_file_and_a_good_file_replaces_them(tmp_path, damage):
    repo, baseline, good = repo_with_answer(tmp_path)
    bad = DAMAGE[damage](good)
    (repo / HISTORY).write_bytes(bad)
    proc = cli(repo)
    assert proc.stdout == baseline
    assert "task-history.bin is not used" in proc.stderr, proc.stderr
    assert (repo / HISTORY).read_bytes() == good, "read from git again and written again"


def test_a_history_saved_for_another_root_is_not_used(tmp_path):
    repo, baseline, _ = repo_with_answer(tmp_path)
    moved = tmp_path / "moved"
    repo.rename(moved)
    proc = cli(moved)
    assert "another root" in proc.stderr
    assert proc.stdout == baseline.replace(str(repo), str(moved))


@pytest.mark.parametrize("kind", NOT_A_FILE)
def test_no_file_where_the_file_should_be_neither_hangs_nor_fails(tmp_path, kind):
    repo, baseline, _ = repo_with_answer(tmp_path)
    path = repo / HISTORY
    path.unlink()
    put_not_a_file(path, kind, task_index.MAX_HISTORY_BYTES)
    proc = cli(repo)
    assert proc.stdout == baseline
    assert ("task-history.bin is larger than" in proc.stderr) == (kind == "huge sparse file"), proc.stderr


def test_a_link_out_is_neither_read_nor_written_through(tmp_path):
    repo, baseline, good = repo_with_answer(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "task-history.bin").write_bytes(good)
    (repo / HISTORY).unlink()
    os.symlink(out / "task-history.bin", repo / HISTORY)
    before = snapshot(out)
    assert answer(repo) == baseline
    assert snapshot(out) == before, "nothing written outside the root"
    assert (repo / HISTORY).is_symlink()
