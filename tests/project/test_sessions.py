"""Sessions: the SQLite store (WAL, versioned schema, foreign and corrupt files
left alone), the tracker's lifecycle on a controlled clock (counts, files,
topics, 30-minute idle expiry, discoveries), golden markdown of both session
resources, and the `repoctx sessions` commands."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import sys
import uuid
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path

import pytest

from conftest import run_cli
from project_fixture import check_golden
from repoctx.base.command import ResourceError
from repoctx.base.workspace import Workspace
from repoctx.project import overview as project
from repoctx.project import sessions, store
from repoctx.project.overview import AddDiscoveryParams
from sample_repo import build_sample_repo

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr("repoctx.base.clock.now", c)
    ids = count(1)
    monkeypatch.setattr(sessions.uuid, "uuid4", lambda: uuid.UUID(int=next(ids) * (1 << 100)))
    return c


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


def db_path(root) -> Path:
    return Path(store.database_path(str(root), make=True) or "")


# --- the store -----------------------------------------------------------------------


def test_a_new_database_is_stamped_versioned_and_in_wal_mode(tmp_path):
    s = store.Store(str(tmp_path / "s.db"))
    s.close()
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == store.APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"sessions", "files_accessed", "topics", "discoveries"}


@pytest.mark.parametrize("make, expected", [
    (lambda p: p.write_bytes(b"this is not a database at all" * 10), "is not an SQLite database"),
    (lambda p: sqlite3.connect(p).execute("CREATE TABLE notes (x)").connection.commit(), "belongs to another application"),
    (lambda p: _stamped(p, 0x1234, 1), "application id 0x1234"),
    (lambda p: _stamped(p, store.APPLICATION_ID, store.SCHEMA_VERSION + 1), "written by a newer repoctx"),
    (lambda p: p.write_bytes(store.SQLITE_MAGIC + b"\x10\x00" + b"\xff" * 4000), "not a usable SQLite database"),
])
def test_foreign_or_corrupt_files_are_reported_and_left_untouched(tmp_path, make, expected):
    path = tmp_path / "s.db"
    make(path)
    before = path.read_bytes()
    for read_only in (False, True):
        with pytest.raises(store.StoreError, match=expected) as info:
            store.Store(str(path), read_only=read_only)
        assert "left untouched" in str(info.value) and str(tmp_path) not in str(info.value)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["s.db"]


def _stamped(path, app_id: int, version: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute(f"PRAGMA application_id = {app_id}")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


def test_an_empty_file_becomes_a_database(tmp_path):
    (tmp_path / "s.db").write_bytes(b"")
    store.Store(str(tmp_path / "s.db")).close()
    assert (tmp_path / "s.db").read_bytes().startswith(store.SQLITE_MAGIC)


def _open_and_write(path: str, who: int) -> None:
    s = store.Store(path)
    for i in range(20):
        s.start_session(f"{who}-{i}", f"2026-03-01T09:00:{i:02d}Z")
        s.record_call(f"{who}-{i}", "2026-03-01T09:01:00Z", ["a.py"], ["t"])
    s.close()


def test_processes_creating_and_writing_one_database_at_once(tmp_path):
    path = str(tmp_path / "s.db")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_open_and_write, args=(path, who)) for who in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    s = store.Store(path, read_only=True)
    rows = s.recent(100)
    assert len(rows) == 80 and all(r.tool_calls == 1 and r.files == 1 for r in rows)


# --- what a call names -----------------------------------------------------------------


def test_paths_and_topics_from_arguments_and_results(repo):
    ws = Workspace.open(repo)
    arguments = {"scope": "src/core", "path": str(repo), "filter": ["summary"],
                 "nested": {"files": ["src/util.py", "../etc/passwd", "/etc/passwd", "nope.py", "docs\\guide.md"]}}
    result = {"scope": "src/core", "entries": [{"scope": "docs"}], "file": "README.md"}
    assert sessions.paths_in(ws, arguments, result) == ["src/core", "src/util.py", "docs/guide.md", "README.md"]
    assert sessions.topics_in({"query": "  how   does\nrun work ", "scope": ".", "module": "core",
                               "filter": ["x"]}) == ["how does run work", "core"]


def test_a_symlink_leading_out_is_not_a_file_accessed(repo, tmp_path):
    (tmp_path / "secret.txt").write_text("x")
    (repo / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert sessions.paths_in(Workspace.open(repo), {"path": "link.txt"}, None) == []


# --- the tracker -------------------------------------------------------------------------


def test_a_session_counts_calls_files_topics_and_ends_on_disconnect(repo, clock):
    ws = Workspace.open(repo)
    t = sessions.Tracker(ws)
    t.connected()
    t.tool_called("check_freshness", {"scope": "src/core"}, {"scope": "src/core", "state": "fresh"})
    clock.advance(minutes=5)
    t.tool_called("query_context", {"scope": "src/core", "filter": ["summary"]}, {"found": True, "scope": "src/core"})
    clock.advance(minutes=10, seconds=30)
    t.tool_called("list_contexts", {}, {"entries": [{"scope": "docs"}]})
    assert project.add_discovery(ws, AddDiscoveryParams("core", "issue", "run() is slow", "Cache it")).recorded
    t.tool_called("add_discovery", {"module": "core", "type": "issue"}, {"recorded": True})
    clock.advance(minutes=29)  # idle, but not yet 30 minutes
    check_golden("session-current.md", sessions.read_current(ws, {}))
    t.disconnected()
    with pytest.raises(ResourceError, match="No active session"):
        sessions.read_current(ws, {})
    [row] = store.Store(str(db_path(repo)), read_only=True).recent(5)
    assert (row.status, row.tool_calls, row.files, row.discoveries) == ("ended", 4, 1, 1)
    assert row.topics == ("src/core", "core")
    issue = project.load(ws).modules["core"].common_issues[0]
    assert issue.session_id == row.id and issue.discovered_at == "2026-03-01T09:15:30Z"


def test_thirty_idle_minutes_end_a_session_and_the_next_call_starts_one(repo, clock):
    ws = Workspace.open(repo)
    t = sessions.Tracker(ws)
    t.connected()
    t.tool_called("list_contexts", {}, {})
    clock.advance(minutes=30)
    assert t.current() is not None  # exactly 30 minutes: still active
    clock.advance(seconds=1)
    with pytest.raises(ResourceError) as info:
        sessions.read_current(ws, {})
    assert info.value.rpc_code == -32602 and info.value.message == "No active session"
    assert "30 minutes" in info.value.data["reason"]
    t.tool_called("check_freshness", {"scope": "src/core"}, {})
    clock.advance(minutes=1)
    t.disconnected()
    rows = store.Store(str(db_path(repo)), read_only=True).recent(5)
    assert [(r.status, r.tool_calls) for r in rows] == [("ended", 1), ("expired", 1)]
    assert rows[1].ended_at == "2026-03-01T09:00:00Z"  # expired at its last activity


def test_a_session_whose_server_vanished_reads_as_expired_and_is_marked_by_the_next(repo, clock):
    ws = Workspace.open(repo)
    crashed = sessions.Tracker(ws)
    crashed.connected()
    crashed.tool_called("list_contexts", {}, {})
    crashed.flush()  # the call is recorded, then the process dies without disconnecting
    clock.advance(hours=1)
    assert sessions.list_sessions(ws, sessions.SessionsParams()).sessions[0].status == "expired"
    raw = sqlite3.connect(db_path(repo)).execute("SELECT status FROM sessions").fetchone()[0]
    assert raw == "active"  # reading did not write
    sessions.Tracker(ws).connected()
    statuses = sqlite3.connect(db_path(repo)).execute("SELECT status FROM sessions ORDER BY started_at").fetchall()
    assert statuses == [("expired",), ("active",)]


def test_recent_sessions_golden_and_limits(repo, clock):
    ws = Workspace.open(repo)
    first = sessions.Tracker(ws)  # 09:00-10:00, ended by its client
    first.connected()
    for scope in ("src/core", "docs", "src/core"):
        first.tool_called("query_context", {"scope": scope}, {})
        clock.advance(minutes=20)
    first.disconnected()
    second = sessions.Tracker(ws)  # 10:00-10:10, then quiet: expired
    second.connected()
    clock.advance(minutes=10)
    second.tool_called("check_freshness", {"scope": "src"}, {})
    second.flush()  # recorded long before the next server starts, 35 minutes later
    clock.advance(minutes=35)
    third = sessions.Tracker(ws)  # 10:45, still working
    third.connected()
    clock.advance(minutes=5)
    third.tool_called("add_discovery", {"module": "docs"}, {})
    project.add_discovery(ws, AddDiscoveryParams("docs", "rule", "Every guide has an example"))
    clock.advance(minutes=20)
    check_golden("sessions-recent.md", sessions.read_recent(ws, {}))
    check_golden("sessions-recent-limit-2.md", sessions.read_recent(ws, {"limit": "2"}))
    for bad in ("0", "101", "-1", "ten", "1.5", ""):
        with pytest.raises(ResourceError) as info:
            sessions.read_recent(ws, {"limit": bad})
        assert info.value.rpc_code == -32602 and info.value.message == f"Invalid limit: {bad}"
        assert info.value.data["resource"] == f"context://sessions/recent?limit={bad}"


def test_recent_sessions_without_a_database_are_none_and_nothing_is_created(tmp_path):
    ws = Workspace.open(tmp_path)
    assert sessions.read_recent(ws, {}) == "# Recent Sessions (0)\n"
    assert os.listdir(tmp_path) == []


def test_no_tracker_without_a_project_file_or_when_read_only(repo, tmp_path):
    assert sessions.tracker_for(Workspace.open(tmp_path)) is None
    assert sessions.tracker_for(Workspace.open(repo, read_only=True)) is None
    assert sessions.tracker_for(Workspace.open(repo)) is not None
    with pytest.raises(ResourceError) as info:
        sessions.read_current(Workspace.open(tmp_path), {})
    assert info.value.rpc_code == -32602 and "repoctx project init" in info.value.data["reason"]


def test_a_corrupt_database_disables_recording_and_is_reported(repo, clock):
    db_path(repo).write_bytes(b"garbage" * 100)
    ws = Workspace.open(repo)
    t = sessions.Tracker(ws)
    t.connected()
    t.tool_called("list_contexts", {}, {})  # no exception: the tool call is never disturbed
    with pytest.raises(ResourceError) as info:
        sessions.read_current(ws, {})
    assert info.value.rpc_code == -32603 and f"({db_path(repo).name} in the user's state place) is not an SQLite database" in info.value.data["reason"]
    assert str(repo) not in json.dumps(info.value.data)
    assert str(db_path(repo).parent) not in json.dumps(info.value.data)
    t.disconnected()
    check = sessions._check_database(ws)
    assert check.status == "fail" and "not an SQLite database" in check.message
    assert db_path(repo).read_bytes() == b"garbage" * 100


def test_the_validate_check_passes_on_a_healthy_database_and_skips_without_one(repo, clock):
    ws = Workspace.open(repo)
    assert sessions._check_database(ws).status == "skip"
    t = sessions.Tracker(ws)
    t.connected()
    t.disconnected()
    assert sessions._check_database(ws).message == "The session database is readable (1 sessions)"


# --- CLI ----------------------------------------------------------------------------------


def test_cli_lists_and_shows_sessions(repo, clock):
    ws = Workspace.open(repo)
    t = sessions.Tracker(ws)
    t.connected()
    t.tool_called("check_freshness", {"scope": "src/core"}, {})
    project.add_discovery(ws, AddDiscoveryParams("docs", "decision", "Guides are markdown"))
    t.disconnected()
    listed = run_cli("sessions", "--json", "--limit", "5", "--root", str(repo))
    assert listed.returncode == 0
    [s] = json.loads(listed.stdout)["sessions"]
    assert (s["status"], s["tool_calls"], s["files"], s["discoveries"]) == ("ended", 1, 1, 1)
    human = run_cli("sessions", "--root", str(repo))
    assert human.stdout.startswith("# Recent Sessions (1)\n\n## Session " + s["id"][:8])
    shown = run_cli("sessions", "show", s["id"][:8], "--root", str(repo))
    assert shown.returncode == 0
    assert "### src/core\n**Access Count:** 1" in shown.stdout
    assert "## Discoveries (1)\n\n- decision in docs: Guides are markdown" in shown.stdout
    detail = json.loads(run_cli("sessions", "show", s["id"], "--json", "--root", str(repo)).stdout)
    assert detail["files_accessed"] == [{"path": "src/core", "access_count": 1, "last_accessed_at": "2026-03-01T09:00:00Z"}]
    missing = run_cli("sessions", "show", "ffff", "--root", str(repo))
    assert missing.returncode == 1 and "No session matches ffff" in missing.stderr
    assert run_cli("sessions", "--limit", "0", "--root", str(repo)).returncode == 1


# --- where the database lives ---------------------------------------------------------------


def test_the_database_is_outside_the_repository_and_every_spelling_of_the_root_meets_it(repo, tmp_path, clock):
    """Nothing SQLite opens by name (the database, its -wal and -shm) is beneath the repository,
    and a link to the root records into the same database."""
    link = tmp_path / "link"
    link.symlink_to(repo, target_is_directory=True)
    for root in (repo, link):
        t = sessions.Tracker(Workspace.open(root))
        t.connected()
        t.tool_called("check_freshness", {"scope": "src/core"}, {})
        assert not [n for n in os.listdir(repo / ".repoctx") if n.startswith("sessions.db")]
        t.disconnected()
    assert len(sessions.list_sessions(Workspace.open(repo), sessions.SessionsParams()).sessions) == 2
    assert db_path(link) == db_path(repo) and repo not in db_path(repo).parents


def _legacy(repo) -> sqlite3.Connection:
    """`.repoctx/sessions.db` as an older repoctx left it: one ended session in the file, one
    committed only to its -wal (a server still running, or killed), returned still open."""
    legacy = store.Store(str(repo / ".repoctx/sessions.db"))
    legacy.start_session("old-ended", "2026-02-01T09:00:00Z")
    legacy.record_call("old-ended", "2026-02-01T09:01:00Z", ["src/util.py"], ["old topic"])
    legacy.add_discovery("old-ended", "core", "issue", "found before", "", "2026-02-01T09:02:00Z")
    legacy.end_session("old-ended", "ended", "2026-02-01T09:03:00Z")
    legacy.close()
    conn = sqlite3.connect(repo / ".repoctx/sessions.db", isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("INSERT INTO sessions (id, started_at, last_activity_at, status) "
                 "VALUES ('old-in-wal', '2026-02-02T09:00:00Z', '2026-02-02T09:00:00Z', 'expired')")
    return conn


def test_an_older_repoctx_s_database_is_taken_in_once_and_left_as_it_was(repo, clock):
    conn = _legacy(repo)
    try:
        names = sorted(n for n in os.listdir(repo / ".repoctx") if n.startswith("sessions.db"))
        assert names == ["sessions.db", "sessions.db-shm", "sessions.db-wal"]
        before = {n: (repo / ".repoctx" / n).read_bytes() for n in names}
        ws = Workspace.open(repo)
        for _ in range(2):  # the second server finds the database made: nothing is taken twice
            t = sessions.Tracker(ws)
            t.connected()
            t.disconnected()
        rows = store.Store(str(db_path(repo)), read_only=True).recent(10)
        assert sorted(r.id for r in rows if r.id.startswith("old")) == ["old-ended", "old-in-wal"]
        [old] = [r for r in rows if r.id == "old-ended"]
        assert (old.status, old.tool_calls, old.files, old.discoveries, old.topics) == ("ended", 1, 1, 1, ("old topic",))
        assert len(rows) == 4
        assert {n: (repo / ".repoctx" / n).read_bytes() for n in names} == before
        assert not [n for n in os.listdir(db_path(repo).parent) if ".legacy-" in n]  # the private copy is gone
    finally:
        conn.close()


@pytest.mark.parametrize("legacy", [b"garbage" * 100, "foreign"])
def test_an_older_file_that_is_not_ours_is_not_taken_in_and_sessions_are_recorded(repo, clock, legacy):
    path = repo / ".repoctx/sessions.db"
    if legacy == "foreign":  # our tables, another application's stamp
        planted = store.Store(str(path))
        planted.start_session("planted", "2026-02-01T09:00:00Z")
        planted.conn.execute("PRAGMA application_id = 4660")
        planted.close()
    else:
        path.write_bytes(legacy)
    before = path.read_bytes()
    t = sessions.Tracker(Workspace.open(repo))
    t.connected()
    assert t.error is None and t.current() is not None
    t.disconnected()
    assert [r.status for r in store.Store(str(db_path(repo)), read_only=True).recent(10)] == ["ended"]
    assert path.read_bytes() == before


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and links: Windows keeps the profile's place to its user")
@pytest.mark.parametrize("planted", ["link", "open to others"])
def test_a_state_place_not_the_user_s_alone_is_not_used(repo, tmp_path, monkeypatch, clock, planted):
    state, elsewhere = tmp_path / "state", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (state / "repoctx").mkdir(parents=True)
    if planted == "link":
        (state / "repoctx/sessions").symlink_to(elsewhere, target_is_directory=True)
    else:
        (state / "repoctx/sessions").mkdir(mode=0o777)
        os.chmod(state / "repoctx/sessions", 0o777)
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    t = sessions.Tracker(Workspace.open(repo))
    t.connected()
    assert t.error == sessions.NO_PLACE and t.current() is None
    t.disconnected()
    assert os.listdir(elsewhere) == [] and os.listdir(state / "repoctx/sessions") == []
