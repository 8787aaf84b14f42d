"""The task index saved for the next process (`.repoctx/task-index.bin`): a cold `repoctx
context` that starts from it answers byte for byte as one that builds from nothing, after
files were edited, removed and added while no process ran; it is written when enough changed
and never by a read-only server. Damaged, foreign and linked files: tests/hostile/test_saved_task_index.py."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import SETTLE, mcp_client, run_cli, write
from repoctx import _core
from repoctx.base import task_index
from repoctx.base.workspace import Workspace
from repoctx.tasks import context

SAVED = task_index.SAVED_FILE

FILES = {
    "shop/orders.py": "from shop.tax import tax_rate\n\n\ndef apply_discount(order, coupon):\n"
                      "    \"\"\"Take the coupon's percentage off the total.\"\"\"\n    return order.total * tax_rate('fr')\n",
    "shop/tax.py": "def tax_rate(country):\n    return {'fr': 0.2}.get(country, 0.0)\n",
    "shop/cli.py": "from shop.orders import apply_discount\n\n\ndef main():\n    print(apply_discount(None, None))\n",
    "web/cart.ts": "import { total } from './total';\nexport function renderCart() { return total(); }\n",
    "web/total.ts": "export function total(): number { return 1; }\n",
    "core/src/lib.rs": "mod util;\nuse crate::util::helper;\npub fn entry() { helper() }\n",
    "core/src/util.rs": "/// Shipping rates.\npub fn helper() {}\n",
    "README.md": "# Shop\n\nCarts, orders, coupons and taxes.\n",
}
TASK = "apply_discount gives the wrong total for percentage coupons and shipping rates"


def build(root: Path) -> Path:
    for rel, text in FILES.items():
        write(root, rel, text)
    time.sleep(SETTLE)
    return root


def answer(root: Path, task: str = TASK) -> str:
    return run_cli("--root", str(root), "context", task, "--json", check=True).stdout


def loaded(root: Path) -> tuple[int, int, str | None]:
    """(files taken from the saved index, files indexed, why it was refused) as a cold call builds it."""
    index = task_index.task_index(Workspace.open(root))
    return index.loaded, index.file_count, index.refused


def test_a_cold_call_from_the_saved_index_answers_as_a_build_after_edits_removals_and_additions(tmp_path):
    repo = build(tmp_path / "repo")
    first = answer(repo)
    saved = repo / SAVED
    assert saved.is_file() and saved.stat().st_size > 0
    assert loaded(repo) == (len(FILES), len(FILES), None)
    assert answer(repo) == first, "from the saved index, byte for byte"

    # While no process runs: an edit that changes the answer, a file gone, a file new.
    write(repo, "core/src/util.rs", "/// Percentage coupons: the discount of an order.\npub fn helper() {}\n")
    (repo / "web/total.ts").unlink()
    write(repo, "shop/coupons.py", "def percentage(coupon):\n    return coupon.percent / 100\n")
    time.sleep(SETTLE)
    taken, held, refused = loaded(repo)
    assert refused is None and taken == held - 2, "only the edited and the new file are read"
    after = answer(repo)
    assert after != first
    assert "shop/coupons.py" in after and "web/total.ts" not in after
    saved.unlink()
    assert answer(repo) == after, "the same as a build from nothing"
    assert answer(repo) == after


def test_context_files_changed_removed_or_added_since_the_save_are_seen(tmp_path):
    repo = build(tmp_path / "repo")
    write(repo, "shop/.context.yaml", 'version: 1\nsummary: "Percentage coupons of an order."\n')
    write(repo, "web/.context.yaml", 'version: 1\nsummary: "Shipping rates of the cart."\n')
    time.sleep(SETTLE)
    first = answer(repo)
    assert "scope shop" in first and "scope web" in first
    assert answer(repo) == first, "the notes taken from the saved index, byte for byte"

    # While no process runs: one edited, one gone, one new.
    write(repo, "shop/.context.yaml", 'version: 1\nsummary: "Tax tables by country."\n')
    (repo / "web/.context.yaml").unlink()
    write(repo, "core/src/.context.yaml", 'version: 1\nsummary: "Shipping rates and coupons."\n')
    time.sleep(SETTLE)
    after = answer(repo)
    assert "scope core/src" in after and "scope shop" not in after and "scope web" not in after
    (repo / SAVED).unlink()
    assert answer(repo) == after, "as a build from nothing"


def answered_and_saved(repo: Path, files: int) -> tuple[bytes, list[str], list[str]]:
    """`files` Python files under `repo` (60 words in common, one of their own each), answered once:
    the saved index's bytes, the ignore patterns and the walk's directories."""
    words = " ".join(f"word{i}" for i in range(60))
    for i in range(files):
        write(repo, f"pkg{i % 40}/mod{i}.py", f"def function_{i}(order):\n    '{words} unique{i}'\n    return order\n")
    time.sleep(SETTLE)
    answer(repo, "function_7")
    cfg = Workspace.open(repo).scan_config()
    dirs = [r.scope for r in _core.walk(str(repo), list(cfg.ignore), cfg.max_depth, cfg.min_tokens).rows]
    return (repo / SAVED).read_bytes(), list(cfg.ignore), dirs


def test_a_saved_index_of_many_pieces_is_adopted_as_its_bytes_are_and_answers_as_a_build(tmp_path):
    """The core reads the saved file a piece (1 MiB) at a time (rust/tasks/store.rs `Pieces`):
    files and terms that straddle two pieces are adopted as from the whole bytes."""
    repo = tmp_path / "repo"
    data, ignore, dirs = answered_and_saved(repo, 4000)
    assert len(data) > 1 << 20, "two pieces at least"

    def index(**saved):
        return _core.TaskIndex(str(repo), dirs, ignore, "@", None, **saved)

    def answers(ix) -> list[str]:
        return [ix.query(task, 8000, [], [], 10, "bytes4").json() for task in ("function_7 order", "unique3999 word5")]

    pieces, whole, built = index(saved_at=(SAVED, len(data))), index(saved=data), index()
    assert (pieces.refused, pieces.loaded, whole.loaded) == (None, 4000, 4000)
    assert answers(pieces) == answers(whole) == answers(built)
    assert pieces.save() == data, "the same index, saved again byte for byte"
    (repo / SAVED).unlink()
    assert not pieces.save_to(SAVED, len(data) - 1) and not (repo / SAVED).exists(), "over its cap: not written"
    assert pieces.save_to(SAVED, len(data)) and (repo / SAVED).read_bytes() == data, "written by the core as saved"
    refused = index(saved_at=(SAVED, len(data) - 1))
    assert (refused.loaded, refused.refused) == (0, f"larger than {len(data) - 1} bytes; refused unread")


# A process whose writes stop at 256 KiB (its file-size limit, as a full disk stops them) builds the
# index and saves it; prints the errno the save failed with.
SAVE_CUT_SHORT = """
import json, resource, signal, sys
from repoctx import _core
root, rel, ignore, dirs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
index = _core.TaskIndex(root, dirs, ignore, "@", None)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) rather than kills
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 18, resource.RLIM_INFINITY))
try:
    index.save_to(rel, 1 << 30)
