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
file ends all old or all new, and no temporary file is left. The journal is removed last, once
every step is done: a step the filesystem refuses leaves it (and the staged files) for the
next command, never a half-applied change with no journal.

Every step goes through a directory handle opened beneath the root by the confined layer
(base/dirhandle.py, on each OS) and names a single entry in it: the temporary file and its rename stay in one
directory, and no link out of the root is ever followed. A repository could ship a journal of
its own, so the journal is read as untrusted: only the files a proposal may change and
proposal records are acted on, never inside `.git`.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager

import msgspec
from msgspec import Struct

from repoctx.base import fs, local_state
from repoctx.base.dirhandle import Dir
from repoctx.formats import bounded
from repoctx.formats.proposal import PROPOSALS_DIR, kind_of

STATE_DIR, NAME = ".repoctx", "journal"
JOURNAL = f"{STATE_DIR}/{NAME}"
MAX_JOURNAL_BYTES = 1 << 20
PREPARED, COMMITTED = b"P", b"C"
_RECORD = re.compile(re.escape(PROPOSALS_DIR) + r"/[0-9a-f]{12}\.json")


class Plan(Struct):
    files: list[tuple[str, bool]]  # (path relative to the root, True: written, False: removed)
    dirs: list[str]  # directories made for new files, parents first


def pending(root: str) -> bool:
    """Whether a transaction is under way or was left by a killed process: one lstat."""
    try:
        return fs.lstat(root, JOURNAL) is not None
    except OSError:  # `.repoctx` is not a directory, or leads out: no journal of ours
        return False


def commit(root: str, changes: list[tuple[str, bytes | None]]) -> None:
    """Write each (path relative to the root, content; None: remove the file) as one step.
    The caller holds the root's lock and has checked every path. A failure before the commit
    point rolls back and raises; after it, only the filesystem refusing a rename or removal in
    a directory it let us write can fail: Unfinished is raised, the journal kept, and the next
    command finishes the transaction."""
    plan = Plan([(rel, data is not None) for rel, data in changes], _missing_dirs(root, changes))
    files = _numbered(plan.files)
    local_state.makedirs(root, STATE_DIR)
    with _dir(root, STATE_DIR) as state:
        fd = state.open(NAME, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            try:
                _write_all(fd, PREPARED + b"\n" + msgspec.json.encode(plan) + b"\n")
                os.fsync(fd)
                state.sync()
                for rel in plan.dirs:
                    with _dir(root, posixpath.dirname(rel)) as parent:
                        parent.mkdir(posixpath.basename(rel))
                        parent.sync()
                for (n, rel, _written), (_rel, data) in zip(files, changes):
                    if data is not None:
                        with _dir(root, posixpath.dirname(rel)) as directory:
                            _stage(directory, _temp(n), posixpath.basename(rel), data)
                            directory.sync()
            except BaseException:
                _finish(root, files, plan.dirs, forward=False)
                raise
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, COMMITTED)  # the commit point
            try:
                os.fsync(fd)
            except OSError as exc:
                raise _unfinished(exc, "the change is committed but its journal could not be synced") from None
        finally:
            os.close(fd)
    _finish(root, files, plan.dirs, forward=True)


def recover(root: str) -> None:
    """Finish the transaction a killed process left under `root`, if any. Call with the lock held."""
    if not pending(root):
        return
    state, plan = _read(root)
    files = [(n, rel, written) for n, rel, written in _numbered(plan.files) if _acceptable(root, rel)]
    dirs = [d for d in plan.dirs if any(rel.startswith(d + "/") for _n, rel, _w in files)]
    # A journal that cannot be read was never complete: nothing was staged before it was.
    _finish(root, files, dirs, forward=state == COMMITTED)


def _numbered(files: list[tuple[str, bool]]) -> list[tuple[int, str, bool]]:
    """Each file with its place in the journal, which names its temporary file."""
    return [(n, rel, written) for n, (rel, written) in enumerate(files)]


class Unfinished(OSError):
    """A committed transaction that a refused step stopped: its journal and staged files stay,
    and the next command that takes the lock puts the rest in place."""


def _unfinished(exc: OSError, what: str) -> Unfinished:
    return Unfinished(exc.errno, f"{what} ({exc.strerror or exc}); the next command finishes it")


