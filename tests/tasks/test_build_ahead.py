"""The task index built ahead (base/task_index.py `build_ahead`, what the prompt hook starts
before importing the command): the command takes that build rather than walking and loading
again, answers from it as from its own, and a build that failed fails the command as its own
build would (io_error, which the hook answers with silence)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time

from conftest import SETTLE, git_history, write
from repoctx import _core
from repoctx.base import index as tables
from repoctx.base import task_index
from repoctx.base.workspace import Workspace
from repoctx.tasks import context

TASK = "apply_discount gives the wrong total for percentage coupons"


def repo(root):
    write(root, "shop/orders.py", "def apply_discount(total, coupon):\n    return total - coupon.percentage\n")
    write(root, "shop/cli.py", "from shop.orders import apply_discount\n\nprint(apply_discount(10, None))\n")
    write(root, "docs/guide.md", "# Guide\n\nHow to run the shop.\n")
    time.sleep(SETTLE)
    return root


def ask(ws):
    return context.task_context(ws, context.ContextParams(task=TASK, budget=2000, limit=8))


def test_the_command_answers_from_the_build_started_ahead_and_walks_once(tmp_path, monkeypatch):
    ws = Workspace.open(repo(tmp_path / "repo"))
    plain = ask(ws).json()
    walks = []
    walk = tables._walk
    monkeypatch.setattr(tables, "_walk", lambda *a: walks.append(a) or walk(*a))
    task_index.build_ahead(ws)
    task_index.build_ahead(ws)  # one build per root
    ahead = ask(ws)
    assert len(walks) == 1 and task_index._ahead == {}
    assert ahead.json() == plain and ahead.files[0].path == "shop/orders.py"
    ask(ws)  # the next question builds again, as a cold process does
    assert len(walks) == 2


def test_the_index_built_ahead_outlives_the_answer(tmp_path, monkeypatch):
    # The hook's process ends without freeing it (__main__._leave): freed when the command
    # returned, it cost the hook on ruff ~25 ms before its answer was out.
    monkeypatch.setattr(task_index, "_taken", [])
    ws = Workspace.open(repo(tmp_path / "repo"))
    task_index.build_ahead(ws)
    ask(ws)
    (held,) = task_index._taken
    assert held.file_count == 3


def test_gits_history_is_made_on_the_build_thread_while_the_saved_index_loads(tmp_path, monkeypatch):
    # Checking the saved history and reading HEAD (~13 ms of CPU on ruff) was the hook's first
    # question's; the build thread, idle once its walk is done, makes it while the load adopts.
    root = repo(tmp_path / "repo")
    git_history(root, [{"shop/orders.py": f"def apply_discount(total, coupon):\n    return total - {n}\n",
                        "shop/ledger.py": f"def book(entry):\n    return {n}\n"} for n in range(2)])
    ws = Workspace.open(root)
    plain = ask(ws).json()
    for saving in [t for t in threading.enumerate() if t.name == task_index.SAVE_THREAD]:
        saving.join()
    assert (root / task_index.HISTORY_FILE).is_file() and "changed with" in plain
    made = []
    history = _core.TaskHistory
    monkeypatch.setattr(_core, "TaskHistory", lambda *a: made.append(threading.current_thread().name) or history(*a))
    task_index.build_ahead(ws)
    assert ask(ws).json() == plain
    assert made == [task_index.AHEAD_THREAD]


def test_a_build_ahead_that_failed_is_the_commands_io_error(tmp_path):
    root = repo(tmp_path / "repo")
    ws = Workspace.open(root)
    shutil.rmtree(root)
    task_index.build_ahead(ws)
    result = ask(ws)
    assert isinstance(result, context.TaskContextError) and result.error.code == "io_error", result


def test_what_the_hook_imports_before_its_build_starts_imports_no_dataclasses_nor_msgspec():
    # dataclasses brings inspect (~10 ms of CPU) and msgspec more: the command imports them
    # while the build runs, not before it starts.
    probe = ("import sys\n"
             "import repoctx.views.prompt_hook, repoctx.base.rootfind, repoctx.base.workspace, repoctx.base.task_index\n"
             "print(sorted(m for m in ('dataclasses', 'inspect', 'msgspec') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["[]"], done.stdout + done.stderr
