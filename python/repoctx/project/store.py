"""The session database of a repository (stdlib sqlite3), kept outside it.

It lives in the user's state place (base/user_place.py), named by a hash of the root's real
path (base/root_name.py), so every server on a repository and every spelling of its root meet
one file. SQLite opens the database, and its -wal and -shm when it first reads, by name: kept in
the repository, a `.repoctx` swapped for a link out between the open and that read made the pair
outside. There no name on the way is the repository's.

WAL mode and a busy timeout let several servers on one repository write at once. The file is
stamped with an application id and a schema version (`PRAGMA user_version`) that migrations move
forward inside one immediate transaction, so two servers opening a new database migrate it once.
A file that is not ours (another application's database, a newer schema, or not a database at
all) raises StoreError and is left exactly as it is.

An older repoctx kept the database at `.repoctx/sessions.db`. A new database takes in what that
file holds, once, in the transaction that makes its schema: the file (and a `-wal` a killed
server left) is read through the confined layer into a private copy, which SQLite reads; the
file itself is never opened by SQLite, written, or removed.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from dataclasses import dataclass

from repoctx.base import fs, user_place
from repoctx.base.errors import RepoctxError
from repoctx.base.root_name import root_name
from repoctx.base.workspace import realpath

log = logging.getLogger("repoctx")

LEGACY_FILE = ".repoctx/sessions.db"
LEGACY_SCHEMA = 1  # the schema of every `.repoctx/sessions.db` an older repoctx wrote
MAX_LEGACY_BYTES = 1 << 30
APPLICATION_ID = 0x72637478  # "rctx"
BUSY_TIMEOUT_MS = 10_000
SQLITE_MAGIC = b"SQLite format 3\x00"

# Each entry moves the schema from version i to i + 1. Never edit one that shipped: append.
MIGRATIONS = [
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        last_activity_at TEXT NOT NULL,
        ended_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'ended', 'expired')),
        tool_calls INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_by_start ON sessions (started_at);
    CREATE TABLE files_accessed (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        access_count INTEGER NOT NULL,
        last_accessed_at TEXT NOT NULL,
        PRIMARY KEY (session_id, path)
    );
    CREATE TABLE topics (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        topic TEXT NOT NULL,
        first_seen_at TEXT NOT NULL,
        PRIMARY KEY (session_id, topic)
    );
    CREATE TABLE discoveries (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        module TEXT NOT NULL,
        type TEXT NOT NULL,
        content TEXT NOT NULL,
        solution TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    );
    CREATE INDEX discoveries_by_session ON discoveries (session_id);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(RepoctxError):
    """The session database cannot be used; the message names it relative to the root."""


@dataclass
class SessionRow:
    id: str
    started_at: str
    last_activity_at: str
    ended_at: str | None
    status: str
    tool_calls: int
    files: int = 0
    discoveries: int = 0
    topics: tuple[str, ...] = ()


def database_path(root: str, make: bool = False) -> str | None:
    """Where the session database of `root` lives; None when the user's state place is missing
    (or, with `make`, cannot be made) or is not this user's alone."""
    place = user_place.state_dir("sessions", make)
    # The core's realpath(3) names each directory as the file system holds it (on macOS, in its
    # own case, which os.path.realpath keeps as given): one database for every spelling.
    return None if place is None else os.path.join(place, root_name(realpath(root)) + ".db")


def _shown(path: str) -> str:
    """How an answer names a database: by its file in the user's state place, never by a path
    that holds the user's home."""
    return f"{os.path.basename(path)} in the user's state place"