except OSError as e:
    print(e.errno)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="a file-size limit is POSIX's")
def test_a_save_that_fails_halfway_leaves_the_saved_index_as_it_was(tmp_path):
    """The core writes the saved index as it encodes it (rust/tree/fs.rs `write_atomic_with`): a
    write that fails part way through leaves the file saved before as it was, and nothing beside it."""
    repo = tmp_path / "repo"
    before, ignore, dirs = answered_and_saved(repo, 3000)
    assert len(before) > 2 << 18, "the limit stops the save halfway"
    beside = sorted(os.listdir(repo / ".repoctx"))
    run = subprocess.run([sys.executable, "-c", SAVE_CUT_SHORT, str(repo), SAVED, json.dumps(ignore), json.dumps(dirs)],
                         capture_output=True, text=True, timeout=120)
    assert run.stdout.split() == [str(errno.EFBIG)], run.stderr
    assert (repo / SAVED).read_bytes() == before
    assert sorted(os.listdir(repo / ".repoctx")) == beside, "no temporary file left"


def test_the_file_is_written_when_enough_changed_and_never_by_a_read_only_workspace(tmp_path):
    repo = tmp_path / "repo"
    for i in range(200):
        write(repo, f"pkg{i % 10}/mod{i}.py", f"def function_{i}():\n    return {i}\n")
    time.sleep(SETTLE)
    saved = repo / SAVED
    answer(repo, "function_7")
    stamp = saved.stat().st_mtime_ns
    answer(repo, "function_7")
    assert saved.stat().st_mtime_ns == stamp, "nothing changed: not written again"
    write(repo, "pkg0/mod0.py", "def function_0():\n    return 'edited'\n")
    time.sleep(SETTLE)
    answer(repo, "function_7")
    assert saved.stat().st_mtime_ns == stamp, "one file of 200 is read again more cheaply than all are written"
    for i in range(1, 5):  # 4 × SAVE_SHARE (64) >= 200 files
        write(repo, f"pkg{i}/mod{i}.py", f"def function_{i}():\n    return 'edited'\n")
    time.sleep(SETTLE)
    answer(repo, "function_7")
    assert saved.stat().st_mtime_ns != stamp
    assert loaded(repo)[:2] == (200, 200)

    # A read-only workspace reads the file but never writes it.
    write(repo, "pkg9/new.py", "def brand_new():\n    pass\n")
    saved.unlink()
    ws = Workspace.open(repo, read_only=True)
    result = context.task_context(ws, context.ContextParams(task="brand_new"))
    for thread in threading.enumerate():
        if thread.name == task_index.SAVE_THREAD:
            thread.join()
    assert result.files[0].path == "pkg9/new.py"
    assert not saved.exists()


