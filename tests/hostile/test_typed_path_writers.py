"""Writers that take a typed path (issue 32, item 2): `report --out PATH` writes a temporary
file and renames it over PATH. It never replaces what is not a regular file (a FIFO, a
character device, a socket, a directory), never makes missing folders it was not asked for,
and a file it replaces keeps its mode, owner and group. The rule lives in the one writer
(rust/tree/fs.rs), so every writer of the confined layer keeps it; a proposal applied over a
FIFO in place of a context file is refused by it too."""

from __future__ import annotations

import os
import socket
import stat
import sys
from pathlib import Path

import pytest

from conftest import mkfifo, run_cli
from sample_repo import build_sample_repo


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


def _kinds(tmp_path: Path) -> dict[str, Path]:
    """One of each thing a writer must not replace, outside the repository and inside it."""
    made = {}
    for where in ("outside", "repo/docs"):
        base = tmp_path / where
        base.mkdir(parents=True, exist_ok=True)
        mkfifo(base / "fifo.html")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(base / "sock.html"))
        sock.close()
        (base / "dir.html").mkdir()
        made.update({f"{where}/fifo": base / "fifo.html", f"{where}/socket": base / "sock.html",
                     f"{where}/dir": base / "dir.html"})
    made["/dev/null"] = Path("/dev/null")
    return made


def _identity(p: Path) -> tuple:
    st = os.lstat(p)
    return (st.st_ino, st.st_mode, st.st_rdev)


def test_report_out_never_replaces_what_is_not_a_regular_file(repo, tmp_path):
    for name, path in _kinds(tmp_path).items():
        before = _identity(path)
        out = str(path) if name.startswith(("outside", "/dev")) else os.path.relpath(path, repo)
        proc = run_cli("report", "--root", str(repo), "--out", out)
        assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        assert "not replaced" in proc.stderr or "Is a directory" in proc.stderr, (name, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert _identity(path) == before, name  # the very same node, untouched
    leftovers = [p for p in tmp_path.rglob(".repoctx-*.tmp")]
    assert leftovers == []


def test_report_out_makes_no_missing_folder(repo, tmp_path):
    for out in (str(tmp_path / "nowhere/deeper/report.html"), "docs/made/report.html"):
        proc = run_cli("report", "--root", str(repo), "--out", out)
        assert proc.returncode == 1, proc.stdout
        assert "its folder does not exist" in proc.stderr
    assert not (tmp_path / "nowhere").exists() and not (repo / "docs/made").exists()
    # The default place is repoctx's own: made when missing.
    proc = run_cli("report", "--root", str(repo))
    assert proc.returncode == 0 and (repo / ".repoctx/report.html").is_file(), proc.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no POSIX owner, group or mode to keep")
def test_a_file_replaced_keeps_its_mode_owner_and_group(repo, tmp_path):
    target = tmp_path / "kept.html"
    target.write_text("old")
    os.chmod(target, 0o640)
    if os.geteuid() != 0:
        pytest.skip("only root can give a file another owner to keep")
    os.chown(target, 4321, 4322)
    proc = run_cli("report", "--root", str(repo), "--out", str(target))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    st = os.stat(target)
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o640, 4321, 4322)
    assert target.read_text().startswith("<!")


def test_the_one_writer_refuses_a_fifo_in_the_repository(repo):
    from repoctx.base import fs

    mkfifo(repo / "docs/fifo.yaml")
    with pytest.raises(OSError) as caught:
        fs.write_atomic(str(repo), "docs/fifo.yaml", b"x: 1\n")
    assert "not replaced" in str(caught.value)
    assert stat.S_ISFIFO(os.lstat(repo / "docs/fifo.yaml").st_mode)
