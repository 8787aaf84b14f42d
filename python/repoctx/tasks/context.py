"""task_context (`repoctx context "TASK" [--budget N] [--path P]… [--json]`): the files and
regions that matter for a task, and a bundle of their text within a token budget.

The ranking is the Rust core's (rust/tasks/): one index per tree of every file the walk
reaches (the same ignore policy and depth as the scopes table), built on first use. A
serving process keeps it and follows the live index's change feed: a directory whose row
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

Signals, each of which `signals_off` can switch off (see docs/tasks.md): `lexical`, `symbols`,
`imports`, `scopes`, `artifacts`, `project`, `history`. The bundle never holds more than
`budget` tokens as the `tokenizer` of `.repoctx/config.yaml` counts them (base/tokens.py);
`tokens` is the sum of its pieces' counts.
"""

from __future__ import annotations

import errno
import sys
import threading
from dataclasses import dataclass
from typing import Annotated

import msgspec
from msgspec import Meta, Struct

from repoctx import _core
from repoctx.base import fs, local_state
from repoctx.base import index as tables
from repoctx.base.command import CliView, Command, McpView, pretty_json
from repoctx.base.workspace import PathEscape, Workspace
from repoctx.formats import config as config_format
from repoctx.formats.artifact import CONFIG_FILE as CONTEXTIA_CONFIG
from repoctx.formats.artifact import DocumentError, find_project_dir, parse_config
from repoctx.tasks.outline import outline_lines

SIGNALS: tuple[str, ...] = tuple(_core.TASK_SIGNALS)
DEFAULT_BUDGET = 8000
DEFAULT_LIMIT = 10
MAX_LIMIT = 100


MAX_BUDGET = 2**63 - 1  # as the caches' budgets


class ContextParams(Struct):
    task: Annotated[str, Meta(description="The task in words: an issue, a bug report, a commit message")]
    budget: Annotated[
        int,
        Meta(description="Token budget of the bundle, never exceeded (counted by the tokenizer of "
                         ".repoctx/config.yaml: bytes / 4 unless o200k or cl100k is set)"),
    ] = DEFAULT_BUDGET
    paths: Annotated[
        list[str],
        Meta(description="Files (or directories) you already know matter: they and the files they import "
                         "or are imported by are pulled up"),
    ] = []
    signals_off: Annotated[
        list[Annotated[str, Meta(extra_json_schema={"enum": list(SIGNALS)})]],
        Meta(description="Signals to switch off (to measure what each adds): " + ", ".join(SIGNALS)),
    ] = []
    limit: Annotated[int, Meta(description=f"How many files to list (1 to {MAX_LIMIT})")] = DEFAULT_LIMIT
    outline: Annotated[
        bool,
        Meta(description="Also give each ranked file's outline (definitions with line ranges and signature "
                         "lines, as file_outline gives them), best files first, within the budget: outlines "
                         "take at most half of it and the bundle the rest"),
    ] = False


# The answer is the core's (rust/tasks/rank.rs `Answer`, typed in _core.pyi as `TaskAnswer`):
# its fields, its JSON and its JSON Schema (the tool's output schema) are declared there once.
TaskContextResult = _core.TaskAnswer


class ErrorDetail(Struct):
    code: str  # invalid_argument, invalid_path, config_error, io_error
    message: str


class TaskContextError(Struct):
    error: ErrorDetail


def _fail(code: str, message: str) -> TaskContextError:
    return TaskContextError(ErrorDetail(code, message))


# --- the index ------------------------------------------------------------------------------

SAVED_FILE = f"{local_state.STATE_DIR}/task-index.bin"
# What a saved index is read up to: about 1 KB per file of real code (250 bytes on the
# synthetic tree), so this holds a tree of a million files; a larger save is not written.
MAX_SAVED_BYTES = 1 << 30
# And never more than this per file of the tree, plus the tables: the bytes are untrusted, so
# a crafted file (a sparse 1 GiB one) is refused by its size, before anything is read.
SAVED_BYTES_PER_FILE = 16 << 10
SAVED_BYTES_BASE = 4 << 20


def saved_bytes_cap(files: int) -> int:
    """The most bytes a saved index of a tree of `files` files is read up to."""
    return min(MAX_SAVED_BYTES, SAVED_BYTES_BASE + files * SAVED_BYTES_PER_FILE)


