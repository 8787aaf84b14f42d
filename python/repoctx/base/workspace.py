"""The repository being served, and the only place user-supplied paths become
filesystem paths.

Every scope, cache name, artifact path or `path` override goes through here:
backslashes become slashes, NUL bytes and escapes (`..`, absolute paths
elsewhere, symlinks leading out) are refused, and what stays inside the root
is normalised.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple, TypeGuard, TypeVar

from repoctx import _core
from repoctx.base import fs, locks
from repoctx.base.errors import RepoctxError

CONFIG_FILE = ".context.config.yaml"
DEFAULT_MAX_DEPTH = 10
DEFAULT_MIN_TOKENS = 4096
# Test data is not code a person needs context for: directories with these names are no
# scopes (ruff's resources/test/fixtures alone made 35) unless `include_fixtures: true`.
# Some names mean test data anywhere; others only inside a test directory (a `snapshots`
# package elsewhere may be real code).
FIXTURE_DIRS = ("__fixtures__", "__snapshots__", "testdata", "test_data")
TEST_DIRS = ("test", "tests", "__tests__", "spec")
FIXTURE_DIRS_IN_TESTS = ("fixtures", "snapshots", "golden")
FIXTURE_IGNORE = tuple(f"{name}/" for name in FIXTURE_DIRS) + tuple(
    f"**/{test}/**/{name}/" for test in TEST_DIRS for name in FIXTURE_DIRS_IN_TESTS)


class PathEscape(RepoctxError):
    """A user-supplied path leads outside the root (or cannot name a path at all)."""


class RootNotAllowed(RepoctxError):
    pass


# Named tuples, not dataclasses: `dataclasses` imports `inspect` (~10 ms of CPU), and the prompt
# hook starts its build with these before anything else is imported.
class ScanConfig(NamedTuple):
    ignore: tuple[str, ...] = FIXTURE_IGNORE
    max_depth: int = DEFAULT_MAX_DEPTH
    min_tokens: int = DEFAULT_MIN_TOKENS


def _is_git_dir(name: str) -> bool:
    """Whether a name opens git's directory on some OS: `.git` in any case (APFS and NTFS
    ignore case), with the trailing dots and spaces Windows drops, or its 8.3 name GIT~1."""
    return name.lower().rstrip(". ") in (".git", "git~1")


class Workspace(NamedTuple):
    root: str
    allowed_roots: tuple[str, ...] = ()
    read_only: bool = False
    # The server's allowlist (`serve --tools`, `--profile`); None: from .repoctx/config.yaml or the default.
    tools: tuple[str, ...] | None = None
    profile: str | None = None
    names: str | None = None  # how tools are listed (`serve --names`); None: from the config
    # Directory of context-engine caches (`--cache-root`, $CONTEXT_CACHE_ROOT); None: <root>/.repoctx/caches.
    cache_root: str | None = None
    root_reason: str = "given"  # why this directory is the root (base/rootfind.py), for self report

    @classmethod
    def open(
        cls, root: str | os.PathLike[str], allowed_roots: Iterable[str | os.PathLike[str]] = (),
        read_only: bool = False,
        tools: tuple[str, ...] | None = None, profile: str | None = None, names: str | None = None,
        cache_root: str | os.PathLike[str] | None = None, root_reason: str = "given",
    ) -> Workspace:
        real = os.path.realpath(root)
        fs.confine(real)  # absolute paths under it go through the layer confined to it
        return cls(
            root=real,
            allowed_roots=tuple(os.path.realpath(r) for r in allowed_roots),
            read_only=read_only,
            tools=tools,
            profile=profile,
            names=names,
            cache_root=os.path.abspath(cache_root) if cache_root else None,
            root_reason=root_reason,
        )

    def with_path(self, override: str | None) -> Workspace:
        """The workspace for a `path` override: only the root itself or an allowed root."""
        if override is None:
            return self
        if "\x00" in override:
            raise RootNotAllowed("Path override contains a NUL byte")
        real = os.path.realpath(override.replace("\\", "/"))
        if real == self.root:
            return self
        if real in self.allowed_roots:
            fs.confine(real)
            return self._replace(root=real)
        raise RootNotAllowed(
            f'Root "{override}" is not allowed; start the server with --allow-root {override} to serve it'
        )

    def resolve(self, user_path: str) -> tuple[str, str]:
        """(normalised relative path, absolute path) for a path inside the root.

        `.` and the root itself normalise to `.`; anything that leaves the
        root lexically or through a symlink, or names something in a `.git`
        directory, raises PathEscape.
        """
        if not isinstance(user_path, str) or "\x00" in user_path:
            raise PathEscape(user_path)
        posix = user_path.replace("\\", "/")
        candidate = os.path.normpath(os.path.join(self.root, posix))
        if not _inside(candidate, self.root):
            raise PathEscape(user_path)
        if not _inside(realpath(candidate), self.root):
            raise PathEscape(user_path)
        # candidate is normalised and inside the root: the rest of it is the relative path
        rel = "." if candidate == self.root else candidate[len(self.root.rstrip(os.sep)) + 1:].replace(os.sep, "/")
        if any(_is_git_dir(name) for name in rel.split("/")):  # git's own files (config, hooks, objects) are never served or written
            raise PathEscape(user_path)
        return rel, candidate

    def contains_real(self, path: str) -> bool:
        """Whether `path`, with every symlink resolved, stays inside the root."""
        return _inside(realpath(path), self.root)

    def scan_config(self) -> ScanConfig:
        """The scan settings of `.context.config.yaml`, read leniently: a field
        with the wrong type is left at its default rather than voiding the file."""
        try:
            data = load_yaml_file(os.path.join(self.root, CONFIG_FILE))
        except RepoctxError:  # bounded.YamlError: the advice after a command names it
            data = None
        if not isinstance(data, dict):
            return ScanConfig()
        # Imported once such a file is read: it brings msgspec, which a tree without one (the
        # prompt hook's walk, started before the rest is imported) does without.
        from repoctx.formats import bounded

        ignore = data.get("ignore")
        max_depth = data.get("max_depth")
        min_tokens = data.get("min_tokens")
        # The defaults first: the file's own patterns, negations included, come after and win.
        fixtures = () if data.get("include_fixtures") is True else FIXTURE_IGNORE
        return ScanConfig(
            ignore=fixtures + (tuple(p for p in ignore if bounded.is_setting(p)) if isinstance(ignore, list) else ()),
            max_depth=max_depth if _is_int(max_depth) and max_depth >= 1 else DEFAULT_MAX_DEPTH,
            min_tokens=min_tokens if _is_int(min_tokens) else DEFAULT_MIN_TOKENS,
        )


def realpath(path: str) -> str:
    """os.path.realpath, taken from the core's realpath(3) when every component resolves
    (the common case, ~10× faster: every request passes here), else from Python, whose
    lenient walk also covers missing components and loops."""
    real = _core.real_path(path)
    return real if real is not None else os.path.realpath(path)


def _is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def load_yaml_file(path: str, max_bytes: int = 1 << 20) -> object:
    """A small YAML file's data; None when absent or unreadable, bounded.YamlError when refused."""
    try:
        raw = fs.read_bytes(*fs.split(path), max_bytes)
    except OSError:  # absent, over the cap, not a file, or a link that leads out
        return None
    from repoctx.formats import bounded

    return bounded.yaml(raw)


