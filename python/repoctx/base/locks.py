"""The one write lock of the files under a directory. It goes when the block ends or the
process dies, and a thread that holds it may take it again. workspace.locked adds finishing
a multi-file write a killed process left; this module needs nothing of the journal, so the
writers the journal itself uses (local_state) can take the lock too.

POSIX: an exclusive flock on the directory itself, so no lock file is made and none can be a
link. Windows cannot open a directory as a file: there it is a byte-range lock (LockFileEx,
through msvcrt.locking) on a file of the user's temporary directory named by the directory's
real path (`lock_file`), so nothing is made in the repository for `git status` to show and a
hostile repository has no name to plant a link under; the directory itself is checked through
the confined layer first (a link or junction leading out is refused)."""

from __future__ import annotations

import errno
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from repoctx.base import fs
from repoctx.base.root_name import root_name

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


def lock_file(directory: str) -> str:
    """The file Windows locks for `directory`: one per directory however it is spelled (its
    real path, case folded as NTFS folds it), in the temporary directory every process of the
    user shares, outside the repository."""
    import tempfile  # here, not at the top: Windows only, and a prompt hook's start pays for each import

    return os.path.join(tempfile.gettempdir(), "repoctx-locks", f"{root_name(directory)}.lock")


if sys.platform == "win32":
    import msvcrt
    import stat
    import time

    def _take(root: str, rel: str) -> int:
        """A descriptor of the directory's lock file, locked; it blocks until it is free."""
        st = fs.stat(root, rel)  # a link out on the way raises LinkRefused
        if st is None:
            raise FileNotFoundError(errno.ENOENT, "no such directory", rel)
        if not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", rel)
        path = lock_file(os.path.join(root, rel))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # Never deleted: a process may be about to lock it (and an open file cannot be deleted).
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_BINARY | os.O_NOINHERIT, 0o600)
        try:
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