class Store:
    """One connection to a session database. Not shared between threads without `lock`.

    `legacy_root`: a repository whose `.repoctx/sessions.db` a new database takes in."""

    def __init__(self, path: str, *, read_only: bool = False, legacy_root: str | None = None) -> None:
        self.path = path
        self._check_header()
        try:
            self.conn = self._open(read_only)
        except sqlite3.DatabaseError as exc:
            raise self._problem(f"is not a usable SQLite database ({exc})") from None
        try:
            self._prepare(read_only, legacy_root)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise self._problem(f"is not a usable SQLite database ({exc})") from None
        except BaseException:
            self.close()
            raise

    def _problem(self, what: str) -> StoreError:
        return StoreError(f"The session database ({_shown(self.path)}) {what}; it was left untouched "
                          "(move it away to start a new session history)")

    def _check_header(self) -> None:
        """Refuse a file that is not an SQLite database before sqlite3 touches it."""
        try:
            with open(self.path, "rb") as f:
                head = f.read(len(SQLITE_MAGIC))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"The session database ({_shown(self.path)}) cannot be read ({exc.strerror})") from None
        if head and head != SQLITE_MAGIC:
            raise self._problem("is not an SQLite database")

    def _open(self, read_only: bool) -> sqlite3.Connection:
        if not read_only:
            return _connect(self.path, "rwc")
        if not os.path.exists(self.path):
            raise FileNotFoundError(self.path)
        # With no -wal file no writer is active and the main file holds everything: reading it as
        # immutable creates no -shm/-wal beside it, so a reader leaves no trace.
        return _connect(self.path, "ro" + ("&immutable=1" if not os.path.exists(self.path + "-wal") else ""))

    def _prepare(self, read_only: bool, legacy_root: str | None) -> None:
        c = self.conn
        c.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        c.execute("PRAGMA foreign_keys = ON")
        version = self._identify()
        if read_only:
            if version != SCHEMA_VERSION:
                raise self._problem(f"has schema version {version}; this repoctx reads version {SCHEMA_VERSION}")
            return
        if c.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            self._migrate(legacy_root if version < LEGACY_SCHEMA else None)

    def _identify(self) -> int:
        """The schema version of our database; StoreError for anyone else's."""
        # One statement, one snapshot: another server's migration may commit between two reads.
        app_id, version, tables = self.conn.execute(
            "SELECT (SELECT application_id FROM pragma_application_id()), "
            "(SELECT user_version FROM pragma_user_version()), (SELECT count(*) FROM sqlite_master)"
        ).fetchone()
        if app_id == 0 and version == 0:
            if tables:
                raise self._problem("belongs to another application (it has tables but no repoctx stamp)")
            return 0
        if app_id != APPLICATION_ID:
            raise self._problem(f"belongs to another application (application id {app_id:#x})")
        if version > SCHEMA_VERSION:
            raise self._problem(f"was written by a newer repoctx (schema version {version}, "
                                f"this one knows {SCHEMA_VERSION})")
        return version

    def _migrate(self, legacy_root: str | None) -> None:
        c = self.conn
        copy = _legacy_copy(legacy_root, self.path) if legacy_root else None
        try:
            if copy:  # ATTACH is refused inside a transaction
                c.execute("ATTACH ? AS legacy", (copy,))
        except sqlite3.DatabaseError as exc:
            _drop_copy(c, copy)
            log.warning("%s was not taken into the session database (%s)", LEGACY_FILE, exc)
            copy = None
        try:
            c.execute("BEGIN IMMEDIATE")
            try:
                version = self._identify()  # another server may have migrated while we waited
                for done, script in enumerate(MIGRATIONS[version:], version + 1):
                    for statement in filter(str.strip, script.split(";")):
                        c.execute(statement)
                    if done == LEGACY_SCHEMA and copy:
                        self._take_legacy()
                c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        finally:
            if copy:
                _drop_copy(c, copy)

    def _take_legacy(self) -> None:
        """Copy the sessions of `.repoctx/sessions.db` (attached as `legacy`) in; one that is not
        ours at LEGACY_SCHEMA, or not readable, is left out with a warning."""
        c = self.conn
        c.execute("SAVEPOINT legacy")
        try:
            found = c.execute("PRAGMA legacy.application_id").fetchone()[0], \
                c.execute("PRAGMA legacy.user_version").fetchone()[0]
            if found != (APPLICATION_ID, LEGACY_SCHEMA):
                raise sqlite3.DatabaseError(f"application id {found[0]:#x}, schema version {found[1]}")
            for table in ("sessions", "files_accessed", "topics", "discoveries"):
                c.execute(f"INSERT INTO main.{table} SELECT * FROM legacy.{table}")
            c.execute("RELEASE legacy")
        except sqlite3.DatabaseError as exc:
            c.execute("ROLLBACK TO legacy")
            c.execute("RELEASE legacy")
            log.warning("%s was not taken into the session database: it is not one this repoctx reads (%s)",
                        LEGACY_FILE, exc)

    def close(self) -> None:
        self.conn.close()

    # --- writes (each one short transaction) ---------------------------------

    def _write(self, statements: list[tuple[str, tuple]]) -> None:
        c = self.conn
        try:
            c.execute("BEGIN IMMEDIATE")
            try:
                for sql, args in statements:
                    c.execute(sql, args)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"The session database ({_shown(self.path)}): {exc}") from None

    def start_session(self, session_id: str, now: str) -> None:
        self._write([(
            "INSERT INTO sessions (id, started_at, last_activity_at, status) VALUES (?, ?, ?, 'active')",
            (session_id, now, now),
        )])

    def end_session(self, session_id: str, status: str, ended_at: str) -> None:
        self._write([(
            "UPDATE sessions SET status = ?, ended_at = ? WHERE id = ? AND status = 'active'",
            (status, ended_at, session_id),
        )])

    def expire_idle(self, before: str) -> None:
        """Mark sessions idle since before `before` as expired (their server is gone or quiet)."""
        self._write([(
            "UPDATE sessions SET status = 'expired', ended_at = last_activity_at "
            "WHERE status = 'active' AND last_activity_at < ?",
            (before,),
        )])

    def record_call(self, session_id: str, now: str, paths: list[str], topics: list[str]) -> None:
        statements: list[tuple[str, tuple]] = [(
            "UPDATE sessions SET tool_calls = tool_calls + 1, last_activity_at = ? WHERE id = ?",
            (now, session_id),
        )]
        for path in paths:
            statements.append((
                "INSERT INTO files_accessed (session_id, path, access_count, last_accessed_at) VALUES (?, ?, 1, ?) "
                "ON CONFLICT (session_id, path) DO UPDATE SET access_count = access_count + 1, "
                "last_accessed_at = excluded.last_accessed_at",
                (session_id, path, now),
            ))
        for topic in topics:
            statements.append((
                "INSERT OR IGNORE INTO topics (session_id, topic, first_seen_at) VALUES (?, ?, ?)",
                (session_id, topic, now),
            ))
        self._write(statements)

    def add_discovery(self, session_id: str, module: str, type_: str, content: str, solution: str, now: str) -> None:
        self._write([(
            "INSERT INTO discoveries (session_id, module, type, content, solution, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, module, type_, content, solution, now),
        )])

    # --- reads ----------------------------------------------------------------

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        try:
            return self.conn.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"The session database ({_shown(self.path)}): {exc}") from None

    _SUMMARY = (
        "SELECT s.id, s.started_at, s.last_activity_at, s.ended_at, s.status, s.tool_calls, "
        "(SELECT count(*) FROM files_accessed f WHERE f.session_id = s.id), "
        "(SELECT count(*) FROM discoveries d WHERE d.session_id = s.id) FROM sessions s "
    )

    def _rows(self, where: str, args: tuple) -> list[SessionRow]:
        rows = [SessionRow(*r) for r in self._read(self._SUMMARY + where, args)]
        for row in rows:
            row.topics = tuple(t for (t,) in self._read(
                "SELECT topic FROM topics WHERE session_id = ? ORDER BY first_seen_at, rowid", (row.id,)))
        return rows

    def recent(self, limit: int) -> list[SessionRow]:
        return self._rows("ORDER BY s.started_at DESC, s.rowid DESC LIMIT ?", (limit,))

    def session(self, session_id: str) -> SessionRow | None:
        rows = self._rows("WHERE s.id = ?", (session_id,))
        return rows[0] if rows else None

    def ids_with_prefix(self, prefix: str) -> list[str]:
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [i for (i,) in self._read("SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (escaped + "%",))]

    def files(self, session_id: str, limit: int | None = None) -> list[tuple[str, int, str]]:
        """(path, access count, last access), most accessed first."""
        return self._read(
            "SELECT path, access_count, last_accessed_at FROM files_accessed WHERE session_id = ? "
            "ORDER BY access_count DESC, last_accessed_at DESC, path LIMIT ?",
            (session_id, -1 if limit is None else limit),
        )

    def discoveries(self, session_id: str) -> list[tuple[str, str, str, str, str]]:
        """(module, type, content, solution, created_at) in the order they were made."""
        return self._read(
            "SELECT module, type, content, solution, created_at FROM discoveries WHERE session_id = ? ORDER BY id",
            (session_id,),
        )


def _connect(path: str, mode: str) -> sqlite3.Connection:
    # Autocommit at the driver level; every write is an explicit BEGIN IMMEDIATE … COMMIT.
    return sqlite3.connect(f"file:{_quote_path(path)}?mode={mode}", timeout=BUSY_TIMEOUT_MS / 1000, uri=True,
                           check_same_thread=False, isolation_level=None)


def _legacy_copy(root: str, path: str) -> str | None:
    """A private copy of `root`'s `.repoctx/sessions.db` (with its -wal) beside `path`, read
    through the confined layer; None when there is none to take."""
    try:
        data = fs.read_bytes(root, LEGACY_FILE, MAX_LEGACY_BYTES)
        try:
            wal = fs.read_bytes(root, LEGACY_FILE + "-wal", MAX_LEGACY_BYTES)
        except FileNotFoundError:  # none, or checkpointed into the file by its last closer
            wal = b""
    except FileNotFoundError:
        return None
    except OSError as exc:  # a link out, too big, unreadable
        log.warning("%s was not taken into the session database (%s)", LEGACY_FILE, exc.strerror or exc)
        return None
    if not data.startswith(SQLITE_MAGIC):
        log.warning("%s was not taken into the session database: it is not an SQLite database", LEGACY_FILE)
        return None
    copy = f"{path}.legacy-{os.getpid()}-{os.urandom(4).hex()}"  # each opener its own
    for suffix, content in (("", data), ("-wal", wal)):
        if content:
            with open(copy + suffix, "wb") as f:
                f.write(content)
    return copy


def _drop_copy(conn: sqlite3.Connection, copy: str) -> None:
    try:
        conn.execute("DETACH legacy")
    except sqlite3.DatabaseError:
        pass  # never attached
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(copy + suffix)
        except FileNotFoundError:
            pass


def _quote_path(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")