@pytest.mark.anyio
async def test_a_server_builds_and_writes_the_task_index_only_when_task_context_is_called(tmp_path):
    repo = build(tmp_path / "repo")
    async with mcp_client("--root", str(repo)) as client:
        assert not (await client.call_tool("list_contexts", {})).is_error
        await anyio.sleep(1.0)  # past the warm-up of the other tables
        assert not (repo / SAVED).exists(), "no task index written before a tool needs it"
        assert not (await client.call_tool("task_context", {"task": TASK})).is_error
        for _ in range(100):
            if (repo / SAVED).exists():
                break
            await anyio.sleep(0.05)
        assert (repo / SAVED).is_file()


@pytest.mark.anyio
async def test_a_server_saves_after_its_first_call_but_not_when_read_only(tmp_path):
    for read_only in (True, False):
        repo = build(tmp_path / f"repo-{read_only}")
        args = ("--root", str(repo), *(("--read-only",) if read_only else ()))
        async with mcp_client(*args) as client:
            result = await client.call_tool("task_context", {"task": TASK})
            assert not result.is_error
            assert json.loads(result.content[0].text)["files"][0]["path"] == "shop/orders.py"
            for _ in range(100):
                if (repo / SAVED).exists():
                    break
                await anyio.sleep(0.05)
        if read_only:
            assert not (repo / ".repoctx").exists(), "a read-only server writes nothing"
        else:
            assert (repo / SAVED).is_file(), "the server wrote the index it built"
            assert loaded(repo)[0] == len(FILES)


WORDS = ["order", "coupon", "total", "tax", "cart", "render", "ship", "rate", "parse", "config"]
NAMES = st.sampled_from([f"{d}/{w}.py" for d in ("a", "b", "a/c") for w in WORDS[:5]] + ["a/x.ts", "b/y.rs"])
TEXTS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(
    lambda ws: f"def {ws[0]}_{len(ws)}():\n    return '{' '.join(ws)}'\n")
