"""Where directory tables come from: a cold walk for the CLI, or, in a serving
process, a live index per root that follows file-system events (rust/tree/live.rs)
so a question costs the changes since the last one, not a walk of the tree.

A table is the core's `Table` (rows of `DirRow`, read by field name). A live index hands
back the same table while nothing changed, and after a change a new one that keeps the row
objects of the rows that did not: what was built from an older table need redo only the
rows whose `changed_at` is past its generation."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import NamedTuple

from repoctx import _core
from repoctx.base.workspace import ScanConfig, Workspace, read_once

DirRow = _core.DirRow
Table = _core.Table


class _Live:
    def __init__(self, index: _core.LiveIndex, config: ScanConfig, table: Table) -> None:
        self.index = index
        self.config = config
        self.table = table


class Indexes:
    """The live indexes of one serving process, one per root, made on first use."""

    def __init__(self, watch: bool) -> None:
        self.watch = watch
        self._lock = threading.Lock()
        self._by_root: dict[str, _Live] = {}

    def table(self, root: str, cfg: ScanConfig) -> Table:
        with self._lock:
            live = self._by_root.get(root)
            if live is None or live.config != cfg:
                index = _core.LiveIndex(root, list(cfg.ignore), cfg.max_depth, cfg.min_tokens, self.watch)
                live = self._by_root[root] = _Live(index, cfg, index.table())
                release_free_memory()
                return _warn_left_out(root, live.table)
            if live.index.refresh() != live.table.generation:
                # A new Table (a caller may still be reading the old one), made of the rows
                # that changed since and the old row objects of the others.
                live.table = _warn_left_out(root, live.index.table())
            return live.table


    def watching(self, root: str, cfg: ScanConfig) -> Watching:
        """Which watching keeps `root`'s table true; its index is made first if need be."""
        self.table(root, cfg)
        with self._lock:
            index = self._by_root[root].index
        return Watching(index.watching_by, index.watch_reason)


class Watching(NamedTuple):
    by: str  # "inotify", "fsevents", "windows" (the OS's events), "polling" (none to be had) or "none"
    reason: str


# The OS events a serving process follows here (rust/tree/watch.rs names the same).
OS_EVENTS = {"linux": "inotify", "darwin": "fsevents", "win32": "windows"}


def watching(ws: Workspace) -> Watching:
    """Which watching keeps the answers about `ws.root` true in a serving process, and why;
    outside one (a CLI command, whose --json equals the tool's answer), what `repoctx serve`
    uses on this OS."""
    if _live is None:
        by = OS_EVENTS.get(sys.platform)
        if by is None:
            return Watching("polling", "this OS gives the core no file-system events: every question reads the tree again")
        return Watching(by, f"{by} events keep the scan in memory true")  # as tree/live.rs says it
    try:
        return _live.watching(ws.root, ws.scan_config())
    except OSError as e:
        return Watching("none", f"the root cannot be scanned: {e.strerror or e}")


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, looked up in the process's own symbols on first use: not by
    `ctypes.util.find_library`, which runs `ldconfig -p` (0.2 s of a cold command's wall time
    under load, for every command that imported this module)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
        return trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def release_free_memory() -> None:
    """Hand the heap's free pages back to the system after bulk work (a cold scan, parsing
    thousands of files): glibc keeps them otherwise, and a long-lived server would carry
    the peak of its first question for the rest of its life."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_live: Indexes | None = None


def serve_live(watch: bool) -> Indexes:
    """Keep tables in memory for the rest of this process (called by `repoctx serve`, once)."""
    global _live
    if _live is None:
        _live = Indexes(watch)
    return _live


def serving() -> bool:
    """Whether this process keeps live tables (`repoctx serve`)."""
    return _live is not None


def scan(ws: Workspace, cfg: ScanConfig, keep_files: bool = False, count: _core.FileCount | None = None) -> Table:
    """The directory table of `ws.root` as the files are now; raises OSError when the root cannot be read.
    With `keep_files`, a cold walk keeps each directory's files as it listed them (`Table.files`),
    for the task index to take rather than list the tree again (so within one reading a walk
    that kept them is not the answer of one that did not), and tells `count` each directory's
    files as it lists them (a table read already in this reading tells it nothing)."""
    if _live is not None:
        return _live.table(ws.root, cfg)
    return read_once(("scan", ws.root, cfg, keep_files), lambda: _walk(ws, cfg, keep_files, count))


def _walk(ws: Workspace, cfg: ScanConfig, keep_files: bool, count: _core.FileCount | None) -> Table:
    return _warn_left_out(ws.root, _core.walk(ws.root, list(cfg.ignore), cfg.max_depth, cfg.min_tokens, keep_files,
                                              count))


_warned: set[tuple[str, str, str]] = set()


def _warn_left_out(root: str, table: Table) -> Table:
    """Name on stderr, once per process, each directory the scan left out: its scopes are
    missing from every answer, and a person would otherwise never learn why. stderr keeps
    `--json` output and the protocol's stdout as they are."""
    for gone in table.left_out:
        if (root, gone.path, gone.reason) not in _warned:
            _warned.add((root, gone.path, gone.reason))
            print(f"repoctx: warning: directory {gone.path} was left out of the scan: {gone.reason}", file=sys.stderr)
    return table