# git's history as read for one HEAD (rust/tasks/history_store.rs), beside it: a process whose
# HEAD did not move takes it instead of walking git again (a third of a second of CPU on ruff).
HISTORY_FILE = f"{local_state.STATE_DIR}/task-history.bin"
# A read holds at most 64 MiB of paths (rust/git/history.rs), each ended by a NUL here.
MAX_HISTORY_BYTES = 128 << 20
# The file is written again when at least 1/SAVE_SHARE of the files differ from it: re-reading a
# few changed files (~0.1 ms each) costs the next call less than writing every file's facts
# again (~8 µs per file held, on the synthetic tree).
SAVE_SHARE = 64


@dataclass
class _Held:
    index: _core.TaskIndex
    generation: int


_lock = threading.Lock()
_held: dict[str, tuple[tuple, _Held]] = {}  # root -> (what it was built with, the index)


def _prefix(contextia: str | None) -> str:
    """The annotation prefix of `.contextia/config.yaml` ("@" without one, or when it is unreadable)."""
    if contextia is None:
        return "@"
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


def _offer_history(ws: Workspace, index: _core.TaskIndex) -> None:
    """Give the index the history saved by an earlier process, if there is one it can use (the
    core checks the bytes; it takes them only while HEAD is the commit they were read at)."""
    data = _read_state(ws, HISTORY_FILE, MAX_HISTORY_BYTES, "the saved history")
    if data is None:
        return
    refused = index.offer_history(data)
    if refused is not None:
        _say(f"the saved history {HISTORY_FILE} is not used ({refused}); git's history is read again")


def _say(message: str) -> None:
    print(f"repoctx: {message}", file=sys.stderr)


def _worth_saving(index: _core.TaskIndex) -> bool:
    return index.changed > 0 and index.changed * SAVE_SHARE >= index.file_count


SAVE_THREAD = "repoctx-task-index-save"
_saving: set[str] = set()  # roots whose index a thread of this process is writing
_saving_lock = threading.Lock()


def _save(ws: Workspace, index: _core.TaskIndex, whole: bool) -> None:
    try:
        writes = []
        if whole:
            writes.append((SAVED_FILE, index.save(), MAX_SAVED_BYTES))
        history = index.save_history()
        if history is not None:
            writes.append((HISTORY_FILE, history, MAX_HISTORY_BYTES))
        local_state.makedirs(ws.root, local_state.STATE_DIR)
        for name, data, most in writes:
            if len(data) <= most:
                fs.write_atomic(ws.root, name, data)
    except OSError:
        pass  # a full disk, a read-only file system, `.repoctx` a link out (LinkRefused): built again next time
    finally:
        with _saving_lock:
            _saving.discard(ws.root)


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


def _build(ws: Workspace, rows: list, ignore: list[str], prefix: str, contextia: str | None) -> _core.TaskIndex:
    # The core reads the saved index itself, a piece at a time, through its confined layer: the
    # file's bytes are never all held beside the index made from them.
    saved_at = (SAVED_FILE, saved_bytes_cap(sum(r.files for r in rows)))
    index = _core.TaskIndex(ws.root, [r.scope for r in rows], ignore, prefix, contextia, saved_at=saved_at)
    if index.refused is not None:
        _say(f"the saved task index {SAVED_FILE} is not used ({index.refused}); the index was built again")
    _offer_history(ws, index)
    return index


def task_index(ws: Workspace) -> _core.TaskIndex:
    """The task index of `ws.root` as the files are now: kept and followed in a serving process
    (the live table's change feed), built otherwise, from the saved index when there is one.
    Raises OSError when the root cannot be read."""
    cfg = ws.scan_config()
    table = tables.scan(ws, cfg)
    contextia = find_project_dir(ws.root)
    made_with = (cfg, contextia, _prefix(contextia))
    if table.changed_at is None:  # a cold walk: not a serving process
        return _build(ws, table.rows, list(cfg.ignore), made_with[2], contextia)
    with _lock:
        had = _held.get(ws.root)
        if had is None or had[0] != made_with:
            held = _Held(_build(ws, table.rows, list(cfg.ignore), made_with[2], contextia), table.generation)
            _held[ws.root] = (made_with, held)
            tables.release_free_memory()
            return held.index
        held = had[1]
        if table.generation != held.generation:
            changed = [r.scope for r, at in zip(table.rows, table.changed_at) if at > held.generation]
            held.index.update(changed, [r.scope for r in table.rows])
            held.generation = table.generation
        return held.index


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