def _finish(root: str, files: list[tuple[int, str, bool]], dirs: list[str], forward: bool) -> None:
    """Roll the transaction forward (rename every temporary file still there, remove the files
    to remove) or back (remove temporary files and new directories); then drop the journal.
    The journal goes only once every step is done: a step the filesystem refuses (an I/O
    error, a full disk) stops here with the journal and the staged files left in place, and
    the next command that takes the lock (workspace.locked, workspace.settle) runs the rest."""
    for n, rel, written in files:
        name, temp = posixpath.basename(rel), _temp(n)
        try:
            with _dir(root, posixpath.dirname(rel)) as directory:
                if forward and written:
                    if _is_regular(directory, temp):  # gone: renamed before the kill
                        directory.replace(temp, name)
                elif forward:
                    _remove(directory, name)
                else:
                    _remove(directory, temp)
                directory.sync()
        except FileNotFoundError:
            pass  # its directory was never made (rolling back), or is gone
        except OSError as exc:
            if not forward:
                raise
            raise _unfinished(exc, f"the change is committed but {rel} could not be put in place") from None
    if not forward:
        for rel in reversed(dirs):
            try:
                with _dir(root, posixpath.dirname(rel)) as parent:
                    parent.rmdir(posixpath.basename(rel))
            except OSError:
                pass  # gone already, or not empty: someone else's now
    with _dir(root, STATE_DIR) as state:
        try:
            state.unlink(NAME)
        except OSError as exc:
            if not forward:
                raise
            raise _unfinished(exc, "the change is in place but its journal could not be removed") from None
        try:
            state.sync()
        except OSError:  # every file is in place and the journal gone: only its removal may not last,
            pass  # and a journal that comes back names files already renamed, which recovery passes over


def _read(root: str) -> tuple[bytes, Plan]:
    """(state byte, plan) of the journal; an unreadable one is a prepared one with no files."""
    try:
        with _dir(root, STATE_DIR) as state:
            fd = state.open(NAME, os.O_RDONLY)
            try:
                raw = os.read(fd, MAX_JOURNAL_BYTES + 1)
            finally:
                os.close(fd)
        if raw[1:2] == b"\n" and len(raw) <= MAX_JOURNAL_BYTES:
            return raw[:1], bounded.json(raw[2:], type=Plan)
    except (OSError, msgspec.DecodeError):
        pass
    return PREPARED, Plan([], [])


def _acceptable(root: str, rel: str) -> bool:
    """Whether a journal's path names a file a transaction may change: a context file or a
    proposal record, normalised, not in `.git`, in a directory inside the root."""
    if not rel or "\x00" in rel or posixpath.normpath(rel) != rel or rel.startswith(("/", "../")):
        return False
    if ".git" in rel.split("/") or (kind_of(rel) is None and not _RECORD.fullmatch(rel)):
        return False
    try:
        with _dir(root, posixpath.dirname(rel)):
            return True
    except FileNotFoundError:
        return True  # a directory the transaction makes, not made yet
    except OSError:  # a link out of the root, or not a directory
        return False


@contextmanager
def _dir(root: str, rel: str) -> Iterator[Dir]:
    """A handle of the directory `rel` (the root for ""), opened beneath the root."""
    directory = Dir(root, rel or ".")
    try:
        yield directory
    finally:
        directory.close()


def _temp(n: int) -> str:
    return f".repoctx-txn-{n}.tmp"


def _missing_dirs(root: str, changes: list[tuple[str, bytes | None]]) -> list[str]:
    """Directories to make for the new files, parents first."""
    out: list[str] = []
    for rel, data in changes:
        parent = posixpath.dirname(rel)
        chain = []
        while parent and fs.lstat(root, parent) is None:
            chain.append(parent)
            parent = posixpath.dirname(parent)
        if data is not None:
            out += [d for d in reversed(chain) if d not in out]
    return out


def _stage(directory: Dir, name: str, target: str, data: bytes) -> None:
    """Write `data` to the temporary file `name` with the mode of the file it will replace,
    else 0666 less the umask: context files are shared, never left 0600."""
    fd = directory.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        directory.keep_mode(fd, target)
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _is_regular(directory: Dir, name: str) -> bool:
    try:
        st = directory.lstat_or_none(name)
    except OSError:
        return False
    return st is not None and stat.S_ISREG(st.st_mode)


def _remove(directory: Dir, name: str) -> None:
    try:
        directory.unlink(name)
    except FileNotFoundError:
        pass
