"""`.contextia/`: artifact documents (markdown with YAML frontmatter), the project
config, and session log records. See docs/artifacts.md."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
from msgspec import Struct, field

from repoctx.base.errors import RepoctxError
from repoctx.formats import bounded
from repoctx.formats.project_dir import CONTEXTIA_DIR, find_project_dir  # noqa: F401 (theirs: fa.find_project_dir)

CONFIG_FILE = "config.yaml"
IDENTITY_FILE = "system/identity.md"
LOGS_DIR = "work/logs"

ARTIFACT_ID = re.compile(r"^(SPEC|DEC|NORM|TASK)-[A-Z0-9-]+$")
TASK_KINDS = ("feature", "bug", "chore", "spike")
ACTIVE_TASK_STATUSES = ("in_progress", "blocked")
DEPTHS = ("meta", "summary", "full")


@dataclass(frozen=True)
class ArtifactType:
    name: str  # "spec"
    prefix: str  # "SPEC"
    directory: str  # under .contextia/
    plural: str
    statuses: tuple[str, ...]


TYPES = {
    t.name: t
    for t in (
        ArtifactType("spec", "SPEC", "system/specs", "specs", ("draft", "approved", "implemented", "deprecated")),
        ArtifactType("decision", "DEC", "system/rationale", "decisions",
                     ("proposed", "accepted", "superseded", "rejected", "deprecated")),
        ArtifactType("norm", "NORM", "system/norms", "norms", ("draft", "active", "deprecated")),
        ArtifactType("task", "TASK", "work/tasks", "tasks", ("backlog", "in_progress", "blocked", "done")),
    )
}
TYPE_BY_PREFIX = {t.prefix: t for t in TYPES.values()}


def type_of_id(artifact_id: str) -> ArtifactType | None:
    return TYPE_BY_PREFIX.get(artifact_id.split("-", 1)[0]) if ARTIFACT_ID.match(artifact_id) else None


def id_sort_key(artifact_id: str) -> tuple[int, list[tuple[int, int, str]]]:
    """Type order, then natural order: SPEC-2 before SPEC-10."""
    t = type_of_id(artifact_id)
    order = list(TYPES).index(t.name) if t else len(TYPES)
    parts = re.split(r"(\d+)", artifact_id)
    return (order, [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts])


class Frontmatter(Struct, kw_only=True, omit_defaults=True):
    """The YAML block at the top of an artifact. Unknown keys are kept out, not refused."""

    id: str
    title: str
    status: str
    description: str | None = None
    tags: list[str] = []
    links: list[str] = []
    paths: list[str] = []  # globs of the files the artifact covers
    kind: str | None = None  # tasks
    assigned: str | None = None  # tasks


REQUIRED_FIELDS = ("id", "title", "status")
Severity = Literal["error", "warning", "info", "off"]


class Config(Struct, kw_only=True, omit_defaults=True):
    """`.contextia/config.yaml`."""

    project: bounded.Setting = ""
    source_paths: list[bounded.Setting] = field(default_factory=lambda: ["."])  # where annotations are looked for (and spec paths matched)
    test_paths: list[bounded.Setting] = []
    annotation_prefix: bounded.Setting = "@"
    checks: dict[bounded.Setting, Severity] = {}  # rule name -> severity, overriding the defaults


class SessionRecord(Struct, kw_only=True, omit_defaults=True):
    """`session.yaml` of one session log directory."""

    task: str
    started: str  # ISO 8601 UTC, seconds
    status: Literal["open", "closed"]
    closed: str | None = None
    entries: int | None = None  # set on close
    duration_minutes: int | None = None  # set on close


class DocumentError(RepoctxError):
    """A document that cannot be read as an artifact; the message names the field."""


FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.S | re.M)


def split_document(text: str) -> tuple[str, str]:
    """(frontmatter YAML, body) of a markdown document; DocumentError without frontmatter."""
    text = text.removeprefix("\ufeff")
    m = FRONTMATTER.match(text)
    if m is None:
        if text.startswith("---"):
            raise DocumentError("frontmatter is not closed by a '---' line")
        raise DocumentError("no frontmatter (the file must start with a '---' line)")
    return m.group(1), text[m.end():]


def parse_document(text: str) -> tuple[Frontmatter, str]:
    """The frontmatter and body of an artifact, or DocumentError saying what is wrong."""
    head, body = split_document(text)
    try:
        data = bounded.yaml(head)
    except bounded.YamlError as exc:
        raise DocumentError(f"frontmatter is not valid YAML{_where(head, exc)}") from None
    if not isinstance(data, dict):
        raise DocumentError("frontmatter is not a mapping of fields")
    for name in REQUIRED_FIELDS:
        if data.get(name) in (None, ""):
            raise DocumentError(f"missing required field '{name}' in frontmatter")
    try:
        return msgspec.convert(data, Frontmatter), body
    except msgspec.ValidationError as exc:
        raise DocumentError(_field_message(str(exc))) from None


def _where(head: str, exc: bounded.YamlError) -> str:
    """" at line N (field 'x')": the file's line (after the opening '---') and the key on it,
    then the reason when it is not plain syntax (a bound: "nested deeper than 128 levels")."""
    lines = head.splitlines()
    key = re.match(r"\s*([A-Za-z_][\w-]*)\s*:", lines[exc.line - 1]) if exc.line <= len(lines) else None
    return f" at line {exc.line + 1}" + (f" (field '{key.group(1)}')" if key else "") + ("" if exc.syntax else f": {exc.reason}")


def _field_message(message: str) -> str:
    # msgspec: "Expected `str`, got `int` - at `$.title`" or "... - at `$.tags[0]`".
    if "`$." in message:
        field = message.split("`$.", 1)[1].split("`", 1)[0].split("[", 1)[0]
        expected = "a list of strings" if field in ("tags", "links", "paths") else "a string"
        return f"field '{field}' in frontmatter must be {expected}"
    return f"invalid frontmatter: {message}"


def document_problem(data: bytes) -> str | None:
    """Why `data` is not a spec, decision, norm or task (frontmatter with its required fields
    and types), or None."""
    return _refusal(parse_document, data)


def config_problem(data: bytes) -> str | None:
    """Why `data` is not a valid `.contextia/config.yaml`, or None."""
    return _refusal(parse_config, data)


def _refusal(parse: Callable[[str], object], data: bytes) -> str | None:
    try:
        parse(data.decode("utf-8"))
    except DocumentError as exc:
        return str(exc)
    return None


def markdown_problem(data: bytes) -> str | None:
    """Why `data` is not other markdown under .contextia/ (identity, logs: any text, its
    frontmatter, if any, a mapping), or None."""
    text = data.decode("utf-8")
    if not text.startswith("---"):
        return None
    try:
        head, _body = split_document(text)
    except DocumentError as exc:
        return str(exc)
    return None if isinstance(bounded.yaml(head), dict) else "frontmatter must be a YAML mapping"


def parse_config(text: str) -> Config:
    """The project config; DocumentError naming the field that is wrong."""
    try:
        data = bounded.yaml(text)
    except bounded.YamlError as exc:
        raise DocumentError(f"config.yaml is not valid YAML ({exc})") from None
    if data is None:
        return Config()
    if not isinstance(data, dict):
        raise DocumentError("config.yaml is not a mapping of fields")
    try:
        config = msgspec.convert(data, Config)
    except msgspec.ValidationError as exc:
        where = str(exc).split("`$.", 1)[1].split("`", 1)[0] if "`$." in str(exc) else ""
        raise DocumentError(f"config.yaml: invalid field '{where}': {exc}" if where else f"config.yaml: {exc}") from None
    if not config.annotation_prefix.strip():
        raise DocumentError("config.yaml: invalid field 'annotation_prefix': it must not be empty")
    return config


def render_frontmatter(data: dict[str, Any]) -> str:
    """A YAML frontmatter block, fields in the order given."""
    return "---\n" + bounded.dump_yaml(data, sort_keys=False, allow_unicode=True, width=1000) + "---\n"
