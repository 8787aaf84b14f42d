"""Sessions: what an agent did during one MCP connection, kept in the repository's session
database, which lives outside it in the user's state place (project/store.py).

A session starts when a client connects and ends when it disconnects, or
after 30 minutes without a tool call (the next call then starts a new one).
Every tool call is counted; paths named in its arguments (and at the top level
of its result) that exist in the repository are recorded as files accessed;
the queries and scopes it asked about become topics; `add_discovery` links
its discovery to the session.

Sessions are recorded only where the project surface lives, i.e. when
`.repoctx/project.yaml` exists, and never by a read-only server. The server
calls a Tracker (one per connection, see commands.connection_observers) from
worker threads.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import uuid
from datetime import datetime, timedelta
from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.base import clock, fs
from repoctx.base.command import Check, CheckResult, CliView, Command, Resource, ResourceError
from repoctx.base.workspace import PathEscape, Workspace
from repoctx.formats.project_file import PROJECT_FILE
from repoctx.project import render
from repoctx.project.store import SessionRow, Store, StoreError, database_path

log = logging.getLogger("repoctx")

INVALID_PARAMS, INTERNAL_ERROR = -32602, -32603
IDLE = timedelta(minutes=30)
NO_PLACE = ("The user's state place for session databases is missing and cannot be made, or is not this "
            "user's alone (docs/sessions.md)")
MAX_LIMIT = 100
PATH_KEYS = frozenset({"path", "paths", "file", "files", "file_path", "filepath", "filename", "scope", "scopes"})
TOPIC_KEYS = frozenset({"query", "q", "question", "search", "topic", "topics", "task", "scope", "scopes",
                        "module", "keywords"})
MAX_PATHS_PER_CALL = 50
MAX_TOPICS_PER_CALL = 20
MAX_TOPIC_CHARS = 200

# --- what a call names --------------------------------------------------------


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)] + [
            v["path"] for v in value if isinstance(v, dict) and isinstance(v.get("path"), str)
        ]
    return []


def _named(value: Any, keys: frozenset, nested: bool) -> list[str]:
    """Strings under `keys` in a JSON-like value: anywhere when nested, else at its top level."""
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k in keys:
                out += _strings(v)
            elif nested:
                out += _named(v, keys, nested)
    elif isinstance(value, list) and nested:
        for v in value:
            out += _named(v, keys, nested)
    return out


def paths_in(ws: Workspace, arguments: Any, result: Any) -> list[str]:
    """Existing paths inside the root named by a call, normalised, first mention first."""
    found: list[str] = []
    for raw in _named(arguments, PATH_KEYS, True) + _named(result, PATH_KEYS, False):
        if len(raw) > 4096:
            continue
        try:
            rel, _ = ws.resolve(raw)
        except PathEscape:
            continue
        if rel != "." and rel not in found and _exists(ws, rel):
            found.append(rel)
            if len(found) == MAX_PATHS_PER_CALL:
                break
    return found


def _exists(ws: Workspace, rel: str) -> bool:
    try:
        return fs.lstat(ws.root, rel) is not None
    except OSError:  # a link out on the way, among others
        return False


def topics_in(arguments: Any) -> list[str]:
    found: list[str] = []
    for raw in _named(arguments, TOPIC_KEYS, True):
        topic = " ".join(raw.split())[:MAX_TOPIC_CHARS]
        if topic and topic != "." and topic not in found:
            found.append(topic)
            if len(found) == MAX_TOPICS_PER_CALL:
                break
    return found


# --- the tracker ----------------------------------------------------------------

_active: dict[str, Tracker] = {}  # root -> this process's tracker (a stdio server has one connection)
_active_lock = threading.Lock()


def records_sessions(ws: Workspace) -> bool:
    """Whether a server on `ws` records sessions: the project surface exists and writes are allowed."""
    if ws.read_only:
        return False
    try:
        return fs.is_file(ws.root, PROJECT_FILE)
    except OSError:  # `.repoctx` or the file is a link out
        return False


def tracker_for(ws: Workspace) -> Tracker | None:
    return Tracker(ws) if records_sessions(ws) else None


class Tracker:
    """One client connection's session. The server calls connected(), tool_called() after each
    tool call, and disconnected(), each from a worker thread; no method raises.

    tool_called() only queues the call: a writer thread records it, so the database write is
    not part of the tool's response time. Every read of the session waits for the queue first."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.store: Store | None = None
        self.error: str | None = None  # why sessions cannot be recorded, for session/current
        self.session_id: str | None = None
        self.last: datetime | None = None
        self.lock = threading.Lock()  # guards the store, the session id and `last`
        self.pending: queue.Queue = queue.Queue()
        self.writer: threading.Thread | None = None

    def connected(self) -> None:
        with self.lock:
            try:
                path = database_path(self.ws.root, make=True)
                if path is None:
                    raise StoreError(NO_PLACE)
                self.store = Store(path, legacy_root=self.ws.root)
                now = clock.now()
                self.store.expire_idle(clock.stamp(now - IDLE))
                self._start(now)
                self.writer = threading.Thread(target=self._write_calls, name="repoctx-sessions", daemon=True)
                self.writer.start()
            except (StoreError, OSError) as exc:
                self._fail(exc)
        with _active_lock:
            _active[self.ws.root] = self

    def _fail(self, exc: Exception) -> None:
        self.error = str(exc) if isinstance(exc, StoreError) else f"The session database cannot be used ({getattr(exc, 'strerror', None) or type(exc).__name__})"
        log.warning("sessions are not recorded: %s", self.error)
        if self.store is not None:
            self.store.close()
        self.store, self.session_id = None, None

    def _start(self, now: datetime) -> str:
        self.session_id = uuid.uuid4().hex
        self.store.start_session(self.session_id, clock.stamp(now))
        self.last = now
        return self.session_id

    def _live(self, now: datetime) -> str | None:
        """The current session id, ending it first if it has been idle too long."""
        if self.session_id and self.last is not None and now - self.last > IDLE:
            self.store.end_session(self.session_id, "expired", clock.stamp(self.last))
            self.session_id = None
        return self.session_id

    def flush(self) -> None:
        """Wait until every queued tool call is recorded."""
        if self.writer is not None:
            self.pending.join()

    def current(self) -> str | None:
        self.flush()
        with self.lock:
            if self.store is None:
                return None
            try:
                return self._live(clock.now())
            except StoreError as exc:
                self._fail(exc)
                return None

    def live_id(self) -> str:
        """The session a discovery belongs to, starting one after an idle expiry ("" if none)."""
        self.flush()
        with self.lock:
            if self.store is None:
                return ""
            try:
                now = clock.now()
                return self._live(now) or self._start(now)
            except StoreError as exc:
                self._fail(exc)
                return ""

    def tool_called(self, tool: str, arguments: Any, result: Any) -> None:
        if self.writer is not None:
            self.pending.put((clock.now(), arguments, result))

    def _write_calls(self) -> None:
        while True:
            item = self.pending.get()
            try:
                if item is None:
                    return
                now, arguments, result = item
                paths, topics = paths_in(self.ws, arguments, result), topics_in(arguments)
                with self.lock:
                    if self.store is not None:
                        session_id = self._live(now) or self._start(now)
                        self.store.record_call(session_id, clock.stamp(now), paths, topics)
                        self.last = now
            except StoreError as exc:
                with self.lock:
                    self._fail(exc)
            except Exception:
                log.exception("recording a tool call failed")
            finally:
                self.pending.task_done()

    def add_discovery(self, session_id: str, module: str, type_: str, content: str, solution: str) -> None:
        with self.lock:
            if self.store is None:
                return
            try:
                self.store.add_discovery(session_id, module, type_, content, solution, clock.stamp())
            except StoreError as exc:
                self._fail(exc)

    def disconnected(self) -> None:
        with _active_lock:
            if _active.get(self.ws.root) is self:
                del _active[self.ws.root]
        if self.writer is not None:
            self.pending.put(None)
            self.writer.join()
            self.writer = None
        with self.lock:
            if self.store is None:
                return
            try:
                if self._live(clock.now()):
                    self.store.end_session(self.session_id, "ended", clock.stamp())
            except StoreError as exc:
                log.warning("ending the session failed: %s", exc)
            self.store.close()
            self.store, self.session_id = None, None


