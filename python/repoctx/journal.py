"""Writes of several files that finish or roll back: a transaction with a journal.

`commit(root, changes)` changes several files of a repository as one step (`proposals apply`:
every file of the proposal and the proposal's own record). It runs under the repository's
lock (`workspace.locked`) and goes:

1. the journal `.repoctx/journal` is written and flushed, its first byte `P` (prepared): the
   files it will write or remove, the directories it will make for new files;
2. each new content goes to a temporary file beside its target, `.repoctx-txn-<n>.tmp`
   (n: the file's place in the journal), flushed;
3. the first byte becomes `C` (committed): one byte written in place, so a kill leaves P or C;
4. each temporary file is renamed over its target, each file to remove is removed, and the
   journal goes.

`recover(root)` finishes what a killed process left. `workspace.locked` runs it whenever the
lock is taken, so no writer ever works on a half-applied state, and `workspace.settle` before
every command and every MCP request reads anything (a stat of the journal when there is none).
A `P` journal is rolled back: its temporary files and new directories removed, no target was
touched. A `C` journal is rolled forward: each temporary file still there is renamed into
place (one that is gone was renamed already), each file to remove is removed. Either way every
file ends all old or all new, and no temporary file is left.

A repository could ship a journal of its own, so the journal is read as untrusted: only the
files a proposal may change and proposal records are acted on, never inside `.git`, never
through a link that leads out of the root.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat

import msgspec
from msgspec import Struct

from repoctx.formats.proposal import PROPOSALS_DIR, kind_of

JOURNAL = ".repoctx/journal"
MAX_JOURNAL_BYTES = 1 << 20
PREPARED, COMMITTED = b"P", b"C"
_RECORD = re.compile(re.escape(PROPOSALS_DIR) + r"/[0-9a-f]{12}\.json")


class Plan(Struct):
    files: list[tuple[str, bool]]  # (path relative to the root, True: written, False: removed)
    dirs: list[str]  # directories made for new files, parents first


def pending(root: str) -> bool:
    """Whether a transaction is under way or was left by a killed process: one lstat."""
    return os.path.lexists(os.path.join(root, JOURNAL))


def commit(root: str, changes: list[tuple[str, bytes | None]]) -> None:
    """Write each (path relative to the root, content; None: remove the file) as one step.
    The caller holds the root's lock and has checked every path (inside the root, through
    links too). A failure before the commit point rolls back and raises; after it, only the
    filesystem refusing a rename or removal in a directory it let us write can fail: that file
    is passed over and the refusal raised."""
    plan = Plan([(rel, data is not None) for rel, data in changes], _missing_dirs(root, changes))
    path = os.path.join(root, JOURNAL)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            _write_all(fd, PREPARED + b"\n" + msgspec.json.encode(plan) + b"\n")
            os.fsync(fd)
            _fsync_dir(os.path.dirname(path))
            for rel in plan.dirs:
                os.mkdir(os.path.join(root, rel))
            for n, (rel, data) in enumerate(changes):
                if data is not None:
                    _stage(_temp(root, rel, n), data)
            for parent in {os.path.dirname(os.path.join(root, rel)) for rel, data in changes if data is not None}:
                _fsync_dir(parent)
        except BaseException:
            _finish(root, plan, forward=False)
            raise
        os.pwrite(fd, COMMITTED, 0)  # the commit point
        os.fsync(fd)
    finally:
        os.close(fd)
    _finish(root, plan, forward=True)


def recover(root: str) -> None:
    """Finish the transaction a killed process left under `root`, if any. Call with the lock held."""
    path = os.path.join(root, JOURNAL)
    if not os.path.lexists(path) or not _inside(os.path.realpath(os.path.dirname(path)), root):
        return  # none, or `.repoctx` leads out: not ours to read or remove
    state, plan = _read(path)
    files = [(rel, written) for rel, written in plan.files if _acceptable(root, rel)]
    dirs = [d for d in plan.dirs if any(rel.startswith(d + "/") for rel, _ in files)]
    # A journal that cannot be read was never complete: nothing was staged before it was.
    _finish(root, Plan(files, dirs), forward=state == COMMITTED)


def _finish(root: str, plan: Plan, forward: bool) -> None:
    """Roll the transaction forward (rename every temporary file still there, remove the files
    to remove) or back (remove temporary files and new directories); then drop the journal.
    A file the filesystem refuses to change is passed over, its temporary file removed, and
    the first refusal raised at the end: a journal that can never finish must not stop every
    later write (a repository could ship one naming a directory)."""
    touched, refused = set(), None
    for n, (rel, written) in enumerate(plan.files):
        target = os.path.join(root, rel)
        temp = _temp(root, rel, n)
        try:
            if forward and written:
                if _is_regular(temp):  # gone: renamed before the kill
                    os.replace(temp, target)
            elif forward:
                _remove(target)
            else:
                _remove(temp)
        except OSError as exc:
            refused = refused or exc
            _remove(temp)
        touched.add(os.path.dirname(target))
    if not forward:
        for rel in reversed(plan.dirs):
            try:
                os.rmdir(os.path.join(root, rel))
            except OSError:
                pass  # gone already, or not empty: someone else's now
    for directory in touched:
        if os.path.isdir(directory):
            _fsync_dir(directory)
    os.unlink(os.path.join(root, JOURNAL))
    _fsync_dir(os.path.join(root, os.path.dirname(JOURNAL)))
    if refused is not None:
        raise refused


def _read(path: str) -> tuple[bytes, Plan]:
    """(state byte, plan) of a journal; an unreadable journal is a prepared one with no files."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            raw = os.read(fd, MAX_JOURNAL_BYTES + 1)
        finally:
            os.close(fd)
        state, newline, body = raw[:1], raw[1:2], raw[2:]
        if newline == b"\n" and len(raw) <= MAX_JOURNAL_BYTES:
            return state, msgspec.json.decode(body, type=Plan)
    except (OSError, msgspec.DecodeError):
        pass
    return PREPARED, Plan([], [])


def _acceptable(root: str, rel: str) -> bool:
    """Whether a journal's path names a file a transaction may change: a context file or a
    proposal record, normalised, inside the root through every link, not in `.git`."""
    if not rel or "\x00" in rel or posixpath.normpath(rel) != rel:
        return False
    if rel.startswith(("/", "../")) or ".git" in rel.split("/"):
        return False
    if kind_of(rel) is None and not _RECORD.fullmatch(rel):
        return False
    return _inside(os.path.realpath(os.path.dirname(os.path.join(root, rel))), root)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _temp(root: str, rel: str, n: int) -> str:
    return os.path.join(root, os.path.dirname(rel), f".repoctx-txn-{n}.tmp")


def _missing_dirs(root: str, changes: list[tuple[str, bytes | None]]) -> list[str]:
    """Directories to make for the new files, parents first."""
    out: list[str] = []
    for rel, data in changes:
        parent = posixpath.dirname(rel)
        chain = []
        while parent and not os.path.isdir(os.path.join(root, parent)):
            chain.append(parent)
            parent = posixpath.dirname(parent)
        if data is not None:
            out += [d for d in reversed(chain) if d not in out]
    return out


def _stage(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except (FileNotFoundError, NotADirectoryError):
        pass


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
