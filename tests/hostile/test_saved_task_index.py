"""A hostile `.repoctx/task-index.bin` (the saved task index, rust/tasks/store.rs): a
repository can commit any bytes there, link it or `.repoctx` out of the root, or put a
directory, a FIFO or a huge sparse file in its place. Every `repoctx context` then answers
exactly as it does with no file at all, without a crash or a hang, never reads or writes
through a link that leads out, and leaves a good file behind where it may write one."""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import NOT_A_FILE, SETTLE, put_not_a_file, run_cli, snapshot, write
from repoctx.base import task_index
from repoctx.base.workspace import Workspace

SAVED = task_index.SAVED_FILE
FILES = {
    "app/orders.py": "from app.tax import tax_rate\n\n\ndef apply_discount(order, coupon):\n"
                     "    return order.total * (1 - coupon.percent / 100) * tax_rate()\n",
    "app/tax.py": "def tax_rate():\n    return 1.2\n",
    "web/cart.ts": "export function renderCart(items: string[]) { return items.join(','); }\n",
    "docs/guide.md": "# Guide\n\nCoupons take a percentage off an order.\n",
}
TASK = "apply_discount coupon percentage on the order total"


def repo_with_answer(tmp_path: Path) -> tuple[Path, str, bytes]:
    """A repository, the answer with no saved index, and the good file that answer wrote."""
    repo = tmp_path / "repo"
    for rel, text in FILES.items():
        write(repo, rel, text)
    time.sleep(SETTLE)  # past the window in which files just written are not saved
    baseline = answer(repo)
    return repo, baseline, (repo / SAVED).read_bytes()


def answer(repo: Path, code: int = 0) -> str:
    return cli(repo, code).stdout


def cli(repo: Path, code: int = 0) -> subprocess.CompletedProcess:
    proc = run_cli("--root", str(repo), "context", TASK, "--json")
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "unexpected error" not in proc.stderr, proc.stderr
    return proc


def index_of(repo: Path):
    return task_index.task_index(Workspace.open(repo))