def active(ws: Workspace) -> Tracker | None:
    with _active_lock:
        return _active.get(ws.root)


def live_session_id(ws: Workspace) -> str:
    tracker = active(ws)
    return tracker.live_id() if tracker else ""


def record_discovery(ws: Workspace, session_id: str, module: str, type_: str, content: str, solution: str) -> None:
    tracker = active(ws)
    if tracker is not None:
        tracker.add_discovery(session_id, module, type_, content, solution)


# --- reading the history ------------------------------------------------------------


def _effective(row: SessionRow, now: datetime) -> SessionRow:
    """A session still marked active whose server went quiet (or died) reads as expired."""
    if row.status == "active" and now - clock.parse(row.last_activity_at) > IDLE:
        row.status, row.ended_at = "expired", row.last_activity_at
    return row


def _open_for_reading(ws: Workspace) -> Store | None:
    """The database opened read-only, or None when there is none yet (nothing is created)."""
    path = database_path(ws.root)
    if path is None or not os.path.exists(path):
        return None
    return Store(path, read_only=True)


class SessionsParams(Struct):
    limit: Annotated[int, Meta(ge=1, le=MAX_LIMIT, description="How many recent sessions (default 10)")] = 10


class SessionSummary(Struct):
    id: str
    started_at: str
    last_activity_at: str
    ended_at: str | None
    status: str
    tool_calls: int
    files: int
    topics: list[str]
    discoveries: int


