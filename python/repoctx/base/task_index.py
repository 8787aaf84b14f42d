"""The task index of a tree (the core's `TaskIndex`, rust/tasks/): made for `task_context` from
the walk of the scopes table (the same ignore policy and depth), its scopes' rows and the
unscoped ones (hidden and `build` directories), kept by a serving process, loaded from and saved
to `.repoctx/` by the others.

A serving process keeps it and follows the live index's change feed: a directory whose row
changed is listed again and only its files whose stat changed are read again, so an edit
costs that file.

What the index keeps of each file is saved for the next process in `.repoctx/task-index.bin`
(machine state, ignored by git through `.repoctx/.gitignore`): a cold CLI call or a server
warming up starts from it and reads again only the files whose stat key changed since (the
core checks the bytes, which are untrusted, and builds from nothing when they are not a save of
this build for this root and these options). It is written after the answer, in a thread of its
own, when enough files differ from it (`_worth_saving`), never by a read-only workspace; a
write that fails (a full disk, `.repoctx` a link out of the root) costs the next call a longer
build, never this one its answer.

This module imports neither msgspec nor the command layer: the prompt hook starts the build
here (`build_ahead`) and imports the rest while the core works.
"""

from __future__ import annotations

import errno
import sys
import threading
from collections.abc import Callable
from typing import Any

from repoctx import _core
from repoctx.base import fs, local_state
from repoctx.base import index as tables
from repoctx.base.workspace import ScanConfig, Workspace
from repoctx.formats.project_dir import find_project_dir

SAVED_FILE = f"{local_state.STATE_DIR}/task-index.bin"
# What a saved index is read up to: 4 MiB and 16 KiB a file of the tree, never over 1 GiB (the
# bytes are untrusted: a crafted file is refused by its size, unread; rust/tasks/store.rs).
MAX_SAVED_BYTES: int = _core.MAX_SAVED_BYTES
saved_bytes_cap = _core.saved_bytes_cap


# git's history as read for one HEAD (rust/tasks/history_store.rs), beside it: a process whose
# HEAD did not move takes it instead of walking git again (a third of a second of CPU on ruff).
HISTORY_FILE = f"{local_state.STATE_DIR}/task-history.bin"
# A read holds at most 64 MiB of paths (rust/git/history.rs), each ended by a NUL here.
MAX_HISTORY_BYTES = 128 << 20
# The file is written again when at least 1/SAVE_SHARE of the files differ from it: re-reading a
# few changed files (~0.1 ms each) costs the next call less than writing every file's facts
# again (~8 µs per file held, on the synthetic tree).
SAVE_SHARE = 64


class _Held:
    def __init__(self, index: _core.TaskIndex, generation: int) -> None:
        self.index = index
        self.generation = generation


_lock = threading.Lock()
_held: dict[str, tuple[tuple[object, ...], _Held]] = {}  # root -> (what it was built with, the index)


def _prefix(contextia: str | None) -> str:
    """The annotation prefix of `.contextia/config.yaml` ("@" without one, or when it is unreadable)."""
    if contextia is None:
        return "@"
    from repoctx.formats.artifact import CONFIG_FILE as CONTEXTIA_CONFIG
    from repoctx.formats.artifact import DocumentError, parse_config

    try:
        return parse_config(fs.read_text(contextia, CONTEXTIA_CONFIG, 1 << 20)).annotation_prefix
    except (OSError, DocumentError):
        return "@"


def _read_state(ws: Workspace, name: str, most: int, what: str) -> bytes | None:
    """The bytes of a file saved under `.repoctx/`, or None: there is none, it is larger than
    `most` (said on stderr: refused unread), not a file, or `.repoctx` is a link out of the root
    (the confined layer refuses it)."""
    try:
        return fs.read_bytes(ws.root, name, most)
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            _say(f"{what} {name} is larger than {most} bytes; refused unread")
        return None


def _saved_history(ws: Workspace) -> bytes | None:
    return _read_state(ws, HISTORY_FILE, MAX_HISTORY_BYTES, "the saved history")


def _history_refused(refused: str | None) -> None:
    if refused is not None:
        _say(f"the saved history {HISTORY_FILE} is not used ({refused}); git's history is read again")