# --- the command ----------------------------------------------------------------------------


def task_context(ws: Workspace, p: ContextParams) -> TaskContextResult | TaskContextError:
    if not p.task.strip():
        return _fail("invalid_argument", "task must say what the task is (it is empty)")
    if not 1 <= p.budget <= MAX_BUDGET:  # (past 2^64 - 1 the core cannot hold it)
        return _fail("invalid_argument", f"Invalid budget {p.budget}: 1 to {MAX_BUDGET} tokens")
    if not 1 <= p.limit <= MAX_LIMIT:
        return _fail("invalid_argument", f"Invalid limit {p.limit}: 1 to {MAX_LIMIT}")
    unknown = [s for s in p.signals_off if s not in SIGNALS]
    if unknown:
        return _fail("invalid_argument", f"Unknown signals: {', '.join(unknown)}; signals: {', '.join(SIGNALS)}")
    paths = []
    for given in p.paths:
        try:
            paths.append(ws.resolve(given)[0])
        except PathEscape:
            return _fail("invalid_path", f"Path {given!r} is outside the repository")
    try:
        tokenizer = config_format.load(ws.root).tokenizer
    except config_format.ConfigError as exc:
        return _fail("config_error", str(exc))
    try:
        index = task_index(ws)
        found = index.query(p.task, p.budget, paths, list(p.signals_off), p.limit, tokenizer, p.outline)
    except OSError as exc:
        return _fail("io_error", f"The repository cannot be read: {exc}")
    save_later(ws, index)
    return found


def _encode(r: TaskContextResult | TaskContextError) -> str:
    """The JSON every command prints (two-space indentation, fields in declaration order); the
    core writes the answer's."""
    if isinstance(r, TaskContextError):
        return pretty_json(r)
    return msgspec.json.format(r.json(), indent=2)


def _render(r: TaskContextResult | TaskContextError) -> str:
    if isinstance(r, TaskContextError):
        return f"{r.error.code}: {r.error.message}"
    if not r.files:
        return "No file matches this task."
    lines = []
    for i, f in enumerate(r.files, 1):
        lines.append(f"{i:>2}. {f.path}  ({f.score:.2f})  {f.why}")
        for g in f.regions:
            name = f" {g.symbol}" if g.symbol else ""
            lines.append(f"      {g.start}-{g.end}{name} ({g.kind})")
        if f.outline:
            lines.append("      outline:")
            lines.extend(outline_lines(f.outline, indent="        "))
    pieces = len(r.bundle)
    lines.append(f"\nBundle: {pieces} piece{'' if pieces == 1 else 's'}, {r.tokens} of {r.budget} tokens")
    for b in r.bundle:
        lines.append(f"\n── {b.path}:{b.start}-{b.end} ──")
        lines.append(b.text.rstrip("\n"))
    return "\n".join(lines)


COMMANDS = [
    Command(
        name="context",
        tool="task_context",
        summary="The files and regions that matter for a task, ranked with why, and their text within a token budget.",
        description="Give the task in words (an issue, a bug report). Files are ranked by the words and names of the "
        "task in the code, the import graph, what .context.yaml scopes, .contextia/ specs and project.yaml say of "
        "the code, and git history; each file lists its regions (the functions or classes that matter). The bundle "
        "holds those regions' text, best first, never over the budget. paths you already know pull their "
        "neighbourhood up. Default budget 8000 tokens, 10 files.",
        params=ContextParams,
        result=TaskContextResult | TaskContextError,
        handler=task_context,
        is_error=lambda r: isinstance(r, TaskContextError),
        cli=CliView(positional=("task",), render=_render),
        mcp=McpView(
            # Ten files with their regions and the bundle's pieces are ~50 objects: a client checking
            # each against the schema spent ~2 ms of a warm call on it (benches/README.md, "Task context").
            large_lists=True,
        ),
        encode=_encode,
    ),
]
