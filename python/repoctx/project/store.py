"""The session database, `.repoctx/sessions.db` (stdlib sqlite3).

WAL mode and a busy timeout let several servers on one repository write at
once. The file is stamped with an application id and a schema version
(`PRAGMA user_version`) that migrations move forward inside one immediate
transaction, so two servers opening a new database migrate it once. A file
that is not ours (another application's database, a newer schema, or not a
database at all) raises StoreError and is left exactly as it is.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass

from repoctx.base import fs
from repoctx.base.dirhandle import Dir
from repoctx.base.errors import RepoctxError

DB_FILE = ".repoctx/sessions.db"
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


def _problem(what: str) -> StoreError:
    return StoreError(f"{DB_FILE} {what}; it was left untouched (move it away to start a new session history)")


class Store:
    """One connection to the session database. Not shared between threads without `lock`."""

    def __init__(self, path: str, *, create: bool = True, read_only: bool = False) -> None:
        self.path = path
        root, rel = fs.split(path)
        _check_header(root, rel)
        # Its folder is opened once, beneath the root, and SQLite is given the file through that
        # handle: a `.repoctx` swapped for a link out after the check is not followed.
        try:
            self.dir = Dir(root, os.path.dirname(rel))
        except fs.LinkRefused as exc:
            raise StoreError(f"{DB_FILE} leads outside the repository ({exc.strerror})") from None
        try:
            self.conn = self._open(root, rel, create, read_only)
        except sqlite3.DatabaseError as exc:
            self.dir.close()
            raise _problem(f"is not a usable SQLite database ({exc})") from None
        except BaseException:
            self.dir.close()
            raise
        try:
            self._prepare(read_only)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise _problem(f"is not a usable SQLite database ({exc})") from None
        except StoreError:
            self.close()
            raise

    def _open(self, root: str, rel: str, create: bool, read_only: bool) -> sqlite3.Connection:
        name, directory = os.path.basename(rel), self.dir
        exists = directory.lstat_or_none(name) is not None
        if not exists and (read_only or not create):
            raise FileNotFoundError(self.path)
        if not exists:  # made here, beneath the handle; SQLite is never asked to make it
            os.close(directory.open(name, os.O_WRONLY | os.O_CREAT, 0o666))
        fd = directory.descriptor()  # SQLite opens by name: the handle's /proc name where there is one
        target = f"/proc/self/fd/{fd}/{name}" if fd is not None and os.path.isdir(f"/proc/self/fd/{fd}") else self.path
        if read_only:
            # With no -wal file no writer is active and the main file holds everything: reading it as
            # immutable creates no -shm/-wal beside it, so a read-only reader leaves no trace.
            immutable = "&immutable=1" if directory.lstat_or_none(name + "-wal") is None else ""
            conn = _connect("file:" + _quote_path(target) + "?mode=ro" + immutable, uri=True)
        else:
            conn = _connect("file:" + _quote_path(target) + "?mode=rw", uri=True)
        # SQLite resolves the path to a name, and opens its -wal and -shm by that name when it
        # first reads: read now, then check that the name is still the file of the handle.
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            opened = conn.execute("PRAGMA database_list").fetchone()[2]
            now = fs.stat(root, rel)  # None: gone (or swapped for a link out) since it was opened
            same = now is not None and os.path.samestat(os.stat(opened), now)
        except (OSError, TypeError):
            same = False
        except BaseException:
            conn.close()
            raise
        if not same:
            conn.close()
            raise StoreError(f"{DB_FILE} was moved while it was opened; not used")
        return conn

    def _prepare(self, read_only: bool) -> None:
        c = self.conn
        c.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        c.execute("PRAGMA foreign_keys = ON")
        version = self._identify()
        if read_only:
            if version != SCHEMA_VERSION:
                raise _problem(f"has schema version {version}; this repoctx reads version {SCHEMA_VERSION}")
            return
        if c.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            self._migrate()

    def _identify(self) -> int:
        """The schema version of our database; StoreError for anyone else's."""
        # One statement, one snapshot: another server's migration may commit between two reads.
        app_id, version, tables = self.conn.execute(
            "SELECT (SELECT application_id FROM pragma_application_id()), "
            "(SELECT user_version FROM pragma_user_version()), (SELECT count(*) FROM sqlite_master)"
        ).fetchone()
        if app_id == 0 and version == 0:
            if tables:
                raise _problem("belongs to another application (it has tables but no repoctx stamp)")
            return 0
        if app_id != APPLICATION_ID:
            raise _problem(f"belongs to another application (application id {app_id:#x})")
        if version > SCHEMA_VERSION:
            raise _problem(f"was written by a newer repoctx (schema version {version}, this one knows {SCHEMA_VERSION})")
        return version

    def _migrate(self) -> None:
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            version = self._identify()  # another server may have migrated while we waited
            for script in MIGRATIONS[version:]:
                for statement in filter(str.strip, script.split(";")):
                    c.execute(statement)
            c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()
        self.dir.close()

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
            raise StoreError(f"{DB_FILE}: {exc}") from None

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
            raise StoreError(f"{DB_FILE}: {exc}") from None

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


def _connect(target: str, uri: bool = False) -> sqlite3.Connection:
    # Autocommit at the driver level; every write is an explicit BEGIN IMMEDIATE … COMMIT.
    return sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, uri=uri, check_same_thread=False,
                           isolation_level=None)


def _check_header(root: str, rel: str) -> None:
    """Refuse a file that is not an SQLite database before sqlite3 touches it."""
    try:
        head = fs.read_head(root, rel, len(SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"{DB_FILE} cannot be read ({exc.strerror})") from None
    if head and head != SQLITE_MAGIC:
        raise _problem("is not an SQLite database")


def _quote_path(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")
