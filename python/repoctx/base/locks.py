"""The one write lock of the files under a directory: an exclusive flock on the directory
itself, so no lock file is made and none can be a link. It goes when the block ends or the
process dies, and a thread that holds it may take it again. workspace.locked adds finishing
a multi-file write a killed process left; this module needs nothing of the journal, so the
writers the journal itself uses (local_state) can take the lock too."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from repoctx.base import fs

_held = threading.local()  # the directories this thread holds the lock of


@contextmanager
def exclusive(directory: str) -> Iterator[bool]:
    """Hold the lock of `directory`; yields True when this call took it, False when this
    thread held it already."""
    import fcntl  # POSIX only: imported where a lock is taken, so this module imports anywhere

    held = _held.__dict__.setdefault("dirs", set())
    if directory in held:
        yield False
        return
    fd = fs.open_dir(*fs.split(directory))  # beneath its root: a cache root linked out is refused
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.add(directory)
        yield True
    finally:
        held.discard(directory)
        os.close(fd)
