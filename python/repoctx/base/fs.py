"""The one way repoctx touches a repository's files (the core's rust/tree/fs.rs).

Each function takes the workspace root and a path relative to it, and opens that path
beneath a directory handle of the root: a link inside the root that stays inside is
followed, one that leads out is never followed, for reading or writing (LinkRefused, an
OSError whose strerror names the link), and a checked path is never looked up by name
again. Errors are OSErrors with their errno (FileNotFoundError, …); a file over the read
cap is EFBIG, a directory, FIFO or device where a file is read is EISDIR / EINVAL.

`split` maps an absolute path under a workspace root to (root, relative path), so code
that still holds absolute paths (workspace.atomic_write, workspace.locked) goes through
here too. A path under no root (a client's config in the home directory) is the person's
choice: its links are followed, and it is then written inside its real directory.
"""

from __future__ import annotations

import os
import threading
from stat import S_ISDIR, S_ISREG

from repoctx import _core

LinkRefused = _core.LinkRefused
# What a read takes when the caller names no cap: more than any file repoctx parses.
MAX_READ = 16 << 20

# Replaced whole, never changed in place, so `split` can read it without a lock.
_roots: tuple[str, ...] = ()
_roots_lock = threading.Lock()


def confine(root: str) -> None:
    """Make `root` (absolute, normalised) a root that `split` confines paths to."""
    global _roots
    if root not in _roots:
        with _roots_lock:
            if root not in _roots:
                _roots = (*_roots, root)


def split(path: str | os.PathLike[str]) -> tuple[str, str]:
    """(root, relative path) of an absolute path: the innermost workspace root that holds it
    lexically; else (a path a person gave outside any repository) its real path's directory."""
    path = os.path.normpath(os.path.abspath(path))
    best = ""
    for root in _roots:
        if len(root) > len(best) and (path == root or path.startswith(root.rstrip(os.sep) + os.sep)):
            best = root
    if best:
        return best, os.path.relpath(path, best)
    real = os.path.realpath(path)  # the person's own path: its links are followed
    return os.path.dirname(real), os.path.basename(real)


def read_bytes(root: str, rel: str, max_bytes: int = MAX_READ) -> bytes:
    """A regular file's bytes; OSError(EFBIG) when it holds more than `max_bytes`."""
    return _core.fs_read(root, rel, max_bytes)


def read_text(root: str, rel: str, max_bytes: int = MAX_READ) -> str:
    return read_bytes(root, rel, max_bytes).decode("utf-8", "replace")


def read_head(root: str, rel: str, n: int) -> bytes:
    """The first `n` bytes of a regular file (all of it when shorter)."""
    return _core.fs_read_head(root, rel, n)


def write_atomic(root: str, rel: str, data: bytes) -> None:
    """Replace the file with `data` (a temporary file renamed over it in the same directory
    handle, both synced): a reader or a crash sees the old or the new file, never half. It
    keeps the mode of the file it replaces; a new one gets 0666 less the umask."""
    _core.fs_write(root, rel, data)


def makedirs(root: str, rel: str) -> None:
    """Make the directory and its missing parents."""
    _core.fs_makedirs(root, rel)


def open_dir(root: str, rel: str) -> int:
    """A descriptor of the directory (the caller closes it), for `dir_fd=` operations on
    single names in it, which never leave it."""
    return _core.fs_open_dir(root, rel)


def scandir(root: str, rel: str) -> list[_core.DirEntry]:
    """The entries (name, kind) of a directory, unsorted; kind is "f" file, "d" directory,
    "l" link or "o" other, as the directory records it (links not followed)."""
    return _core.fs_list(root, rel)


def listdir(root: str, rel: str) -> list[str]:
    return [entry.name for entry in _core.fs_list(root, rel)]


def _stat_result(st: _core.Stat | None) -> os.stat_result | None:
    if st is None:
        return None
    a, m, c = st.atime_ns, st.mtime_ns, st.ctime_ns
    # The sequence os.stat_result is built from: its ten fields, then the float and ns times.
    return os.stat_result((st.mode, st.ino, st.dev, st.nlink, st.uid, st.gid, st.size, a // 10**9, m // 10**9,
                           c // 10**9, a / 1e9, m / 1e9, c / 1e9, a, m, c))


def lstat(root: str, rel: str) -> os.stat_result | None:
    """The stat of the path itself (a final link not followed); None when it does not exist."""
    return _stat_result(_core.fs_stat(root, rel, False))


def stat(root: str, rel: str) -> os.stat_result | None:
    """The stat of what the path names, a link inside the root followed; None when absent."""
    return _stat_result(_core.fs_stat(root, rel, True))


def is_file(root: str, rel: str) -> bool:
    """Whether the path names a regular file (a link inside the root followed)."""
    st = stat(root, rel)
    return st is not None and S_ISREG(st.st_mode)


def is_dir(root: str, rel: str) -> bool:
    """Whether the path names a directory (a link inside the root followed)."""
    st = stat(root, rel)
    return st is not None and S_ISDIR(st.st_mode)


def remove(root: str, rel: str) -> None:
    """Remove a file or link (never what a link points to)."""
    _core.fs_remove(root, rel)


def remove_tree(root: str, rel: str) -> None:
    """Remove a directory and all it holds; links in it are removed, not followed."""
    _core.fs_remove_tree(root, rel)


def rename(root: str, src: str, dst: str) -> None:
    """Rename (a link at either end is moved or replaced, not followed), then sync."""
    _core.fs_rename(root, src, dst)


def exchange(root: str, a: str, b: str) -> None:
    """Swap two entries atomically (renameat2), then sync; OSError where the platform cannot."""
    _core.fs_exchange(root, a, b)