EDITS = st.lists(st.tuples(st.sampled_from(["edit", "remove", "add"]), NAMES, TEXTS), max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(NAMES, TEXTS, min_size=1, max_size=8), EDITS, st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
def test_any_tree_and_edits_answer_the_same_from_the_saved_index(files, edits, task_words):
    """Property: for a random small tree, saved, then random edits, removals and additions, the
    index started from the saved file (its lists read from a private mapped copy) answers every
    question as one built from nothing, and so does one loaded before the edits and updated."""
    task = " ".join(task_words)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        for rel, text in files.items():
            write(root, rel, text)
        time.sleep(SETTLE)

        def scopes() -> list[str]:
            return [r.scope for r in _core.walk(str(root), [], 10, 0).rows]

        def index(saved: bytes | None = None) -> _core.TaskIndex:
            if saved is None:
                return _core.TaskIndex(str(root), scopes(), [], "@", None)
            write(root, SAVED, saved)
            return _core.TaskIndex(str(root), scopes(), [], "@", None, saved_at=(SAVED, len(saved)))

        first = index()
        saved = first.save()
        again = index(saved)
        assert (again.loaded, again.refused) == (first.file_count, None)
        for kind, rel, text in edits:
            path = root / rel
            if kind == "remove":
                path.unlink(missing_ok=True)
            else:
                write(root, rel, text + ("# edited\n" if kind == "edit" else ""))
        # No settling here: the edited files are inside the racy window for both indexes, so
        # both leave them out of their saved bytes.
        from_saved, built = index(saved), index()
        assert from_saved.refused is None
        again.update(scopes(), scopes())
        # The saved index is adopted, then its changed files taken out and read again: files
        # may be numbered otherwise than a build numbers them, the answers may not differ.
        twice = index(from_saved.save())
        assert twice.refused is None and twice.file_count == built.file_count
        for off in ([], ["history"], ["lexical"]):
            want = built.query(task, 400, [], off, 10, "bytes4")
            assert from_saved.query(task, 400, [], off, 10, "bytes4") == want
            assert twice.query(task, 400, [], off, 10, "bytes4") == want
            assert again.query(task, 400, [], off, 10, "bytes4") == want


FATES = st.lists(st.sampled_from(["edit", "edit", "edit", "keep", "remove"]), min_size=90, max_size=160)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FATES, st.integers(0, 30), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
def test_a_saved_index_most_of_whose_files_changed_answers_as_a_build(fates, added, task_words):
    """Property: more files changed than an update puts back one by one (tasks/index.rs's
    `BATCH`), here and there among the files kept, some removed and new ones taking their
    numbers: the index started from the saved file answers every question as one built from
    nothing."""
    assume(fates.count("edit") + added > 64)
    task = " ".join(task_words)

    def text(i: int, edit: str) -> str:
        words = [WORDS[(i * k + len(edit)) % len(WORDS)] for k in range(1 + i % 6)]
        return f"def {words[0]}_{i}():\n    return '{' '.join(words)} {edit}'\n"

    def path(i: int) -> str:
        return f"{('a', 'b', 'a/c')[i % 3]}/f{i}.py"

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        for i in range(len(fates)):
            write(root, path(i), text(i, ""))
        time.sleep(SETTLE)
        scopes = [r.scope for r in _core.walk(str(root), [], 10, 0).rows]
        saved = _core.TaskIndex(str(root), scopes, [], "@", None).save()
        write(root, SAVED, saved)
        for i, fate in enumerate(fates):
            if fate == "remove":
                (root / path(i)).unlink()
            elif fate == "edit":
                write(root, path(i), text(i, "edited order"))
        for i in range(len(fates), len(fates) + added):
            write(root, path(i), text(i, "new"))
        scopes = [r.scope for r in _core.walk(str(root), [], 10, 0).rows]
        from_saved = _core.TaskIndex(str(root), scopes, [], "@", None, saved_at=(SAVED, len(saved)))
        built = _core.TaskIndex(str(root), scopes, [], "@", None)
        assert from_saved.refused is None and from_saved.file_count == built.file_count
        assert from_saved.loaded == fates.count("keep")
        for off in ([], ["history"]):
            assert from_saved.query(task, 400, [], off, 10, "bytes4") == built.query(task, 400, [], off, 10, "bytes4")