def _varint(b: bytes, at: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        v |= (b[at] & 0x7F) << shift
        shift += 7
        at += 1
        if b[at - 1] < 0x80:
            return v, at


def header_end(good: bytes) -> int:
    """Where the header of a good file ends: magic, version, build, root, patterns, prefix, contextia."""
    at = 12
    for _ in range(2):  # build identity, root
        n, at = _varint(good, at)
        at += n
    count, at = _varint(good, at)
    for _ in range(count + 1):  # the patterns, the prefix
        n, at = _varint(good, at)
        at += n
    if good[at] == 1:
        n, at = _varint(good, at + 1)
        return at + n
    return at + 1


def flip(good: bytes, at: int) -> bytes:
    return good[:at] + bytes([good[at] ^ 0x40]) + good[at + 1:]


DAMAGE = {
    "empty": lambda good: b"",
    "cut to its magic": lambda good: good[:8],
    "cut in the header": lambda good: good[:20],
    "cut in half": lambda good: good[: len(good) // 2],
    "one byte short": lambda good: good[:-1],
    "one byte more": lambda good: good + b"\0",
    "random bytes": lambda good: random.Random(7).randbytes(len(good)),
    "the magic, then random bytes": lambda good: good[:8] + random.Random(8).randbytes(4096),
    "another format version": lambda good: good[:8] + (99).to_bytes(4, "little") + good[12:],
    "a valid header, then a count of 2**63": lambda good: good[: header_end(good)] + b"\xff" * 9 + b"\x00" + b"\0" * 64,
    "a valid header, then a string of 2**40 bytes": lambda good: good[: header_end(good)] + b"\x01\x80\x80\x80\x80\x80\x20",
    "a byte flipped in the terms": lambda good: flip(good, header_end(good) + 3),
    "a byte flipped in the last file": lambda good: flip(good, len(good) - 12),
    "a byte flipped in the checksum": lambda good: flip(good, len(good) - 1),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_damaged_bytes_answer_as_no_file_and_a_good_file_replaces_them(tmp_path, damage):
    repo, baseline, good = repo_with_answer(tmp_path)
    bad = DAMAGE[damage](good)
    assert bad != good
    (repo / SAVED).write_bytes(bad)
    index = index_of(repo)
    assert index.refused is not None and index.loaded == 0, damage
    assert answer(repo) == baseline
    assert (repo / SAVED).read_bytes() != bad, "written again, as a build writes it"
    assert index_of(repo).loaded == len(FILES)


def test_a_file_saved_for_another_root_or_other_options_is_not_used(tmp_path):
    repo, _, _ = repo_with_answer(tmp_path)
    # Moved: every file keeps its inode and ctime, so only the root tells the saved index apart.
    moved = tmp_path / "moved"
    repo.rename(moved)
    index = index_of(moved)
    assert "another root" in (index.refused or "") and index.loaded == 0
    from_foreign = answer(moved)
    (moved / SAVED).unlink()
    assert answer(moved) == from_foreign
    # Other ignore patterns: the saved index is not used, and what they leave out is left out.
    write(moved, ".context.config.yaml", 'ignore: ["web/"]\n')
    index = index_of(moved)
    assert "other options" in (index.refused or "")
    with_patterns = answer(moved)
    assert "web/cart.ts" not in with_patterns
    (moved / SAVED).unlink()
    assert answer(moved) == with_patterns


def test_a_copy_from_another_machine_or_checkout_is_read_again_file_by_file(tmp_path):
    """A saved index committed from elsewhere and copied in: the stat keys (inode, ctime) are not
    this tree's, so no file is taken from it, whatever it says of them."""
    repo, baseline, _good = repo_with_answer(tmp_path)
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin, symlinks=True)
    twin_index = index_of(twin)
    assert twin_index.refused is not None  # another root
    # Same root, saved bytes made to lie (another tree's facts under these paths): keys differ.
    other = tmp_path / "other"
    for rel in FILES:
        write(other, rel, "def unrelated():\n    pass\n")
    time.sleep(SETTLE)
    answer(other)
    lie = (other / SAVED).read_bytes()
    shutil.rmtree(other)
    repo.rename(other)  # the repository now lives at the root the lie was saved for
    (other / SAVED).write_bytes(lie)
    index = index_of(other)
    assert index.refused is None and index.loaded == 0, "no stat key matches: every file is read"
    assert answer(other) == baseline.replace(str(repo), str(other))


@pytest.mark.parametrize("place", [".repoctx", SAVED])
def test_a_link_out_is_neither_read_nor_written_through(tmp_path, place):
    repo, baseline, good = repo_with_answer(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    if place == ".repoctx":
        shutil.rmtree(repo / ".repoctx")
        (out / "task-index.bin").write_bytes(good)  # even a good file is not read through the link
        target = out
    else:
        target = out / "task-index.bin"
        target.write_bytes(good)
        (repo / SAVED).unlink()
    os.symlink(target, repo / place)
    before = snapshot(out)
    index = index_of(repo)
    assert index.loaded == 0
    if place == ".repoctx":
        # `.repoctx/config.yaml` (the tokenizer) cannot be read either: the command says so.
        refused = json.loads(answer(repo, code=1))["error"]
        assert refused["code"] == "config_error" and "'.repoctx' is a link that leads outside" in refused["message"]
    else:
        assert answer(repo) == baseline
    assert snapshot(out) == before, "nothing written outside the root"
    assert (repo / place).is_symlink()


@pytest.mark.parametrize("kind", NOT_A_FILE)
def test_no_file_where_the_file_should_be_neither_hangs_nor_fails(tmp_path, kind):
    repo, baseline, _ = repo_with_answer(tmp_path)
    path = repo / SAVED
    path.unlink()
    put_not_a_file(path, kind, task_index.MAX_SAVED_BYTES)
    proc = cli(repo)
    assert proc.stdout == baseline
    assert ("task-index.bin is not used (larger than" in proc.stderr) == (kind == "huge sparse file"), proc.stderr
    if kind == "directory":
        assert (path / "inside").read_text() == "x"
    elif kind == "fifo":  # never replaced: the one writer replaces regular files only (issue 32, item 2)
        assert stat.S_ISFIFO(os.lstat(path).st_mode)
    else:
        assert index_of(repo).loaded == len(FILES), "replaced by a good file"


def _siphash13(data: bytes) -> int:
    """SipHash-1-3 with keys 0: Rust's `DefaultHasher::new()`, the saved file's checksum."""
    mask = (1 << 64) - 1
    v = [0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573]

    def rotl(x: int, b: int) -> int:
        return ((x << b) | (x >> (64 - b))) & mask

    def sip_round() -> None:
        v[0] = (v[0] + v[1]) & mask
        v[1] = rotl(v[1], 13) ^ v[0]
        v[0] = rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & mask
        v[3] = rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & mask
        v[3] = rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & mask
        v[1] = rotl(v[1], 17) ^ v[2]
        v[2] = rotl(v[2], 32)

    def absorb(m: int) -> None:
        v[3] ^= m
        sip_round()
        v[0] ^= m

    end = len(data) - len(data) % 8
    for at in range(0, end, 8):
        absorb(int.from_bytes(data[at:at + 8], "little"))
    absorb((len(data) & 0xFF) << 56 | int.from_bytes(data[end:], "little"))
    v[2] ^= 0xFF
    for _ in range(3):
        sip_round()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def seal(body: bytes) -> bytes:
    """`body` with the checksum a good file ends with: what a hostile writer can compute."""
    return body + _siphash13(body).to_bytes(8, "little")


# Bytes whose checksum is theirs, refused by the checks after files were adopted from them: what
# was adopted must be thrown away (the index is made part by part as the bytes are checked).
SEALED_DAMAGE = {  # the damage, and what the refusal says
    "a path saved twice": (lambda body: body.replace(b"\x0bweb/cart.ts", b"\x0aapp/tax.py", 1), "saved twice"),
    "a byte after the last context file": (lambda body: body + b"\0", "after the last context file"),
}


@pytest.mark.parametrize("damage", SEALED_DAMAGE)
def test_bytes_refused_after_files_were_adopted_answer_as_no_file(tmp_path, damage):
    repo, baseline, good = repo_with_answer(tmp_path)
    assert seal(good[:-8]) == good, "the checksum as the core computes it"
    damaged, why = SEALED_DAMAGE[damage]
    bad = seal(damaged(good[:-8]))
    assert bad != good
    (repo / SAVED).write_bytes(bad)
    index = index_of(repo)
    assert why in (index.refused or "") and index.loaded == 0, index.refused
    assert index.file_count == len(FILES), "every file read, none taken from the refused bytes"
    assert answer(repo) == baseline
    assert index_of(repo).loaded == index.file_count


def test_a_file_larger_than_the_trees_cap_is_never_read_though_the_walk_counts_beside_it(tmp_path):
    """A cold call reads the saved index beside the walk, once the walk has counted files enough
    for its size: a good head on a tail one byte over the whole tree's cap is waited for, never
    read, and refused by its size once the walk is over."""
    repo, baseline, good = repo_with_answer(tmp_path)
    cap = task_index.saved_bytes_cap(len(FILES))
    with open(repo / SAVED, "wb") as f:
        f.write(good)
        f.truncate(cap + 1)  # a good head on a sparse tail
    proc = cli(repo)
    assert proc.stdout == baseline
    assert f"task-index.bin is not used (larger than {cap} bytes; refused unread)" in proc.stderr, proc.stderr
    assert index_of(repo).loaded == len(FILES), "replaced by a good file"


def test_a_walk_that_fails_leaves_no_load_waiting_on_its_count(tmp_path, monkeypatch):
    """The load beside the walk waits on the walk's count (a saved file of 5 MiB, sparse, needs a
    tree of 64 files); a walk that raises must release it, not leave a thread waiting forever."""
    import threading

    from repoctx.base import index as tables

    repo, _, _ = repo_with_answer(tmp_path)
    with open(repo / SAVED, "wb") as f:
        f.truncate(5 << 20)

    def failing_walk(*args, **kwargs):
        time.sleep(0.2)  # the load is waiting by now
        raise OSError(5, "the walk failed")

    monkeypatch.setattr(tables, "scan", failing_walk)
    with pytest.raises(OSError, match="the walk failed"):
        index_of(repo)
    for load in [t for t in threading.enumerate() if t.name == task_index.LOAD_THREAD]:
        load.join(timeout=30)
        assert not load.is_alive(), "the load ended with the walk"
