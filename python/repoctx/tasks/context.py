"""task_context (`repoctx context "TASK" [--budget N] [--path P]… [--json]`): the files and
regions that matter for a task, and a bundle of their text within a token budget.

The ranking is the Rust core's (rust/tasks/): one index per tree of every file the walk
reaches, built on first use, kept by a serving process and saved for the next one
(base/task_index.py).

Signals, each of which `signals_off` can switch off (see docs/tasks.md): `lexical`, `symbols`,
`imports`, `scopes`, `artifacts`, `project`, `history`. The bundle never holds more than
`budget` tokens as the `tokenizer` of `.repoctx/config.yaml` counts them (base/tokens.py);
`tokens` is the sum of its pieces' counts.
"""

from __future__ import annotations

import errno
from typing import Annotated

import msgspec
from msgspec import Meta, Struct

from repoctx import _core
from repoctx.base.command import CliView, Command, McpView, pretty_json
from repoctx.base.task_index import save_later, task_index
from repoctx.base.workspace import PathEscape, Workspace
from repoctx.formats import config as config_format
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
        if exc.errno == errno.EFBIG and exc.strerror:  # past the core's limits (rust/tasks/limits.rs): its words
            return _fail("io_error", exc.strerror[:1].upper() + exc.strerror[1:])
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
