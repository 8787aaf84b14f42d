"""`.context.yaml`, schema version 1, as dotcontext publishes it.

Fields are declared in the published schema's order, so an encoded file lists
them as dotcontext's own reader returns them. Unknown fields are refused
(`additionalProperties: false`); optional fields left out stay out.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.base.errors import RepoctxError
from repoctx.formats import bounded

CONTEXT_FILE = ".context.yaml"
SCHEMA_VERSION = 1


class _Closed(Struct, forbid_unknown_fields=True, omit_defaults=True):
    pass


class FileEntry(_Closed):
    name: str
    purpose: str
    test_file: str | UnsetType = UNSET


class Interface(_Closed):
    name: str
    description: str


class Decision(_Closed):
    what: str
    why: str
    tradeoff: str | UnsetType = UNSET


class Dependencies(_Closed):
    internal: list[str] | UnsetType = UNSET
    external: list[str] | UnsetType = UNSET


class CurrentState(_Closed):
    working: list[str] | UnsetType = UNSET
    broken: list[str] | UnsetType = UNSET
    in_progress: list[str] | UnsetType = UNSET


class Subdirectory(_Closed):
    name: str
    summary: str


class Project(_Closed):
    name: str
    description: str
    language: str
    framework: str | UnsetType = UNSET
    package_manager: str | UnsetType = UNSET


class StructureEntry(_Closed):
    path: str
    summary: str


class Evidence(_Closed):
    collected_at: str
    commit_sha: str | UnsetType = UNSET
    test_status: Literal["passing", "failing", "unknown"] | UnsetType = UNSET
    test_count: int | UnsetType = UNSET
    failing_tests: list[str] | UnsetType = UNSET
    test_tool: str | UnsetType = UNSET
    typecheck: Literal["clean", "errors", "unknown"] | UnsetType = UNSET
    typecheck_tool: str | UnsetType = UNSET
    lint_status: Literal["clean", "errors", "unknown"] | UnsetType = UNSET
    lint_tool: str | UnsetType = UNSET
    coverage_percent: Annotated[float, Meta(ge=0, le=100)] | UnsetType = UNSET


class ContextFile(_Closed, kw_only=True):
    version: Literal[1]
    last_updated: str
    fingerprint: str
    scope: str
    summary: str
    files: list[FileEntry] | UnsetType = UNSET
    maintenance: str
    interfaces: list[Interface] | UnsetType = UNSET
    decisions: list[Decision] | UnsetType = UNSET
    constraints: list[str] | UnsetType = UNSET
    dependencies: Dependencies | UnsetType = UNSET
    current_state: CurrentState | UnsetType = UNSET
    subdirectories: list[Subdirectory] | UnsetType = UNSET
    environment: list[str] | UnsetType = UNSET
    testing: list[str] | UnsetType = UNSET
    todos: list[str] | UnsetType = UNSET
    data_models: list[str] | UnsetType = UNSET
    events: list[str] | UnsetType = UNSET
    config: list[str] | UnsetType = UNSET
    exports: list[str] | UnsetType = UNSET
    project: Project | UnsetType = UNSET
    structure: list[StructureEntry] | UnsetType = UNSET
    derived_fields: list[str] | UnsetType = UNSET
    evidence: Evidence | UnsetType = UNSET


FILTERABLE_FIELDS = (
    "summary", "files", "interfaces", "decisions", "constraints", "dependencies",
    "current_state", "subdirectories", "environment", "testing", "todos", "data_models",
    "events", "config", "project", "structure", "maintenance", "exports",
)
METADATA_FIELDS = ("version", "scope", "fingerprint", "last_updated")


class UnsupportedVersion(RepoctxError):
    def __init__(self, found: object) -> None:
        super().__init__(str(found))
        self.found = found

    def advice(self) -> str:
        """What a person can do about it: version 1 is the only schema there is, so no upgrade reads it."""
        return (f"schema version {self.found}, which repoctx does not read (version {SCHEMA_VERSION} is the only "
                f"schema): set `version: {SCHEMA_VERSION}` if the file follows it, or remove the file and run "
                "`repoctx init` to write a new one")


class SchemaError(RepoctxError):
    """The file parsed but does not follow the schema; `field` names where."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def content_problem(data: bytes) -> str | None:
    """Why `data` is not a valid `.context.yaml`, or None (YamlError when it is not YAML)."""
    try:
        from_data(bounded.yaml(data))
    except UnsupportedVersion as exc:
        return f"unsupported schema version {exc.found} (version 1 is supported)"
    except SchemaError as exc:
        return f"not a valid .context.yaml ({exc})"
    return None


def from_data(data: object) -> ContextFile:
    """Validate parsed YAML (as plain data) against schema v1."""
    if isinstance(data, dict):
        version = data.get("version")
        if isinstance(version, (int, float)) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            raise UnsupportedVersion(version)
    try:
        return msgspec.convert(data, ContextFile)
    except msgspec.ValidationError as exc:
        raise SchemaError(str(exc), _field_of(str(exc))) from None


def _field_of(message: str) -> str:
    # msgspec says "... - at `$.files[0].purpose`" or "Object contains unknown field `x`".
    if "`$." in message:
        return message.split("`$.", 1)[1].split("`", 1)[0]
    for marker in ("unknown field `", "required field `"):
        if marker in message:
            return message.split(marker, 1)[1].split("`", 1)[0]
    return ""


def to_builtins(ctx: ContextFile) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(ctx)
    return data