class SessionsResult(Struct):
    sessions: list[SessionSummary]
    error: str | UnsetType = UNSET


def _summary(row: SessionRow) -> SessionSummary:
    return SessionSummary(row.id, row.started_at, row.last_activity_at, row.ended_at, row.status,
                          row.tool_calls, row.files, list(row.topics), row.discoveries)


def _row(s: SessionSummary) -> SessionRow:
    return SessionRow(s.id, s.started_at, s.last_activity_at, s.ended_at, s.status, s.tool_calls,
                      s.files, s.discoveries, tuple(s.topics))


def list_sessions(ws: Workspace, p: SessionsParams) -> SessionsResult:
    try:
        store = _open_for_reading(ws)
        if store is None:
            return SessionsResult([])
        try:
            now = clock.now()
            return SessionsResult([_summary(_effective(r, now)) for r in store.recent(p.limit)])
        finally:
            store.close()
    except StoreError as exc:
        return SessionsResult([], error=str(exc))


def _render_list(r: SessionsResult) -> str:
    if r.error:
        return r.error
    return render.recent([_row(s) for s in r.sessions], clock.now()).rstrip("\n")


class ShowParams(Struct):
    id: Annotated[str, Meta(min_length=1, max_length=64, description="Session id or a unique prefix of it (8 characters are shown)")]


class FileAccess(Struct):
    path: str
    access_count: int
    last_accessed_at: str


class Discovery(Struct):
    module: str
    type: str
    content: str
    created_at: str
    solution: str = ""


class ShowResult(Struct):
    found: bool
    session: SessionSummary | UnsetType = UNSET
    files_accessed: list[FileAccess] = []
    discoveries: list[Discovery] = []
    error: str | UnsetType = UNSET


def show_session(ws: Workspace, p: ShowParams) -> ShowResult:
    try:
        store = _open_for_reading(ws)
        if store is None:
            return ShowResult(False, error=f"No session matches {p.id}: no sessions are recorded here yet")
        try:
            ids = store.ids_with_prefix(p.id.lower())
            if len(ids) != 1:
                why = "several sessions start with it" if ids else "no such session"
                return ShowResult(False, error=f"No session matches {p.id}: {why}")
            row = _effective(store.session(ids[0]), clock.now())
            files = [FileAccess(*f) for f in store.files(row.id)]
            found = [Discovery(m, t, c, at, s) for m, t, c, s, at in store.discoveries(row.id)]
            return ShowResult(True, _summary(row), files, found)
        finally:
            store.close()
    except StoreError as exc:
        return ShowResult(False, error=str(exc))