def _offer_history(ws: Workspace, index: _core.TaskIndex) -> None:
    """Give the index the history saved by an earlier process, if there is one it can use (the
    core checks the bytes; it takes them only while HEAD is the commit they were read at)."""
    data = _saved_history(ws)
    if data is not None:
        _history_refused(index.offer_history(data))


def _say(message: str) -> None:
    print(f"repoctx: {message}", file=sys.stderr)


def _worth_saving(index: _core.TaskIndex) -> bool:
    return index.changed > 0 and index.changed * SAVE_SHARE >= index.file_count


SAVE_THREAD = "repoctx-task-index-save"
_saving: set[str] = set()  # roots whose index a thread of this process is writing
_saving_lock = threading.Lock()


def _save(ws: Workspace, index: _core.TaskIndex, whole: bool) -> None:
    try:
        local_state.makedirs(ws.root, local_state.STATE_DIR)
        if whole:  # written by the core: its bytes are not copied into Python's beside the index
            index.save_to(SAVED_FILE, MAX_SAVED_BYTES)
        history = index.save_history()
        if history is not None and len(history) <= MAX_HISTORY_BYTES:
            fs.write_atomic(ws.root, HISTORY_FILE, history)
    except OSError:
        pass  # a full disk, a read-only file system, `.repoctx` a link out (LinkRefused): built again next time
    finally:
        with _saving_lock:
            _saving.discard(ws.root)
        if tables.serving():  # the encoding's pieces, freed, would stay resident for the server's life (22 MiB at 100,000 files)
            tables.release_free_memory()


def save_later(ws: Workspace, index: _core.TaskIndex) -> None:
    """Write the index for the next process when enough of it changed, and git's history when a
    question read it from git, in a thread of its own that the process waits for at exit (a CLI
    call has answered by then); never when the workspace is read-only, and not while this
    process is writing them already."""
    whole = _worth_saving(index)
    if ws.read_only or not (whole or index.history_unsaved):
        return
    with _saving_lock:
        if ws.root in _saving:
            return
        _saving.add(ws.root)
    threading.Thread(target=_save, args=(ws, index, whole), name=SAVE_THREAD, daemon=False).start()


def _build(ws: Workspace, rows: list[_core.DirRow], ignore: list[str], prefix: str, contextia: str | None) -> _core.TaskIndex:
    # The core reads the saved index itself, a piece at a time, through its confined layer: the
    # file's bytes are never all held beside the index made from them.
    saved_at = (SAVED_FILE, saved_bytes_cap(sum(r.files for r in rows)))
    index = _adopted(_core.TaskIndex(ws.root, [r.scope for r in rows], ignore, prefix, contextia, saved_at=saved_at))
    _offer_history(ws, index)
    return index


def _adopted(index: _core.TaskIndex) -> _core.TaskIndex:
    """A build from the saved file, having said why the file was not used, if it was not."""
    if index.refused is not None:
        _say(f"the saved task index {SAVED_FILE} is not used ({index.refused}); the index was built again")
    return index


def task_index(ws: Workspace) -> _core.TaskIndex:
    """The task index of `ws.root` as the files are now: kept and followed in a serving process
    (the live table's change feed), built otherwise, from the saved index when there is one.
    Raises OSError when the root cannot be read."""
    ahead = _ahead.pop(ws.root, None)
    if ahead is None:
        return _made(ws)
    index: _core.TaskIndex = ahead.result()
    _taken.append(index)
    return index


def _made(ws: Workspace) -> _core.TaskIndex:
    cfg = ws.scan_config()
    contextia = find_project_dir(ws.root)
    made_with = (cfg, contextia, _prefix(contextia))
    if not tables.serving():
        return _cold(ws, cfg, made_with[2], contextia)
    table = tables.scan(ws, cfg)
    with _lock:
        had = _held.get(ws.root)
        if had is None or had[0] != made_with:
            held = _Held(_build(ws, _dirs(table), list(cfg.ignore), made_with[2], contextia), table.generation)
            _held[ws.root] = (made_with, held)
            tables.release_free_memory()
            return held.index
        held = had[1]
        if table.generation != held.generation:
            assert table.changed_at is not None and table.unscoped_changed_at is not None  # a live table
            dirs = _dirs(table)
            changed = [r.scope for r, at in zip(dirs, [*table.changed_at, *table.unscoped_changed_at])
                       if at > held.generation]
            try:
                held.index.update(changed, [r.scope for r in dirs])
            except BaseException:
                # Half updated, or past the core's limits (EFBIG), or its lock poisoned by a
                # panic: never used again; the next question builds the index afresh.
                del _held[ws.root]
                raise
            held.generation = table.generation
        return held.index


