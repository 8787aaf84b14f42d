"""Paging `list_contexts` (found by bisection on the sorted listing, scopes.py `_page`):
every way of paging gives exactly the entries the whole listing has, in its order, also when
files change between pages."""

from __future__ import annotations

import json
import os

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import mcp_client
from repoctx.base import index
from repoctx.base.workspace import Workspace
from repoctx.scopes import read as scopes
from sample_repo import write_context

# Names that sort awkwardly by bytes: "src-x" falls between "src" and "src/a", "-x" before ".".
DIRS = ["src", "src/a", "src/a/b", "src-x", "src0", "-x", "é", "zz", "zz/src"]


def _paged(ws: Workspace, limit: int, **filters) -> tuple[list[dict], set[int]]:
    """Every page from the first on: the entries, and the `matched` each page said."""
    entries, matched, cursor = [], set(), None
    while True:
        page = scopes.list_contexts(ws, scopes.ListContextsParams(limit=limit, cursor=cursor, **filters))
        assert not page.error and len(page.entries) <= limit
        entries += msgspec.to_builtins(page.entries)
        matched.add(page.matched)
        if not page.next_cursor:
            return entries, matched
        assert cursor is None or page.next_cursor > cursor  # each page moves on
        cursor = page.next_cursor


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dirs=st.sets(st.sampled_from(DIRS), min_size=1), contexts=st.sets(st.sampled_from(["."] + DIRS)),
       stale=st.sets(st.sampled_from(DIRS)), limit=st.integers(1, 4),
       under=st.sampled_from([None, ".", "src", "src/a", "zz", "nowhere"]),
       state=st.sampled_from([None, "fresh", "stale", "missing"]), served=st.booleans())
def test_pages_join_into_the_filtered_listing(tmp_path_factory, dirs, contexts, stale, limit, under, state, served):
    root = tmp_path_factory.mktemp("paging")
    (root / ".context.config.yaml").write_text("min_tokens: 0\n")
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / "m.py").write_text("m" * 50)
    for scope in contexts:
        if (root / scope).is_dir():
            write_context(root, scope, f"About {scope}", fingerprint="00000000" if scope in stale else None)
    ws = Workspace.open(root)
    saved = index._live
    index._live = index.Indexes(watch=False) if served else None
    try:
        full = msgspec.to_builtins(scopes.list_contexts(ws, scopes.ListContextsParams()))["entries"]
        prefix = "" if under in (None, ".") else under + "/"
        want = [e for e in full if (not prefix or e["scope"] == under or e["scope"].startswith(prefix))
                and (state is None or e["state"] == state)]
        entries, matched = _paged(ws, limit, under=under, state=state)
    finally:
        index._live = saved
    assert entries == want
    assert matched == {len(want)}


@pytest.mark.anyio
async def test_served_pages_follow_a_touch_and_a_new_directory_mid_way(tmp_path):
    """Pages after the cursor come from the listing as the files are now: a scope touched and
    a directory made after the cursor show up changed, nothing before it comes again."""
    (tmp_path / ".context.config.yaml").write_text("min_tokens: 0\n")
    names = [f"d{i:02}" for i in range(12)]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.py").write_text("m" * 50)
        write_context(tmp_path, name, f"About {name}")
    async with mcp_client("--root", str(tmp_path)) as client:
        async def listing(**args) -> dict:
            result = await client.call_tool("list_contexts", args)
            return json.loads(result.content[0].text)

        seen, page = [], await listing(limit=3)
        while page.get("next_cursor"):
            seen += page["entries"]
            if len(seen) == 6:  # mid-way, the cursor at d04: change a scope after it, add one
                os.utime(tmp_path / "d09" / "m.py", (1, 1))
                (tmp_path / "d07a").mkdir()
                (tmp_path / "d07a" / "m.py").write_text("new")
                (tmp_path / "d00b").mkdir()  # before the cursor: not on a later page
                (tmp_path / "d00b" / "m.py").write_text("new")
            page = await listing(limit=3, cursor=page["next_cursor"])
        seen += page["entries"]
        full = await listing()
    assert [e["scope"] for e in seen] == [e["scope"] for e in full["entries"] if e["scope"] != "d00b"]
    assert seen == [e for e in full["entries"] if e["scope"] != "d00b"]
    states = {e["scope"]: e["state"] for e in seen}
    assert states["d09"] == "stale" and states["d07a"] == "missing" and states["d08"] == "fresh"
