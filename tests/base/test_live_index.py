"""The live index against a cold scan: random edits to a tree between questions,
and every answer compared with what a fresh walk says about the same files."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import mcp_client, run_cli
from repoctx import _core
from repoctx.base import index
from repoctx.base.workspace import Workspace
from repoctx.scopes import read as scopes
from sample_repo import write_context

DIRS = ["", "a", "a/b", "a/b/c", "d", "d/e", "gen", "node_modules", ".hid", ".hid/f", "build", ".git/x"]
NAMES = ["m.py", "n.rs", "o.md", "p.bin", ".context.yaml", ".gitignore"]

ops = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(DIRS), st.sampled_from(NAMES), st.integers(0, 30000)),
    st.tuples(st.just("touch"), st.sampled_from(DIRS), st.sampled_from(NAMES), st.integers(1, 10**6)),
    st.tuples(st.just("delete"), st.sampled_from(DIRS), st.sampled_from(NAMES), st.just(0)),
    st.tuples(st.just("rename"), st.sampled_from(DIRS), st.sampled_from(NAMES), st.sampled_from(DIRS)),
    st.tuples(st.just("rmtree"), st.sampled_from(DIRS[1:]), st.just(""), st.just(0)),
    st.tuples(st.just("mvdir"), st.sampled_from(DIRS[1:]), st.just(""), st.sampled_from(["x", "a/y", "d/z"])),
    st.tuples(st.just("ignore"), st.sampled_from(DIRS), st.sampled_from(["gen/", "b", "*.py", "!m.py", "e/"]), st.just(0)),
)

# The OS events the live index follows (inotify, FSEvents, ReadDirectoryChangesW); on any other
# OS it rescans on every question, so tests of what watching does (and does not) trigger have
# nothing to test there.
OS_EVENTS = {"linux": "inotify", "darwin": "fsevents", "win32": "windows"}
needs_events = pytest.mark.skipif(sys.platform not in OS_EVENTS, reason="this OS gives the live index no events")


def shape(table: _core.Table) -> tuple:
    """What a live table and a cold walk must agree on."""
    return table.rows, table.skipped, table.left_out, table.unscoped


def apply(root: Path, op) -> None:
    kind, d, name, arg = op
    base = root / d
    try:
        if kind == "write":
            base.mkdir(parents=True, exist_ok=True)
            (base / name).write_bytes(b"x" * arg)
        elif kind == "touch" and (base / name).is_file():
            os.utime(base / name, ns=(arg * 10**9, arg * 10**9))
        elif kind == "delete" and (base / name).is_file():
            (base / name).unlink()
        elif kind == "rename" and (base / name).is_file():
            (root / arg).mkdir(parents=True, exist_ok=True)
            os.replace(base / name, root / arg / name)
        elif kind == "rmtree" and base.is_dir():
            shutil.rmtree(base)
        elif kind == "mvdir" and base.is_dir() and not (root / arg).exists():
            (root / arg).parent.mkdir(parents=True, exist_ok=True)
            if not str(root / arg).startswith(str(base) + "/"):
                os.rename(base, root / arg)
        elif kind == "ignore":
            base.mkdir(parents=True, exist_ok=True)
            with open(base / ".gitignore", "a") as fh:
                fh.write(name + "\n")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, FileExistsError, OSError):
        pass  # an operation the tree's current shape does not allow is simply skipped


@needs_events
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.lists(ops, min_size=1, max_size=4), min_size=1, max_size=6), min_tokens=st.sampled_from([0, 100]),
       max_depth=st.sampled_from([10, 2]), extra_ignore=st.sampled_from([[], ["e/"]]))
def test_live_index_always_equals_a_cold_walk(tmp_path_factory, steps, min_tokens, max_depth, extra_ignore):
    root = tmp_path_factory.mktemp("live")
    for d in ["a/b/c", "d/e", "gen"]:
        (root / d).mkdir(parents=True)
        (root / d / "m.py").write_text("m" * 500)
    index = _core.LiveIndex(str(root), extra_ignore, max_depth, min_tokens, True)
    assert index.watching
    for batch in steps:
        for op in batch:
            apply(root, op)
        index.refresh()
        # Rows the index kept from its last table are checked too: they must still be true.
        assert shape(index.table()) == shape(_core.walk(str(root), extra_ignore, max_depth, min_tokens))


def _listing(ws: Workspace, live: index.Indexes | None) -> dict:
    saved = index._live
    index._live = live
    try:
        return msgspec.to_builtins(scopes.list_contexts(ws, scopes.ListContextsParams()))
    finally:
        index._live = saved


# Also a valid context file, fresh when written: the listing reads context files' heads.
listing_ops = st.one_of(ops, st.tuples(st.just("context"), st.sampled_from(DIRS), st.just(""), st.integers(0, 9)))


@needs_events
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.lists(listing_ops, min_size=1, max_size=4), min_size=1, max_size=6),
       min_tokens=st.sampled_from([0, 100]))
def test_served_listing_always_equals_a_cold_listing(tmp_path_factory, steps, min_tokens):
    """A serving process redoes only the rows that changed (index.py, scopes._full_listing):
    after every batch of edits its listing is the one a cold walk gives."""
    root = tmp_path_factory.mktemp("listing")
    (root / ".context.config.yaml").write_text(f"min_tokens: {min_tokens}\n")
    for d in ["a/b/c", "d/e", "gen"]:
        (root / d).mkdir(parents=True)
        (root / d / "m.py").write_text("m" * 500)
    write_context(root, "a", "A")
    ws = Workspace.open(root)
    live = index.Indexes(watch=True)
    assert _listing(ws, live) == _listing(ws, None)
    for batch in steps:
        for op in batch:
            if op[0] == "context":
                if (root / op[1]).is_dir():
                    write_context(root, op[1] or ".", f"Summary {op[3]}")
            else:
                apply(root, op)
        assert _listing(ws, live) == _listing(ws, None)


def test_without_watching_every_refresh_rescans(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a/m.py").write_text("m")
    index = _core.LiveIndex(str(tmp_path), [], 10, 0, False)
    assert not index.watching
    (tmp_path / "a/m.py").write_text("changed")
    index.refresh()
    assert index.rescans == 2
    assert index.table().rows == _core.walk(str(tmp_path), [], 10, 0).rows


@needs_events
def test_edits_and_new_directories_below_the_root_do_not_rescan(tmp_path):
    for d in ["a", "b"]:
        (tmp_path / d).mkdir()
        (tmp_path / d / "m.py").write_text("m")
    index = _core.LiveIndex(str(tmp_path), [], 10, 0, True)
    for i in range(5):
        (tmp_path / "a/m.py").write_text("m" * i)
        index.refresh()
    assert index.rescans == 1
    (tmp_path / ".git/info").mkdir(parents=True)  # a new hidden directory is not a scope
    index.refresh()
    assert index.rescans == 1
    (tmp_path / "a/new/deeper").mkdir(parents=True)  # re-scans a/new alone
    (tmp_path / "a/new/deeper/n.rs").write_text("n")
    index.refresh()
    (tmp_path / "b/.gitignore").write_text("*.py\n")  # re-scans b alone
    index.refresh()
    shutil.rmtree(tmp_path / "a/new")
    index.refresh()
    assert index.rescans == 1
    assert shape(index.table()) == shape(_core.walk(str(tmp_path), [], 10, 0))
    (tmp_path / ".gitignore").write_text("b/\n")  # the root's rules: everything may change
    index.refresh()
    assert index.rescans == 2
    assert shape(index.table()) == shape(_core.walk(str(tmp_path), [], 10, 0))


@needs_events
def test_a_new_table_keeps_the_row_objects_of_unchanged_rows(tmp_path):
    """What a serving process built from a row holds while the row object is the same one."""
    for d in ["a", "b", "c"]:
        (tmp_path / d).mkdir()
        (tmp_path / d / "m.py").write_text("m")
    index = _core.LiveIndex(str(tmp_path), [], 10, 0, True)
    first = index.table()
    assert index.table() is first and first.changed_at == [first.generation] * 4
    (tmp_path / "b/m.py").write_text("changed")  # one row changes in place
    index.refresh()
    second = index.table()
    assert second.generation > first.generation and index.table() is second
    by_scope = {r.scope: r for r in first.rows}
    assert [r is by_scope[r.scope] for r in second.rows] == [True, True, False, True]
    assert second.changed_at == [first.generation, first.generation, second.generation, first.generation]
    (tmp_path / "a/new").mkdir()  # a row comes: the others are found by scope
    (tmp_path / "a/new/n.py").write_text("n")
    index.refresh()
    third = index.table()
    assert [r.scope for r in third.rows] == [".", "a", "a/new", "b", "c"]
    kept = {r.scope: r for r in second.rows}
    reused = [r is kept.get(r.scope) for r in third.rows]
    assert reused == [at <= second.generation for at in third.changed_at] and reused[3:] == [True, True]
    assert shape(third) == shape(_core.walk(str(tmp_path), [], 10, 0))


@pytest.mark.anyio
@pytest.mark.parametrize("watch", [True, False])
async def test_served_answers_follow_the_files(tmp_path, watch):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/a.py").write_text("a" * 20000)
    write_context(root, "src", "Sources")
    write_context(root, ".", "Root")
    args = ["--root", str(root)] + ([] if watch else ["--no-watch"])
    async with mcp_client(*args) as client:
        async def both():
            listed = await client.call_tool("list_contexts", {})
            checked = await client.call_tool("check_freshness", {"scope": "src"})
            return json.loads(listed.content[0].text), checked.structured_content

        listed, checked = await both()
        assert checked["state"] == "fresh"
        assert listed == json.loads(run_cli("status", "--json", "--root", str(root)).stdout)
        os.utime(root / "src/a.py", ns=(10**9, 10**9))  # touch: same content, new mtime
        listed, checked = await both()
        assert checked["state"] == "stale"
        assert {"scope": "src", "state": "stale"}.items() <= listed["entries"][1].items()
        assert listed["entries"][0]["state"] == "fresh"
        assert listed == json.loads(run_cli("status", "--json", "--root", str(root)).stdout)
        (root / "new").mkdir()
        (root / "new/b.py").write_text("b" * 20000)
        listed, _ = await both()
        assert [e["scope"] for e in listed["entries"]] == [".", "new", "src"]
        assert listed["entries"][0]["state"] == "fresh"  # a new directory is no new file of the root
        write_context(root, "new", "New")
        listed, _ = await both()
        assert listed["entries"][1]["state"] == "fresh"
        assert listed == json.loads(run_cli("status", "--json", "--root", str(root)).stdout)
        watching = (await client.call_tool("ctxt_self_report", {})).structured_content["watching"]
        assert watching["by"] == (OS_EVENTS.get(sys.platform, "polling") if watch else "none"), watching
        assert ("--no-watch" in watching["reason"]) is not watch
