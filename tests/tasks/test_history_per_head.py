"""git's history saved per HEAD for the next process (`.repoctx/task-history.bin`,
rust/tasks/history_store.rs): a `repoctx context` whose HEAD did not move takes the history
from the file instead of walking git again, and answers as the walk would; once HEAD moves,
the history is read from git again and the file written again for the new HEAD."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import run_cli, write
from repoctx.base import task_index

HISTORY = task_index.HISTORY_FILE
TASK = "apply_discount coupon percentage"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> None:
    for rel, text in files.items():
        write(repo, rel, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def answer(repo: Path) -> dict:
    proc = run_cli("--root", str(repo), "context", TASK, "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def why(result: dict, path: str) -> str:
    return next(f["why"] for f in result["files"] if f["path"] == path)


def repo_with_history(tmp_path: Path) -> Path:
    """orders.py changed twice with ledger.py, which the task's words do not reach."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {"shop/orders.py": "def apply_discount(order, coupon):\n    return order\n",
                  "shop/ledger.py": "def book(entry):\n    return entry\n"}, "start")
    commit(repo, {"shop/orders.py": "def apply_discount(order, coupon):\n    return order * coupon.percentage\n",
                  "shop/ledger.py": "def book(entry):\n    return [entry]\n"}, "percentages")
    return repo


def test_a_process_whose_head_did_not_move_takes_the_saved_history(tmp_path):
    repo = repo_with_history(tmp_path)
    first = answer(repo)
    assert "changed with shop/orders.py" in why(first, "shop/ledger.py")
    saved = (repo / HISTORY).read_bytes()
    assert git(repo, "rev-parse", "HEAD").encode() in saved
    # The commits' trees gone: HEAD still names a commit, but a walk of git finds no history at
    # all, so the answer can only keep its `changed with` from the saved read.
    trees = {git(repo, "rev-parse", f"HEAD~{n}^{{tree}}") for n in range(2)}
    for tree in trees:
        (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    assert answer(repo) == first
    (repo / HISTORY).unlink()
    walked = answer(repo)
    assert all("changed with" not in f["why"] for f in walked["files"]), "no trees: no history"


def test_a_moved_head_reads_git_again_and_saves_for_the_new_head(tmp_path):
    repo = repo_with_history(tmp_path)
    answer(repo)
    before = (repo / HISTORY).read_bytes()
    commit(repo, {"shop/orders.py": "def apply_discount(order, coupon):\n    return 0\n",
                  "shop/refunds.py": "def refund(order):\n    return order\n"}, "refunds")
    moved = answer(repo)
    assert "changed with shop/orders.py" in why(moved, "shop/refunds.py")
    after = (repo / HISTORY).read_bytes()
    assert after != before and git(repo, "rev-parse", "HEAD").encode() in after
    (repo / HISTORY).unlink()
    assert answer(repo) == moved, "the same answer as a walk of git"


def test_without_git_nothing_is_saved(tmp_path):
    plain = tmp_path / "plain"
    write(plain, "shop/orders.py", "def apply_discount(order, coupon):\n    return order\n")
    answer(plain)
    assert (plain / task_index.SAVED_FILE).exists() and not (plain / HISTORY).exists()
