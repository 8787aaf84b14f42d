"""The one write lock of the files under a directory. It goes when the block ends or the
process dies, and a thread that holds it may take it again. workspace.locked adds finishing
a multi-file write a killed process left; this module needs nothing of the journal, so the
writers the journal itself uses (local_state) can take the lock too.

POSIX: an exclusive flock on the directory itself, so no lock file is made and none can be a
link. Windows cannot open a directory as a file: there it is a byte-range lock (LockFileEx,
through msvcrt.locking) on `.repoctx.lock` in the directory, a regular file made through the
confined layer (a link planted under that name is refused, never followed)."""

from __future__ import annotations

import errno
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from repoctx.base import fs

LOCK_FILE = ".repoctx.lock"  # Windows only

_held = threading.local()  # the directories this thread holds the lock of


@contextmanager
def exclusive(directory: str) -> Iterator[bool]:
    """Hold the lock of `directory`; yields True when this call took it, False when this
    thread held it already."""
    held = _held.__dict__.setdefault("dirs", set())
    if directory in held:
        yield False
        return
    fd = _take(*fs.split(directory))  # beneath its root: a cache root linked out is refused
    try:
        held.add(directory)
        yield True
    finally:
        held.discard(directory)
        os.close(fd)  # closing the descriptor drops the lock


if sys.platform == "win32":
    import msvcrt
    import stat
    import time

    def _take(root: str, rel: str) -> int:
        """A descriptor of the directory's lock file, locked; it blocks until it is free."""
        name = os.path.join(rel, LOCK_FILE)
        st = fs.lstat(root, name)
        if st is None:
            try:
                fs.write_atomic(root, name, b"")
            except OSError:
                pass  # another process made it first (and may hold it open: no replacing it)
            st = fs.lstat(root, name)
        if st is None or not stat.S_ISREG(st.st_mode):
            raise fs.LinkRefused(errno.ELOOP, f"{name} is not a regular file", name)
        fd = os.open(os.path.join(root, name), os.O_RDWR | os.O_BINARY | os.O_NOINHERIT)
        try:
            if (os.fstat(fd).st_ino, os.fstat(fd).st_dev) != (st.st_ino, st.st_dev):
                raise fs.LinkRefused(errno.ELOOP, f"{name} changed while it was opened", name)
            while True:
                try:
                    msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises
                    return fd
                except OSError:
                    time.sleep(0.05)
        except BaseException:
            os.close(fd)
            raise

else:
    import fcntl

    def _take(root: str, rel: str) -> int:
        """A descriptor of the directory, flocked; it blocks until the lock is free."""
        fd = fs.open_dir(root, rel)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd
