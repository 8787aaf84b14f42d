"""Session logs of a task: what an agent did, one session at a time.

    .contextia/work/logs/TASK-042/
      2026-03-01T10-15-00Z/       one session, named for its start (UTC)
        session.yaml              task, started, status (open|closed); on close: closed,
                                  entries, duration_minutes
        001.md                    one entry: frontmatter `written:` and the body

Every file is written atomically and only under the repository's write lock
(workspace.locked), so two servers appending to the same task at once each get
their own entry number and no entry is lost. An entry is never rewritten; closing rewrites only session.yaml.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import msgspec

from repoctx.base import clock, fs
from repoctx.base.workspace import Workspace, atomic_write, locked
from repoctx.formats import artifact as fa
from repoctx.formats import bounded

ENTRY_FILE = re.compile(r"^(\d+)\.md$")
SESSION_FILE = "session.yaml"


@dataclass(frozen=True)
class Entry:
    number: int
    written: str
    body: str


@dataclass(frozen=True)
class Session:
    directory: str  # absolute
    record: fa.SessionRecord
    entries: list[Entry]

    @property
    def label(self) -> str:
        return label(self.directory, self.record)


@dataclass(frozen=True)
class Damaged:
    """A session directory whose session.yaml cannot be used: reported, never silently passed over."""

    file: str  # its session.yaml, relative to the root
    reason: str

    @property
    def message(self) -> str:
        return f"{self.file}: {self.reason}; the session is left out until it is fixed"


def label(directory: str, record: fa.SessionRecord) -> str:
    """The name a session is shown by: its start, and `#n` for the n-th session of the task
    that started in the same second (its directory has the suffix -n), so no two share one."""
    stem = record.started.replace(":", "-")
    suffix = os.path.basename(directory).removeprefix(stem + "-")
    return f"{record.started} #{suffix}" if suffix.isdigit() and suffix != os.path.basename(directory) else record.started


def task_dir(ws: Workspace, task_id: str) -> str:
    """The task's log directory (raises PathEscape if a symlink leads it outside the root)."""
    return ws.resolve(f"{fa.CONTEXTIA_DIR}/{fa.LOGS_DIR}/{task_id}")[1]


def _read_record(directory: str) -> fa.SessionRecord | str:
    """The session's record, or why it cannot be used."""
    try:
        data = bounded.yaml(fs.read_text(*fs.split(os.path.join(directory, SESSION_FILE))))
        return msgspec.convert(data, fa.SessionRecord)
    except FileNotFoundError:
        return f"no {SESSION_FILE}"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    except bounded.YamlError as exc:
        return f"not valid YAML ({exc})"
    except msgspec.ValidationError as exc:
        return f"not a session record ({exc})"


def _write_record(directory: str, record: fa.SessionRecord) -> None:
    text = bounded.dump_yaml(msgspec.to_builtins(record), sort_keys=False)
    atomic_write(os.path.join(directory, SESSION_FILE), text.encode())


def _entry_files(directory: str) -> list[tuple[int, str]]:
    """(number, file name) of each entry, in number order."""
    try:
        names = fs.listdir(*fs.split(directory))
    except OSError:
        return []
    return sorted((int(m.group(1)), n) for n in names if (m := ENTRY_FILE.match(n)))


def _read_entry(directory: str, number: int, name: str) -> Entry | None:
    try:
        text = fs.read_text(*fs.split(os.path.join(directory, name)))
    except OSError:
        return None
    written, body = "", text
    try:
        head, body = fa.split_document(text)
        data = bounded.yaml(head)
        if isinstance(data, dict):
            written = str(data.get("written", ""))
    except (fa.DocumentError, bounded.YamlError):
        pass
    return Entry(number, written, body.strip())


def _session_dirs(base: str) -> list[str]:
    try:
        names = sorted(e.name for e in fs.scandir(*fs.split(base)) if not e.name.startswith(".") and e.kind == "d")
    except OSError:
        return []
    return [os.path.join(base, n) for n in names]


def _open_session(base: str) -> tuple[str, fa.SessionRecord] | None:
    for directory in reversed(_session_dirs(base)):
        record = _read_record(directory)
        if not isinstance(record, str) and record.status == "open":
            return directory, record
    return None


def write_entry(ws: Workspace, task_id: str, body: str) -> tuple[Session, int]:
    """Append an entry to the task's open session, starting one if none is open:
    (the session, without its entries; the entry's number)."""
    base = task_dir(ws, task_id)
    fs.makedirs(*fs.split(base))
    with locked(ws.root):
        now = clock.stamp()
        found = _open_session(base)
        if found is None:  # a session of the same second gets the suffix -n (see label)
            name, n = now.replace(":", "-"), 1
            while fs.lstat(*fs.split(os.path.join(base, name if n == 1 else f"{name}-{n}"))) is not None:
                n += 1
            directory = os.path.join(base, name if n == 1 else f"{name}-{n}")
            fs.makedirs(*fs.split(directory))
            record = fa.SessionRecord(task=task_id, started=now, status="open")
            _write_record(directory, record)
        else:
            directory, record = found
        files = _entry_files(directory)
        number = (files[-1][0] if files else 0) + 1
        text = fa.render_frontmatter({"written": now}) + "\n" + body.strip() + "\n"
        atomic_write(os.path.join(directory, f"{number:03d}.md"), text.encode())
        return Session(directory, record, []), number


def close_session(ws: Workspace, task_id: str) -> Session | None:
    """Close the task's open session (without its entries); None when none is open."""
    base = task_dir(ws, task_id)
    try:
        if not fs.is_dir(*fs.split(base)):
            return None
    except fs.LinkRefused:
        return None
    with locked(ws.root):
        found = _open_session(base)
        if found is None:
            return None
        directory, record = found
        now = clock.stamp()
        minutes = round((clock.parse(now) - clock.parse(record.started)).total_seconds() / 60)
        closed = msgspec.structs.replace(
            record, status="closed", closed=now, entries=len(_entry_files(directory)), duration_minutes=minutes
        )
        _write_record(directory, closed)
        return Session(directory, closed, [])


def sessions(ws: Workspace, task_id: str, limit: int | None = None) -> list[Session]:
    """The task's sessions, most recent first (at most `limit`), each with its entries in order."""
    return read(ws, task_id, limit)[0]


def read(ws: Workspace, task_id: str, limit: int | None = None) -> tuple[list[Session], list[Damaged]]:
    """The task's sessions as `sessions` gives them, and the damaged ones more recent than the
    last of them (or all, without a limit): a reader of the latest learns the latest is damaged."""
    base = task_dir(ws, task_id)
    out: list[Session] = []
    damaged: list[Damaged] = []
    for directory in reversed(_session_dirs(base)):
        if limit is not None and len(out) >= limit:
            break
        record = _read_record(directory)
        if isinstance(record, str):
            damaged.append(Damaged(_rel(ws.root, directory), record))
            continue
        entries = [e for n, name in _entry_files(directory) if (e := _read_entry(directory, n, name))]
        out.append(Session(directory, record, entries))
    return out, damaged


def damaged(root: str, base: str) -> list[Damaged]:
    """Every damaged session of every task under the project at `base` (.contextia/, absolute)."""
    found = []
    for task in _session_dirs(os.path.join(base, fa.LOGS_DIR)):
        for directory in _session_dirs(task):
            record = _read_record(directory)
            if isinstance(record, str):
                found.append(Damaged(_rel(root, directory), record))
    return found


def _rel(root: str, directory: str) -> str:
    return os.path.relpath(os.path.join(directory, SESSION_FILE), root).replace(os.sep, "/")
