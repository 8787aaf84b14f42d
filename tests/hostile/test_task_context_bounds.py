"""Task context against a hostile repository (issue 32 items 4 and 5):

- a FIFO anywhere git's history is read from (`.git`'s own files, a branch, the object
  database) never hangs `repoctx context` or the `task_context` tool: git is read in process
  through the view's checks, no `git` process is spawned, and the answer is the one without
  history;
- a crafted `.repoctx/task-index.bin` (1 GiB, sparse; or a good header on a sparse tail) costs
  a cold call no more memory than a tree of its size can need: it is refused by its size before
  it is read, the refusal is said on stderr, and the answer is the one built from nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from conftest import SETTLE, mcp_client, mkfifo, write
from repoctx.base import task_index

FILES = {
    "app/orders.py": "from app.tax import tax_rate\n\n\ndef apply_discount(order, coupon):\n"
                     "    return order.total * (1 - coupon.percent / 100) * tax_rate()\n",
    "app/tax.py": "def tax_rate():\n    return 1.2\n",
    "app/cli.py": "from app.orders import apply_discount\n",
}
TASK = "apply_discount coupon percentage on the order total"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
# A hang is any call slower than this (a healthy one takes well under a second).
BOUND = 30


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True).stdout.strip()


def committed_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    for rel, text in FILES.items():
        write(repo, rel, text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    write(repo, "app/tax.py", "def tax_rate():\n    return 1.1\n")
    git(repo, "commit", "-qam", "two")
    return repo


def context_cli(repo: Path, timeout: float = BOUND) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "repoctx", "--root", str(repo), "context", TASK, "--json"],
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def ranked(out: str) -> list[str]:
    return [f["path"] for f in json.loads(out)["files"]]


def fifo_places(repo: Path) -> list[str]:
    loose = git(repo, "rev-parse", "HEAD")
    return [
        "HEAD", "config", "index", "packed-refs", "refs/heads/main", "objects/info/alternates",
        "info/exclude", "shallow", "commondir", f"objects/{loose[:2]}/{loose[2:]}", "objects/pack/pack-x.pack",
    ]


def put_fifo(repo: Path, place: str) -> None:
    path = repo / ".git" / place
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    mkfifo(path)


def test_no_git_process_is_spawned_and_history_counts(tmp_path):
    """With no `git` on PATH the history still speaks: the file the last commit changed is
    lifted by its recency (history is read in process)."""
    repo = committed_repo(tmp_path)
    no_git = {**os.environ, "PATH": str(tmp_path / "no-git-here")}

    def top_score(off: list[str]) -> float:
        args = [a for s in off for a in ("--signals-off", s)]
        proc = subprocess.run([sys.executable, "-m", "repoctx", "--root", str(repo), "context", "tax rate", *args, "--json"],
                              capture_output=True, text=True, timeout=BOUND, env=no_git)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        files = json.loads(proc.stdout)["files"]
        assert files[0]["path"] == "app/tax.py"
        return files[0]["score"]

    assert top_score([]) > top_score(["history"])


@pytest.mark.parametrize("place", ["HEAD", "config", "index", "packed-refs", "refs/heads/main", "objects/info/alternates",
                                   "info/exclude", "shallow", "commondir", "loose object", "objects/pack/pack-x.pack"])
def test_a_fifo_in_git_does_not_hang_the_cli(tmp_path, place):
    repo = committed_repo(tmp_path)
    baseline = ranked(context_cli(repo).stdout)
    if place == "loose object":
        place = fifo_places(repo)[-2]
    put_fifo(repo, place)
    started = time.monotonic()
    assert ranked(context_cli(repo).stdout) == baseline
    assert time.monotonic() - started < BOUND


@pytest.mark.anyio
async def test_a_fifo_in_git_does_not_hang_the_server(tmp_path):
    repo = committed_repo(tmp_path)
    for place in fifo_places(repo):
        put_fifo(repo, place)
    with anyio.fail_after(BOUND * 2):
        async with mcp_client("--root", str(repo)) as client:
            result = await client.call_tool("task_context", {"task": TASK})
            assert not result.is_error
            assert "app/orders.py" in [f["path"] for f in result.structured_content["files"]]


# --- a crafted saved index --------------------------------------------------------------------

def measured(repo: Path) -> tuple[float, subprocess.CompletedProcess]:
    """A cold `repoctx context` and its peak resident memory in MiB, as /usr/bin/time reports it
    (a child forked from this large test process would carry this process's peak in its own)."""
    args = ["/usr/bin/time", "-f", "peak-kib %M", sys.executable, "-m", "repoctx", "--root", str(repo), "context", TASK, "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    *rest, last = proc.stderr.rstrip("\n").split("\n")
    assert last.startswith("peak-kib "), proc.stderr
    return int(last.split()[1]) / 1024, subprocess.CompletedProcess(args, proc.returncode, proc.stdout, "\n".join(rest))


@pytest.mark.skipif(not Path("/usr/bin/time").exists(), reason="peak memory is read from /usr/bin/time")
@pytest.mark.parametrize("kind", ["sparse", "good header, sparse tail"])
def test_a_crafted_saved_index_is_refused_by_its_size_before_it_is_read(tmp_path, kind):
    repo = tmp_path / "repo"
    for rel, text in FILES.items():
        write(repo, rel, text)
    time.sleep(SETTLE)
    _, first = measured(repo)
    assert first.returncode == 0, first.stderr
    baseline_peak, _again = measured(repo)  # from the good saved file
    good = (repo / task_index.SAVED_FILE).read_bytes()
    with open(repo / task_index.SAVED_FILE, "wb") as f:
        if kind != "sparse":
            f.write(good[: len(good) - 8])
        f.truncate(1 << 30)
    peak, crafted = measured(repo)
    assert crafted.returncode == 0, crafted.stderr
    assert ranked(crafted.stdout) == ranked(first.stdout)
    assert "saved task index" in crafted.stderr and "refused" in crafted.stderr
    assert peak <= 200, f"peak {peak:.0f} MiB on a crafted index (a good one: {baseline_peak:.0f} MiB)"
    assert peak <= baseline_peak + 32
