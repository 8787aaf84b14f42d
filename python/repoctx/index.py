"""Where directory tables come from: a cold walk for the CLI, or, in a serving
process, a live index per root that follows file-system events (rust/live.rs)
so a question costs the changes since the last one, not a walk of the tree."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from repoctx import _core
from repoctx.workspace import ScanConfig, Workspace

Row = tuple[str, str, int, int, bool, bool, bool, int, int]


@dataclass
class Table:
    rows: list[Row]
    skipped: int
    unreadable: list[str]
    generation: int = 0


@dataclass
class _Live:
    index: _core.LiveIndex
    config: ScanConfig
    table: Table


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
                live = self._by_root[root] = _Live(index, cfg, Table(*index.table()))
                return live.table
            generation = live.index.refresh()
            if generation != live.table.generation:
                live.table = Table(*live.index.table())
            return live.table


_live: Indexes | None = None


def serve_live(watch: bool) -> Indexes:
    """Keep tables in memory for the rest of this process (called by `repoctx serve`)."""
    global _live
    _live = Indexes(watch)
    return _live


def scan(ws: Workspace, cfg: ScanConfig) -> Table:
    """The directory table of `ws.root` as the files are now; raises OSError when the root cannot be read."""
    if _live is not None:
        return _live.table(ws.root, cfg)
    rows, skipped, unreadable = _core.walk(ws.root, list(cfg.ignore), cfg.max_depth, cfg.min_tokens)
    return Table(rows, skipped, unreadable)