def atomic_write(path: str, data: bytes) -> None:
    """Replace `path` with `data` so a reader or a crash sees the old or the new file, never
    half; through the confined layer (fs.write_atomic), so never through a link out of the root."""
    fs.write_atomic(*fs.split(path), data)


# File times are coarse (a clock tick of a few ms, 2 s on FAT): two writes of the same size
# within one tick can leave the same stat. Like git's index, what was read from a file modified
# this recently is not reused on the strength of its stat: the core's one window.
RACY_NS = _core.RACY_NS


def is_racy(mtime_ns: int) -> bool:
    """Whether a file with this mtime may still be rewritten without its stat changing."""
    return mtime_ns >= time.time_ns() - RACY_NS


def stat_key(st: os.stat_result) -> tuple[object, ...]:
    """A key for what was read from a file: equal keys, the file is unchanged. A file written
    in the last seconds (is_racy) gets a key equal to no other, so it is read again."""
    key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
    return (*key, object()) if is_racy(st.st_mtime_ns) else key


_reading: ContextVar[dict[tuple[object, ...], Any] | None] = ContextVar("reading", default=None)


@contextmanager
def one_reading() -> Iterator[None]:
    """Within the block, each `read_once` reads once: for a command that asks many questions
    of one state of the repository (the report asks one per task), so that each question does
    not read it all again (a stat per file: quadratic in the files)."""
    token = _reading.set({})
    try:
        yield
    finally:
        _reading.reset(token)


T = TypeVar("T")


def read_once(key: tuple[object, ...], read: Callable[[], T]) -> T:
    """`read()`, or inside `one_reading()` what it gave for `key` the first time."""
    memo = _reading.get()
    if memo is None:
        return read()
    if key not in memo:
        memo[key] = read()
    found: T = memo[key]
    return found


# A link that leads out of the root (or stands where a lock file goes) is not followed: the
# command fails with invalid_path naming it (results.internal_failure), not as a bug.
LinkRefused = fs.LinkRefused


@contextmanager
def locked(directory: str) -> Iterator[None]:
    """Hold the one write lock of the files under `directory` (base/locks.py), which every
    writer of them takes: the repository root for every repository file (context files,
    `.repoctx/`, `.contextia/`, client configs), a cache root for its caches.

    Taking it first finishes or rolls back a multi-file write a killed process left
    (journal.recover), so no writer works on a half-applied state."""
    from repoctx.base import journal  # (imported when first needed: see settle)

    with locks.exclusive(directory) as first:
        if first:
            journal.recover(directory)
        yield


def settle(root: str) -> None:
    """Before a command or an MCP request reads the repository: finish or roll back a
    multi-file write a killed process left, or wait for one under way. One stat when there is
    none."""
    # Imported here, not at the top: it brings the formats of every file a transaction writes,
    # which a reading command (a prompt hook on every prompt) would pay for at each start.
    from repoctx.base import journal

    if journal.pending(root):
        try:
            with locked(root):
                pass
        except OSError:
            pass  # left for the next writer, which reports why it cannot finish it
