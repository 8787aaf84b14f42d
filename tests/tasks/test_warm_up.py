"""A serving process builds the task index while its client connects only when a saved index
is on disk (the repository was asked for task context before); otherwise it builds nothing
until the first `task_context` call (docs/tasks.md, "How it is kept")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import SETTLE, run_cli, write
from repoctx.base import task_index

# The server's warm-up as `repoctx serve` runs it (live tables, then catalog.warm_up), then
# what it holds: no index, or one with how many files it took from the saved bytes.
WARM = """
import json, sys
from repoctx.base import index
from repoctx.base.workspace import Workspace
from repoctx.registry.catalog import listed, warm_up
from repoctx.base import task_index
index.serve_live(True)
ws = Workspace.open(sys.argv[1])
if sys.argv[2:] == ["task-only"]:  # the task index's part alone
    task_index.warm(ws)
else:
    warm_up(ws, {c.tool: c for c in listed(ws).commands})
held = task_index._held.get(ws.root)
print(json.dumps(None if held is None else {"files": held[1].index.file_count, "loaded": held[1].index.loaded}))
"""


def warmed(repo: Path, *how: str):
    proc = subprocess.run([sys.executable, "-c", WARM, str(repo), *how], capture_output=True, text=True, check=True)
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def test_the_index_is_built_ahead_only_from_a_saved_one(tmp_path):
    repo = tmp_path / "repo"
    write(repo, "shop/orders.py", "def apply_discount(order, coupon):\n    return order\n")
    write(repo, "shop/tax.py", "def tax_rate():\n    return 1.2\n")
    assert warmed(repo) is None, "never asked: nothing built"
    assert not (repo / task_index.SAVED_FILE).exists()
    time.sleep(SETTLE)  # past the window in which files just written are not saved
    assert run_cli("--root", str(repo), "context", "apply_discount", "--json").returncode == 0
    assert warmed(repo) == {"files": 2, "loaded": 2}


def test_a_state_folder_linked_out_warms_nothing_and_fails_nothing(tmp_path):
    repo, out = tmp_path / "repo", tmp_path / "out"
    write(repo, "shop/orders.py", "def apply_discount(order, coupon):\n    return order\n")
    write(out, "task-index.bin", "not read through the link")
    os.symlink(out, repo / ".repoctx")
    assert warmed(repo, "task-only") is None
