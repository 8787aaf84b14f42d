"""A recorded run: one `validate --run` (or CI-mode check) with its steps,
results and timing, stored as `.repoctx/runs/<id>.json`. Ids sort by start time."""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

RUNS_DIR = ".repoctx/runs"
SCHEMA_VERSION = 1


class Step(Struct, kw_only=True, omit_defaults=True):
    name: str
    surface: str
    status: Literal["pass", "warn", "fail", "skip"]
    message: str
    duration_ms: float
    problems: list[str] = []


class Run(Struct, kw_only=True, forbid_unknown_fields=True):
    schema_version: Literal[1] = SCHEMA_VERSION
    id: str
    command: str  # the CLI words, e.g. "validate"
    started_at: str  # UTC, ISO 8601
    duration_ms: float
    status: Literal["passed", "failed"]
    steps: list[Step]
