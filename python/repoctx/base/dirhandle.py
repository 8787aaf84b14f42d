"""A directory of a repository opened beneath its root through the confined layer (base/fs),
and the operations on single names in it that the journal and the caches need: they never
leave it.

POSIX: a descriptor of the directory, every call relative to it (`dir_fd=`), a final link never
followed (O_NOFOLLOW), the directory synced after a change. Windows has neither `dir_fd=` nor
O_NOFOLLOW: the directory is checked by the confined layer when it is opened (a link or junction
leading out is refused) and named by its path, and a name is opened only when its lstat shows a
regular file (or nothing, to create it); a directory cannot be synced there."""

from __future__ import annotations

import errno
import os
import stat
import sys

from repoctx.base import fs


def _regular_or_absent(st: os.stat_result | None, name: str) -> None:
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OSError(errno.ELOOP, "not a regular file", name)


if sys.platform == "win32":

    class Dir:
        def __init__(self, root: str, rel: str) -> None:
            st = fs.stat(root, rel)  # a link out on the way raises LinkRefused
            if st is None:
                raise FileNotFoundError(errno.ENOENT, "no such directory", rel)
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", rel)
            self.path = os.path.join(root, rel)

        def _at(self, name: str) -> str:
            return os.path.join(self.path, name)

        def open(self, name: str, flags: int, mode: int = 0o666) -> int:
            _regular_or_absent(self.lstat_or_none(name), name)
            return os.open(self._at(name), flags | os.O_BINARY | os.O_NOINHERIT, mode)

        def lstat_or_none(self, name: str) -> os.stat_result | None:
            try:
                return os.lstat(self._at(name))
            except FileNotFoundError:
                return None

        def read_open(self, name: str) -> int:
            """Open a regular file for reading: a link, junction or anything else is refused."""
            st = os.lstat(self._at(name))
            _regular_or_absent(st, name)
            fd = os.open(self._at(name), os.O_RDONLY | os.O_BINARY | os.O_NOINHERIT)
            opened = os.fstat(fd)
            if (opened.st_ino, opened.st_dev) != (st.st_ino, st.st_dev):
                os.close(fd)
                raise OSError(errno.ELOOP, "changed while it was opened", name)
            return fd

        def sub(self, name: str) -> Dir:
            """The directory `name` in this one (a link or junction there is refused)."""
            if not stat.S_ISDIR(os.lstat(self._at(name)).st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", name)
            return Dir.at_path(self._at(name))

        @classmethod
        def at_path(cls, path: str) -> Dir:
            d = cls.__new__(cls)
            d.path = path
            return d

        def own_stat(self) -> os.stat_result:
            return os.stat(self.path)

        def listdir(self) -> list[str]:
            return os.listdir(self.path)

        def scandir(self) -> list[os.DirEntry[str]]:
            with os.scandir(self.path) as it:
                return list(it)

        def descriptor(self) -> int | None:
            return None  # none on Windows: the directory is named by its path

        def keep_mode(self, fd: int, target: str) -> None:
            pass  # no POSIX mode bits to keep

        def mkdir(self, name: str) -> None:
            os.mkdir(self._at(name))

        def replace(self, src: str, dst: str) -> None:
            os.replace(self._at(src), self._at(dst))

        def unlink(self, name: str) -> None:
            os.unlink(self._at(name))

        def rmdir(self, name: str) -> None:
            os.rmdir(self._at(name))

        def sync(self) -> None:
            pass  # a directory cannot be opened to sync it

        def close(self) -> None:
            pass

else:

    class Dir:
        def __init__(self, root: str, rel: str) -> None:
            self.fd = fs.open_dir(root, rel)

        def open(self, name: str, flags: int, mode: int = 0o666) -> int:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=self.fd)

        def lstat_or_none(self, name: str) -> os.stat_result | None:
            try:
                return os.lstat(name, dir_fd=self.fd)
            except FileNotFoundError:
                return None

        def read_open(self, name: str) -> int:
            """Open a file for reading: never through a final link, never waiting on a FIFO."""
            return self.open(name, os.O_RDONLY | os.O_NONBLOCK)

        def sub(self, name: str) -> Dir:
            """The directory `name` in this one, by handle (a link there is refused)."""
            d = Dir.__new__(Dir)
            d.fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
            return d

        def own_stat(self) -> os.stat_result:
            return os.fstat(self.fd)

        def listdir(self) -> list[str]:
            return os.listdir(self.fd)

        def scandir(self) -> list[os.DirEntry[str]]:
            with os.scandir(self.fd) as it:
                return list(it)  # type: ignore[arg-type, unused-ignore]  # entries of a descriptor are named by str

        def descriptor(self) -> int | None:
            return self.fd

        def keep_mode(self, fd: int, target: str) -> None:
            """Give the file open on `fd` the mode of the regular file `target`, if there is one."""
            st = self.lstat_or_none(target)
            if st is not None and stat.S_ISREG(st.st_mode):
                os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o777)

        def mkdir(self, name: str) -> None:
            os.mkdir(name, dir_fd=self.fd)

        def replace(self, src: str, dst: str) -> None:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

        def unlink(self, name: str) -> None:
            os.unlink(name, dir_fd=self.fd)

        def rmdir(self, name: str) -> None:
            os.rmdir(name, dir_fd=self.fd)

        def sync(self) -> None:
            os.fsync(self.fd)

        def close(self) -> None:
            os.close(self.fd)