def _render_show(r: ShowResult) -> str:
    if not r.found:
        return r.error or ""
    files = [(f.path, f.access_count, f.last_accessed_at) for f in r.files_accessed]
    text = render.session(_row(r.session), files, f"Session {r.session.id[:8]}", clock.now())
    lines = [f"## Discoveries ({len(r.discoveries)})", ""]
    for d in r.discoveries:
        lines.append(f"- {d.type} in {d.module}: {d.content}" + (f" (solution: {d.solution})" if d.solution else ""))
    return text + "\n" + "\n".join(lines if r.discoveries else lines + ["None"])


COMMANDS = [
    Command(
        name="sessions", tool=None,
        summary="List recent MCP sessions (newest first).",
        description="Recorded by `repoctx serve` once .repoctx/project.yaml exists, in the user's state place "
                    "outside the repository (docs/sessions.md).",
        params=SessionsParams, result=SessionsResult, handler=list_sessions,
        is_error=lambda r: bool(r.error),
        cli=CliView(render=_render_list),
    ),
    Command(
        name="sessions show", tool=None,
        summary="Show one session: files accessed, topics, tool calls and discoveries.",
        description="ID may be the 8-character prefix that `repoctx sessions` shows.",
        params=ShowParams, result=ShowResult, handler=show_session,
        is_error=lambda r: not r.found,
        cli=CliView(positional=("id",), render=_render_show),
    ),
]


# --- resources ------------------------------------------------------------------------

CURRENT_URI = "context://session/current"
RECENT_URI = "context://sessions/recent"


def read_current(ws: Workspace, fields: dict[str, str]) -> str:
    tracker = active(ws)
    session_id = tracker.current() if tracker is not None else None  # waits for queued calls
    if tracker is not None and tracker.error:
        raise ResourceError(INTERNAL_ERROR, "Session database error", {"resource": CURRENT_URI, "reason": tracker.error})
    if session_id is None:
        reason = (
            "The session ended after 30 minutes without a tool call; the next call starts a new one"
            if tracker is not None and tracker.store is not None
            else f"Sessions are recorded once {PROJECT_FILE} exists (`repoctx project init`), "
            "and never by a read-only server"
        )
        raise ResourceError(INVALID_PARAMS, "No active session", {"resource": CURRENT_URI, "reason": reason})
    with tracker.lock:
        try:
            row = tracker.store.session(session_id)
            files = tracker.store.files(session_id, render.TOP_FILES)
        except StoreError as exc:
            raise ResourceError(INTERNAL_ERROR, "Session database error",
                                {"resource": CURRENT_URI, "reason": str(exc)}) from None
    return render.session(row, files, "Active Session", clock.now())


def read_recent(ws: Workspace, fields: dict[str, str]) -> str:
    raw = fields.get("limit", "10")
    uri = f"{RECENT_URI}?limit={raw}" if "limit" in fields else RECENT_URI
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_LIMIT):
        raise ResourceError(INVALID_PARAMS, f"Invalid limit: {raw}", {
            "resource": uri, "reason": f"limit must be a whole number from 1 to {MAX_LIMIT}",
        })
    tracker = active(ws)
    if tracker is not None:
        tracker.flush()  # this connection's own calls are counted too
    result = list_sessions(ws, SessionsParams(int(raw)))
    if result.error:
        raise ResourceError(INTERNAL_ERROR, "Session database error", {"resource": uri, "reason": result.error})
    return render.recent([_row(s) for s in result.sessions], clock.now())


RESOURCES = [
    Resource(CURRENT_URI, "Current Session", "Active session information and activity",
             "text/markdown", read_current),
    Resource(RECENT_URI, "Recent Sessions",
             "List of recent coding sessions (context://sessions/recent?limit=n, default 10)",
             "text/markdown", read_recent),
]


def _check_database(ws: Workspace) -> CheckResult:
    try:
        db = _open_for_reading(ws)
    except StoreError as exc:
        return CheckResult("fail", str(exc))
    if db is None:
        return CheckResult("skip", "No session database yet")
    try:
        rows = db.recent(MAX_LIMIT)
    except StoreError as exc:
        return CheckResult("fail", str(exc))
    finally:
        db.close()
    return CheckResult("pass", f"The session database is readable ({len(rows)}{'+' if len(rows) == MAX_LIMIT else ''} sessions)")


CHECKS = [
    Check("project.sessions_db", "project", "The session database is a repoctx session database this version reads.",
          _check_database),
]
