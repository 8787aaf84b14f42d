"""The session-log tools of the artifacts surface (mcp_read_log, mcp_write_log, mcp_close_log):
their parameters, results, handlers and plain-text views, over the log files of session_logs.py.
The artifacts' registry (tools.py) declares them beside the other `mcp_*` tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.artifacts import session_logs
from repoctx.artifacts.store import Artifact, Problem, find_artifact, load
from repoctx.base.words import plural
from repoctx.base.workspace import PathEscape, Workspace

READ_ONLY = "Refused: this server is read-only, so session logs cannot be written."
TaskId = Annotated[str, Meta(description="A task id, e.g. TASK-042")]
T = TypeVar("T")


class ReadLogParams(Struct):
    task_id: TaskId
    latest: Annotated[bool, Meta(description="Only the most recent session log")] = True
    n: Annotated[int, Meta(description="How many recent session logs (when latest is false)")] = 1


class WriteLogParams(Struct):
    task_id: TaskId
    # Optional, as in the contract's parameter table: without text the entry records only its time.
    body: Annotated[str, Meta(description="The entry, in markdown: progress, decisions, open questions, files "
                              "changed (optional: without it the entry records only its time)")] = ""


class CloseLogParams(Struct):
    task_id: TaskId


class EntryData(Struct):
    number: int
    written: str
    body: str


class SessionData(Struct, omit_defaults=True):
    started: str
    status: str
    # The name it is shown by when it differs from `started`: `#n` for the n-th of its second.
    session: str | None = None
    closed: str | None = None
    duration_minutes: int | None = None
    entries: list[EntryData] = []


class ReadLogResult(Struct):
    task_id: str
    sessions: list[SessionData] = []
    error: str | UnsetType = UNSET
    # Sessions whose session.yaml cannot be used, among those read: said, never passed over.
    damaged: list[str] | UnsetType = UNSET
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


class WriteLogResult(Struct, omit_defaults=True):
    task_id: str
    session: str | None = None  # the session's start
    empty: bool = False  # the entry has no text (no body was given)
    error: str | None = None
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


class CloseLogResult(Struct, omit_defaults=True):
    task_id: str
    session: str | None = None
    closed: str | None = None
    duration_minutes: int | None = None
    entries: int | None = None
    error: str | None = None
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


def _task_for_log(ws: Workspace, task_id: str) -> Artifact:
    return find_artifact(load(ws), task_id, "task")


def read_log(ws: Workspace, p: ReadLogParams) -> ReadLogResult:
    out = ReadLogResult(p.task_id)
    try:
        _task_for_log(ws, p.task_id)
        if not p.latest and p.n < 1:
            raise Problem(f"Invalid n {p.n}. Valid values: 1 or more")
        found, damaged = session_logs.read(ws, p.task_id, 1 if p.latest else p.n)
    except Problem as exc:
        out.error = str(exc)
        return out
    except PathEscape:
        out.error = f"The session logs of {p.task_id} lead outside the project; not read"
        return out
    for s in found:
        r = s.record
        entries = [EntryData(e.number, e.written, e.body) for e in s.entries]
        shown = s.label if s.label != r.started else None
        out.sessions.append(SessionData(r.started, r.status, shown, r.closed, r.duration_minutes, entries))
    if damaged:
        out.damaged = [d.message for d in damaged]
    return out


def _minutes(n: int) -> str:
    return plural(n, "minute")


def text_read_log(r: ReadLogResult) -> str:
    if r.error:
        return r.error
    blocks = [f"Damaged session log: {d}" for d in r.damaged or ()]
    if not r.sessions:
        return "\n".join([*blocks, f"No session logs for {r.task_id}."])
    for s in r.sessions:
        lines = [f"Session log for {r.task_id} ({s.session or s.started}):", f"  status: {s.status}"]
        if s.duration_minutes is not None:
            lines.append(f"  duration: {_minutes(s.duration_minutes)}")
        lines.append(f"  entries: {len(s.entries)}")
        for e in s.entries:
            lines += ["", f"  [{e.written}]"] + [f"  {x}" if x else "" for x in e.body.splitlines()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _written(ws: Workspace, task_id: str, write: Callable[[], T]) -> T | str:
    """What `write()` gives once the server may write and the task exists, or why nothing was
    written (read-only, no such task, a log path that leads out, a refusal of the disk)."""
    try:
        if ws.read_only:
            raise Problem(READ_ONLY)
        _task_for_log(ws, task_id)
        return write()
    except Problem as exc:
        return str(exc)
    except PathEscape:
        return f"The session logs of {task_id} lead outside the project; not written"
    except OSError as exc:  # the disk's or the repository's doing (a full disk, a lock file that is a link)
        return f"The session log of {task_id} could not be written: {exc.strerror or type(exc).__name__}"


def write_log(ws: Workspace, p: WriteLogParams) -> WriteLogResult:
    written = _written(ws, p.task_id, lambda: session_logs.write_entry(ws, p.task_id, p.body))
    if isinstance(written, str):
        return WriteLogResult(p.task_id, error=written)
    session, _number = written
    return WriteLogResult(p.task_id, session.label, empty=not p.body.strip())


def text_write_log(r: WriteLogResult) -> str:
    if r.error:
        return r.error
    # A body sent under another name is ignored like any unknown key: the second line says so.
    note = "\nThe entry has no text: no body was given." if r.empty else ""
    return f"Log entry written to {r.task_id} session {r.session}{note}"


def close_log(ws: Workspace, p: CloseLogParams) -> CloseLogResult:
    def close() -> session_logs.Session:
        session = session_logs.close_session(ws, p.task_id)
        if session is None:
            raise Problem(f"No open session log for {p.task_id}; nothing to close")
        return session

    closed = _written(ws, p.task_id, close)
    if isinstance(closed, str):
        return CloseLogResult(p.task_id, error=closed)
    record = closed.record
    return CloseLogResult(p.task_id, closed.label, record.closed, record.duration_minutes, record.entries)


def text_close_log(r: CloseLogResult) -> str:
    if r.error:
        return r.error
    return (f"Session log closed for {r.task_id} ({r.closed})\nDuration: {_minutes(r.duration_minutes)}\n"
            f"Entries: {r.entries}")
