"""Runs: what `validate --run` (and CI-mode checks) found, kept under `.repoctx/runs/`.

Each run is one JSON file named by its start time, written atomically; the
directory keeps the newest `keep_runs` (.repoctx/config.yaml, default 50).
`runs list` and `runs read` read them back, the latter bounded by --max-bytes.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.base import clock, fs, local_state
from repoctx.base.command import CliView, Command, fixed_form
from repoctx.base.errors import RepoctxError
from repoctx.base.results import (
    DEFAULT_MAX_BYTES,
    Envelope,
    MaxBytes,
    cut_utf8,
    failure,
    is_failure,
    success,
    with_structured_invalid,
)
from repoctx.base.words import plural
from repoctx.base.workspace import PathEscape, Workspace, atomic_write, locked
from repoctx.formats import bounded
from repoctx.formats import config as config_format
from repoctx.formats.run import RUNS_DIR, Run, Step

RUN_ID = re.compile(r"^[0-9]{8}T[0-9]{6}[0-9]{6}Z(-[0-9]+)?$")
MAX_RUN_BYTES = 8 << 20


class RunsError(RepoctxError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)


def runs_dir(ws: Workspace) -> str:
    """The absolute runs directory, refused when `.repoctx` leads out of the root."""
    try:
        return ws.resolve(RUNS_DIR)[1]
    except PathEscape:
        raise RunsError("invalid_path", f"{RUNS_DIR} leads outside the repository") from None


def record(ws: Workspace, command: str, steps: list[Step], started: float, duration_ms: float) -> Run:
    """Store a run and drop the oldest beyond the configured number; returns the run."""
    directory = runs_dir(ws)
    try:
        keep = config_format.load(ws.root).keep_runs
    except config_format.ConfigError:
        keep = config_format.RepoctxConfig().keep_runs
    failed = any(s.status == "fail" for s in steps)
    started_at = clock.stamp_us(started)
    base = re.sub(r"[-:.]", "", started_at)  # the id: the start time, compact (20260301T090000250000Z)
    local_state.makedirs(*fs.split(directory))
    with locked(ws.root):
        run_id, n = base, 0
        while fs.lstat(*fs.split(os.path.join(directory, run_id + ".json"))) is not None:
            n += 1
            run_id = f"{base}-{n}"
        run = Run(
            id=run_id, command=command, started_at=started_at, duration_ms=round(duration_ms, 3),
            status="failed" if failed else "passed", steps=steps,
        )
        atomic_write(os.path.join(directory, run_id + ".json"), msgspec.json.format(msgspec.json.encode(run)) + b"\n")
        for old in _ids(directory)[keep:]:
            try:
                fs.remove(*fs.split(os.path.join(directory, old + ".json")))
            except FileNotFoundError:
                pass
    return run



def _ids(directory: str) -> list[str]:
    """Run ids, newest first."""
    try:
        names = fs.listdir(*fs.split(directory))
    except FileNotFoundError:
        return []
    ids = [n[:-5] for n in names if n.endswith(".json") and RUN_ID.match(n[:-5])]
    return sorted(ids, key=_sort_key, reverse=True)


def _sort_key(run_id: str) -> tuple[str, int]:
    base, _, n = run_id.partition("-")
    return base, int(n or 0)


def load(ws: Workspace, run_id: str) -> tuple[Run, bytes]:
    """A stored run and its bytes; `latest` names the newest."""
    directory = runs_dir(ws)
    if run_id == "latest":
        ids = _ids(directory)
        if not ids:
            raise RunsError("not_found", "No runs recorded yet; `repoctx validate --run` records one")
        run_id = ids[0]
    elif not RUN_ID.match(run_id):
        raise RunsError("invalid_argument", f'"{run_id}" is not a run id (e.g. 20260213T100000123456Z) or latest')
    path = os.path.join(directory, run_id + ".json")
    try:
        raw = fs.read_head(*fs.split(path), MAX_RUN_BYTES + 1)
    except FileNotFoundError:
        raise RunsError("not_found", f"No run {run_id}; `repoctx runs list` shows the recorded ones") from None
    except OSError as exc:
        raise RunsError("io_error", f"Run {run_id} cannot be read ({exc.strerror})") from None
    try:
        if len(raw) > MAX_RUN_BYTES:
            raise msgspec.DecodeError("too large")
        return bounded.json(raw, type=Run), raw
    except msgspec.DecodeError:
        raise RunsError("io_error", f"Run {run_id} is not a valid run file") from None


# --- runs list ---------------------------------------------------------------


class RunsListParams(Struct):
    pass


class RunSummary(Struct):
    id: str
    command: str
    started_at: str
    duration_ms: float
    status: str
    steps: int


class RunsListResult(Envelope, kw_only=True):
    runs: list[RunSummary] | UnsetType = UNSET


def runs_list(ws: Workspace, p: RunsListParams) -> RunsListResult:
    name = "runs list"
    try:
        directory = runs_dir(ws)
        summaries = []
        for run_id in _ids(directory):
            try:
                run, _ = load(ws, run_id)
            except RunsError:
                summaries.append(RunSummary(run_id, "", "", 0.0, "unreadable", 0))
                continue
            summaries.append(RunSummary(run.id, run.command, run.started_at, run.duration_ms, run.status, len(run.steps)))
    except RunsError as exc:
        return failure(RunsListResult, name, exc.code, str(exc))
    return success(RunsListResult, name, runs=summaries)


def _render_list(r: RunsListResult) -> str:
    if not r.ok:
        return r.error.message
    if not r.runs:
        return "No runs recorded yet; `repoctx validate --run` records one."
    return "\n".join(f"{s.id}  {s.status:<10} {s.command}  ({plural(s.steps, 'step')}, {s.duration_ms:.0f} ms)" for s in r.runs)


# --- runs read ---------------------------------------------------------------

RunRef = Annotated[str, Meta(description="A run id, or latest for the newest run")]


class RunsReadParams(Struct):
    target: Annotated[Literal["latest"] | None, Meta(description="latest (the default), or give --id")] = None
    id: RunRef | None = None
    max_bytes: MaxBytes = DEFAULT_MAX_BYTES


class RunsReadLatestParams(Struct):
    pass  # the contract's fixed `runs read latest --max-bytes 12000`: the bound is not the client's to raise


class RunsReadResult(Envelope, kw_only=True):
    id: str | UnsetType = UNSET
    status: str | UnsetType = UNSET
    content: str | UnsetType = UNSET  # the run file, cut at max_bytes on a UTF-8 boundary
    truncated: bool | UnsetType = UNSET
    total_bytes: int | UnsetType = UNSET


def runs_read(ws: Workspace, p: RunsReadParams) -> RunsReadResult:
    name = "runs read"
    if p.target and p.id:
        return failure(RunsReadResult, name, "invalid_argument", "Give latest or --id, not both")
    try:
        run, raw = load(ws, p.id or "latest")
    except RunsError as exc:
        return failure(RunsReadResult, name, exc.code, str(exc))
    content, truncated = cut_utf8(raw, p.max_bytes)
    return success(RunsReadResult, name, id=run.id, status=run.status, content=content,
                   truncated=truncated, total_bytes=len(raw))


def _render_read(r: RunsReadResult) -> str:
    if not r.ok:
        return r.error.message
    note = f"\n[cut at {len(r.content.encode())} of {r.total_bytes} bytes; raise --max-bytes to see more]" if r.truncated else ""
    return r.content.rstrip("\n") + note


COMMANDS = with_structured_invalid([
    Command(
        name="runs list",
        tool="ctxt_runs_list",
        summary="List the recorded runs, newest first.",
        description="Each `validate --run` (and each CI-mode check) is recorded under .repoctx/runs/ "
        "with its steps, results and timing; this lists them.",
        params=RunsListParams,
        result=RunsListResult,
        handler=runs_list,
        is_error=is_failure,
        cli=CliView(render=_render_list),
    ),
    Command(
        name="runs read",
        tool=None,
        summary="Read one recorded run: `runs read latest` or `runs read --id ID`.",
        description="The run file as stored, cut at --max-bytes (default 12000) on a UTF-8 boundary; "
        "`truncated` says whether it was cut.",
        params=RunsReadParams,
        result=RunsReadResult,
        handler=runs_read,
        is_error=is_failure,
        cli=CliView(positional=("target",), render=_render_read),
    ),
    Command(
        name="runs read",
        tool="ctxt_runs_read_latest",
        summary="Read the newest recorded run (as `repoctx runs read latest --max-bytes 12000`).",
        description="The run file as stored, cut at 12000 bytes on a UTF-8 boundary; "
        "`truncated` says whether it was cut.",
        params=RunsReadLatestParams,
        result=RunsReadResult,
        handler=fixed_form(RunsReadParams, runs_read, target="latest", id=None, max_bytes=DEFAULT_MAX_BYTES),
        is_error=is_failure,
        cli=None,
    ),
])
