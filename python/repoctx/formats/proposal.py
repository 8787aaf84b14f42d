"""A proposal: a change to context files an agent asks for instead of making it.

Stored as `.repoctx/proposals/<id>.json`. The id is a hash of what the change
is (title, rationale, operations, preconditions), so the same proposal made
twice is one proposal, and a stored file edited afterwards no longer matches
its id. Status and timestamps are not part of the hash.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable
from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct

from repoctx.formats import artifact, bounded, context_file, project_file
from repoctx.formats.context_file import CONTEXT_FILE

PROPOSALS_DIR = ".repoctx/proposals"
SCHEMA_VERSION = 1
ID_PATTERN = "^[0-9a-f]{12}$"

RelPath = Annotated[str, Meta(min_length=1, description="Path relative to the repository root")]


class _Op(Struct, tag_field="op", forbid_unknown_fields=True):
    pass


class Write(_Op, tag="write"):
    """Create the file, or replace all of its content."""

    path: RelPath
    content: str


class Replace(_Op, tag="replace"):
    """Replace the one occurrence of `old` in the file with `new`."""

    path: RelPath
    old: Annotated[str, Meta(min_length=1)]
    new: str


class Delete(_Op, tag="delete"):
    path: RelPath


Operation = Write | Replace | Delete


class _Pre(Struct, tag_field="kind", forbid_unknown_fields=True):
    pass


class FileHash(_Pre, tag="file"):
    """The file's content had this SHA-256 (hex); null: the file did not exist."""

    path: RelPath
    sha256: Annotated[str, Meta(pattern="^[0-9a-f]{64}$")] | None


class ScopeFingerprint(_Pre, tag="scope"):
    """The directory had this stat fingerprint (as in `.context.yaml`)."""

    scope: RelPath
    fingerprint: str


Precondition = FileHash | ScopeFingerprint


class Proposal(Struct, kw_only=True, forbid_unknown_fields=True):
    schema_version: Literal[1] = SCHEMA_VERSION
    id: Annotated[str, Meta(pattern=ID_PATTERN)]
    title: str
    rationale: str
    files: list[str]  # every path the operations touch, sorted
    operations: list[Operation]
    preconditions: list[Precondition]
    created_at: str  # UTC, ISO 8601
    status: Literal["pending", "applied"] = "pending"
    applied_at: str | None = None


def proposal_id(title: str, rationale: str, operations: list[Operation], preconditions: list[Precondition]) -> str:
    digest = hashlib.sha256(msgspec.json.encode([title, rationale, operations, preconditions]))
    return digest.hexdigest()[:12]


Kind = Literal["context", "scan_config", "project", "contextia_config", "artifact", "markdown", "mapping"]


def kind_of(rel: str) -> Kind | None:
    """What the file at `rel` (normalised, relative to the root) holds, which decides how its
    content is checked; None when it is not a context file, so no proposal may change it:
    `.context.yaml` anywhere, `.context.config.yaml`, `.repoctx/project.yaml`, and markdown
    and YAML under `.contextia/`."""
    name = posixpath.basename(rel)
    if name == CONTEXT_FILE:
        return "context"
    if rel == ".context.config.yaml":
        return "scan_config"
    if rel == ".repoctx/project.yaml":
        return "project"
    if rel.startswith(artifact.CONTEXTIA_DIR + "/"):
        inner = rel[len(artifact.CONTEXTIA_DIR) + 1:]
        if inner == artifact.CONFIG_FILE:
            return "contextia_config"
        if name.endswith(".md"):
            in_type_dir = posixpath.dirname(inner) in {t.directory for t in artifact.TYPES.values()}
            return "artifact" if in_type_dir else "markdown"
        if name.endswith((".yaml", ".yml")):
            return "mapping"
    return None


# Each kind's validator, owned by its format: why content is not valid for it, or None.
_VALIDATORS: dict[Kind, Callable[[bytes], str | None]] = {
    "context": context_file.content_problem, "scan_config": bounded.mapping_problem,
    "project": project_file.content_problem, "contextia_config": artifact.config_problem,
    "artifact": artifact.document_problem, "markdown": artifact.markdown_problem, "mapping": bounded.mapping_problem,
}


def content_problem(rel: str, data: bytes) -> str | None:
    """Why `data` is not valid content for the context file `rel` (a path kind_of knows), or None."""
    kind = kind_of(rel)
    assert kind is not None, rel
    try:
        data.decode("utf-8")
        return _VALIDATORS[kind](data)
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except bounded.YamlError as exc:
        return f"not valid YAML ({exc})"
