"""Session logs: two servers writing the same task at once lose no entry, processes
hammering one task get distinct entry numbers, and a session's life cycle
(open on first write, close with duration and count, then a fresh session)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import anyio
import pytest

from artifacts_fixture import copy_fixture
from conftest import mcp_client
from repoctx.artifacts import log_tools, session_logs
from repoctx.base.workspace import Workspace


@pytest.fixture
def project(tmp_path):
    return copy_fixture(tmp_path / "authkit")


def _entries(root: Path, task: str) -> list[tuple[int, str]]:
    return [(e.number, e.body) for s in session_logs.sessions(Workspace.open(root), task) for e in s.entries]


@pytest.mark.anyio
async def test_two_servers_writing_one_task_lose_nothing(project):
    async with mcp_client("--root", str(project)) as one, mcp_client("--root", str(project)) as two:

        async def writer(client, name: str) -> None:
            for i in range(15):
                result = await client.call_tool("mcp_write_log", {"task_id": "TASK-006", "body": f"{name} {i}"})
                assert not result.is_error, result.content[0].text

        async with anyio.create_task_group() as tg:
            tg.start_soon(writer, one, "one")
            tg.start_soon(writer, two, "two")
        read = await one.call_tool("mcp_read_log", {"task_id": "TASK-006"})
    entries = _entries(project, "TASK-006")
    assert [n for n, _ in entries] == list(range(1, 31))  # one session, numbers without gaps or repeats
    assert sorted(b for _, b in entries) == sorted(f"{w} {i}" for w in ("one", "two") for i in range(15))
    assert read.structured_content["sessions"][0]["status"] == "open"
    assert len(read.structured_content["sessions"][0]["entries"]) == 30


def _hammer(root: str, name: str, count: int) -> None:
    ws = Workspace.open(root)
    for i in range(count):
        result = log_tools.write_log(ws, log_tools.WriteLogParams("TASK-007", f"{name}-{i}"))
        assert not result.error, result.error


def test_processes_get_distinct_entry_numbers(project):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(str(project), f"p{k}", 25)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    entries = _entries(project, "TASK-007")
    assert [n for n, _ in entries] == list(range(1, 101))
    assert sorted(b for _, b in entries) == sorted(f"p{k}-{i}" for k in range(4) for i in range(25))
    leftovers = [p.name for p in (project / ".contextia/work/logs/TASK-007").rglob("*") if p.suffix == ".tmp"]
    assert leftovers == []


def test_a_session_opens_closes_and_the_next_write_starts_another(project):
    ws = Workspace.open(project)
    first = log_tools.write_log(ws, log_tools.WriteLogParams("TASK-001", "## Summary\nStarted."))
    log_tools.write_log(ws, log_tools.WriteLogParams("TASK-001", "More."))
    closed = log_tools.close_log(ws, log_tools.CloseLogParams("TASK-001"))
    assert closed.session == first.session and closed.entries == 2 and closed.duration_minutes == 0
    assert log_tools.text_close_log(closed) == (
        f"Session log closed for TASK-001 ({closed.closed})\nDuration: 0 minutes\nEntries: 2")
    again = log_tools.close_log(ws, log_tools.CloseLogParams("TASK-001"))
    assert again.error == "No open session log for TASK-001; nothing to close"
    log_tools.write_log(ws, log_tools.WriteLogParams("TASK-001", "Next day."))
    latest = log_tools.read_log(ws, log_tools.ReadLogParams("TASK-001"))
    assert [(s.status, [e.body for e in s.entries]) for s in latest.sessions] == [("open", ["Next day."])]
    both = log_tools.read_log(ws, log_tools.ReadLogParams("TASK-001", latest=False, n=5))
    assert [s.status for s in both.sessions] == ["open", "closed"]
    assert [e.body for e in both.sessions[1].entries] == ["## Summary\nStarted.", "More."]
    # The record on disk says what the contract reports.
    record = next(p for p in (project / ".contextia/work/logs/TASK-001").glob("*/session.yaml")
                  if "closed" in p.read_text())
    assert "entries: 2" in record.read_text() and "duration_minutes: 0" in record.read_text()
    bad = log_tools.read_log(ws, log_tools.ReadLogParams("TASK-001", latest=False, n=0))
    assert bad.error == "Invalid n 0. Valid values: 1 or more"


def test_a_log_directory_leading_outside_is_refused(project, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / ".contextia/work/logs/TASK-008").symlink_to(outside)
    ws = Workspace.open(project)
    result = log_tools.write_log(ws, log_tools.WriteLogParams("TASK-008", "x"))
    assert result.error and "outside the project" in result.error
    assert list(outside.iterdir()) == []
