"""The confined file-system layer (repoctx/fs.py over rust/tree/fs.rs): every operation on a path
relative to the root, with links of every shape in the way, and a thread swapping a directory
for a link out while writes run. Outside the root sits a directory holding a secret: it must
never be read into any answer, and its names and bytes must never change."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import mkfifo
from repoctx.base import fs, workspace

SECRET = b"CONFINED-FS-SECRET-5c1e"


def snapshot(directory: Path) -> dict[str, bytes | None]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            out[str(p.relative_to(directory))] = None if p.is_dir() or p.is_symlink() else p.read_bytes()
    return out


@pytest.fixture
def tree(tmp_path):
    root, out = tmp_path / "root", tmp_path / "out"
    (root / "in").mkdir(parents=True)
    (root / "in" / "a.txt").write_text("inside")
    (out / "sub").mkdir(parents=True)
    (out / "secret").write_bytes(SECRET)
    (out / "sub" / "secret").write_bytes(SECRET)
    links = {
        "abs": str(out),  # a directory out, absolute
        "rel": "../out",  # a directory out, relative
        "file": str(out / "secret"),  # a file out
        "in/up": "../../out/sub",  # out from a subdirectory
        "chain": "in/up",  # a link in, to a link out
        "dangling": str(out / "missing"),  # out and dangling: nothing may be made there
        "zero": "/dev/zero",  # a device out: must not be read until memory runs out
        "loop": "loop",
        "alias": "in",  # stays inside: followed
        "abs_in": str(root / "in"),  # absolute, but inside: followed
        "back_in": "../root/in",  # climbs out and back in: followed
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    return root, out, links


LINKS_OUT = ["abs", "rel", "file", "in/up", "chain", "dangling", "zero"]


def refused(call, *args) -> str:
    with pytest.raises(fs.LinkRefused) as info:
        call(*args)
    assert info.value.errno == errno.ELOOP
    return info.value.strerror


@pytest.mark.parametrize("link", LINKS_OUT)
def test_no_operation_goes_through_a_link_out(tree, link):
    root, out, _ = tree
    before = snapshot(out)
    r = str(root)
    named = "in/up" if link == "chain" else link  # a chain is named at the link that leaves
    for rel in (link, f"{link}/secret", f"{link}/sub/new"):
        for call, args in (
            (fs.read_bytes, (r, rel)),
            (fs.write_atomic, (r, rel, b"written")),
            (fs.makedirs, (r, rel)),
            (fs.listdir, (r, rel)),
            (fs.stat, (r, rel)),
            (fs.open_dir, (r, rel)),
        ):
            assert f"'{named}'" in refused(call, *args)
    assert fs.lstat(r, link) is not None  # the link itself can be looked at, and removed
    fs.remove(r, link)
    assert snapshot(out) == before


def test_links_inside_are_followed(tree):
    root, _, _ = tree
    r = str(root)
    assert fs.read_bytes(r, "alias/a.txt") == b"inside"
    assert fs.read_bytes(r, "abs_in/a.txt") == fs.read_bytes(r, "back_in/a.txt") == b"inside"
    fs.write_atomic(r, "alias/b.txt", b"new")
    assert (root / "in" / "b.txt").read_bytes() == b"new"
    assert sorted(fs.listdir(r, "alias")) == ["a.txt", "b.txt", "up"]
    with pytest.raises(OSError) as info:
        fs.read_bytes(r, "loop")
    assert info.value.errno == errno.ELOOP


def test_reads_are_capped_and_only_of_regular_files(tree):
    root, _, _ = tree
    r = str(root)
    with pytest.raises(OSError) as info:
        fs.read_bytes(r, "in/a.txt", 3)
    assert info.value.errno == errno.EFBIG
    with pytest.raises(IsADirectoryError):
        fs.read_bytes(r, "in")
    mkfifo(root / "in" / "fifo")
    with pytest.raises(OSError) as info:
        fs.read_bytes(r, "in/fifo")  # would block forever if opened for a plain read
    assert info.value.errno == errno.EINVAL
    with pytest.raises(FileNotFoundError):
        fs.read_bytes(r, "in/missing")


def test_workspace_writes_and_reads_by_absolute_path_are_confined(tree):
    root, out, _ = tree
    before = snapshot(out)
    workspace.Workspace.open(root)  # registers the root
    refused(workspace.atomic_write, str(root / "rel" / "x.yaml"), b"x: 1")
    assert workspace.load_yaml_file(str(root / "file")) is None
    workspace.atomic_write(str(root / "in" / "c.yaml"), b"c: 1")
    assert workspace.load_yaml_file(str(root / "in" / "c.yaml")) == {"c": 1}
    assert snapshot(out) == before


# Random trees: directories, links inside, links out; every operation on every path either
# stays inside or is refused, and the outside never changes.
names = st.sampled_from(["a", "b", "c"])
entries = st.lists(
    st.tuples(st.lists(names, min_size=1, max_size=3), st.sampled_from(["dir", "in", "out", "up"])),
    max_size=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=entries, probe=st.lists(names, min_size=1, max_size=4))
def test_random_trees_never_reach_outside(tmp_path_factory, shape, probe):
    base = tmp_path_factory.mktemp("rand")
    root, out = base / "root", base / "out"
    root.mkdir()
    out.mkdir()
    (out / "a").write_bytes(SECRET)
    for parts, kind in shape:
        path = root.joinpath(*parts)
        if os.path.lexists(path):
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if kind == "dir":
            path.mkdir()
        else:
            target = {"in": os.path.relpath(root, path.parent), "out": str(out), "up": "../" * len(parts)}[kind]
            os.symlink(target, path)
    before = snapshot(out)
    rel = "/".join(probe)
    r = str(root)
    for call, args in ((fs.read_bytes, (r, rel)), (fs.write_atomic, (r, rel, b"w")), (fs.makedirs, (r, rel + "/d")),
                       (fs.listdir, (r, rel)), (fs.stat, (r, rel)), (fs.remove, (r, rel))):
        try:
            result = call(*args)
        except OSError:
            continue
        assert SECRET not in repr(result).encode()
    assert snapshot(out) == before


def test_swapping_a_directory_for_a_link_out_during_writes(tmp_path):
    """A local process swaps `d` between a directory and a link out while writes into it run:
    every write lands inside or is refused, none outside."""
    root, out = tmp_path / "root", tmp_path / "out"
    root.mkdir()
    out.mkdir()
    real, link = root / "d.real", root / "d.link"
    real.mkdir()
    os.symlink(str(out), link)
    stop = threading.Event()

    def swap():
        while not stop.is_set():
            os.rename(real, root / "d")
            os.rename(root / "d", real)
            os.rename(link, root / "d")
            os.rename(root / "d", link)

    swapper = threading.Thread(target=swap)
    swapper.start()
    written = refused_count = 0
    try:
        # 2,000 writes at least; more while one side of the race is still unhit (a loaded
        # machine can starve the swapper for a while), up to 50,000.
        for i in range(50_000):
            if i >= 2000 and written and refused_count:
                break
            try:
                fs.write_atomic(str(root), f"d/f{i % 7}", b"data")
                written += 1
            except OSError:
                refused_count += 1
    finally:
        stop.set()
        swapper.join()
    assert os.listdir(out) == []
    assert written and refused_count  # both sides of the race were hit