def is_warm(ws: Workspace) -> bool:
    """Whether this serving process holds `ws.root`'s index: a question is answered without a build."""
    return ws.root in _held


def _dirs(table: tables.Table) -> list[_core.DirRow]:
    """The directories whose files the index reads: the scopes' and the unscoped (hidden, `build`)."""
    return [*table.rows, *table.unscoped]


def _cold(ws: Workspace, cfg: ScanConfig, prefix: str, contextia: str | None) -> _core.TaskIndex:
    """The build of a process that keeps nothing: the saved index is read in a thread while the
    walk runs and git's history is made after it (all the core's, without the GIL), then the
    index is brought up to date with the walk's directories, compared with the files the walk
    listed (the tree is listed once), and takes the history. Its cap is the tree's count of
    files, so the read waits until the walk has counted files enough for the file's size (and
    leaves a file larger than the whole tree's cap unread)."""
    count = _core.FileCount()
    loading = _InThread(_core.TaskIndex.load, LOAD_THREAD, ws.root, list(cfg.ignore), prefix, contextia,
                        (SAVED_FILE, count))
    files = None
    try:
        table = tables.scan(ws, cfg, keep_files=True, count=count)
        rows = _dirs(table)
        files = sum(r.files for r in rows)
    finally:
        count.close(files)  # None when the walk failed: the load waits on no count that will never come
    history = _core.TaskHistory(ws.root, _saved_history(ws))
    _history_refused(history.refused)
    index = loading.result().settle([r.scope for r in rows], saved_bytes_cap(files), history, table.files)
    return _adopted(index)


def warm(ws: Workspace) -> None:
    """Build the index of a serving process ahead of its first question, when a saved index is
    on disk (the repository was asked for task context before): a restarted server then answers
    its first `task_context` as fast as its later ones. Without one nothing is built (nor when
    `.repoctx` is a link out: the first question says what it can)."""
    try:
        saved = fs.is_file(ws.root, SAVED_FILE)
    except OSError:
        return
    if saved:
        task_index(ws)


class _InThread:
    """A call running in a thread of its own (the core's work, which releases the GIL); `result`
    waits for it and returns what it returned or raises what it raised."""

    def __init__(self, call: Callable[..., Any], name: str, *args: object) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call, *args), name=name, daemon=True)
        self._thread.start()

    def _run(self, call: Callable[..., Any], *args: object) -> None:
        try:
            self._value = call(*args)
        except BaseException as exc:  # raised where the value is taken, as the call there would raise it
            self._error = exc

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


AHEAD_THREAD = "repoctx-task-index-ahead"
LOAD_THREAD = "repoctx-task-index-load"
_ahead: dict[str, _InThread] = {}  # root -> the build started ahead, taken by the next task_index
# What the builds started ahead made, held to the process's end: the one-shot process that starts
# them (the prompt hook) ends without the interpreter's teardown (`__main__._leave`), so the OS
# takes the index back at exit, where freeing it when the command returned cost the hook ~25 ms
# of CPU on ruff before its answer was out.
_taken: list[_core.TaskIndex] = []


def build_ahead(ws: Workspace) -> None:
    """Start the cold build of `ws.root`'s task index (the walk, the load of the saved index, the
    saved history: the core's work, without the GIL) in a thread, for the next `task_index` of this
    process to take: a one-shot process (the prompt hook) imports the command meanwhile. Nothing
    in a serving process, whose index is kept."""
    if tables.serving() or ws.root in _ahead:
        return
    _ahead[ws.root] = _InThread(_made, AHEAD_THREAD, ws)
