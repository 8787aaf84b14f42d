"""`.repoctx/project.yaml`, version 1: what the project is and what people and
agents learned about each module.

Fields are written in declaration order and every field is written, so the
file shows where to add things. Unknown fields are refused, so a typo is
reported (with the field's path) instead of silently ignored. See
docs/project-file.md.
"""

from __future__ import annotations

import posixpath
from typing import Any, Literal

import msgspec
from msgspec import Struct

from repoctx.base.errors import RepoctxError
from repoctx.formats import bounded

PROJECT_DIR = ".repoctx"
PROJECT_FILE = ".repoctx/project.yaml"
SCHEMA_VERSION = 1

DiscoveryType = Literal["pattern", "rule", "decision", "issue"]


class _Closed(Struct, forbid_unknown_fields=True):
    pass


class Project(_Closed):
    name: str
    type: str = ""
    path: str = "."  # relative to the repository root, never absolute


class Tech(_Closed):
    stack: list[str] = []
    runtime: str = ""
    package_manager: str = ""


class Architecture(_Closed):
    pattern: str = ""
    description: str = ""


class KeyFile(_Closed, omit_defaults=True):
    path: str
    role: str  # entry, config, core or test when derived; people may use their own
    description: str = ""


class Issue(_Closed):
    description: str
    solution: str = ""
    discovered_at: str = ""
    session_id: str = ""


class Module(_Closed):
    description: str = ""
    path: str = ""  # the module's directory, relative to the root ("." for the root)
    key_files: list[KeyFile] = []
    patterns: list[str] = []
    business_rules: list[str] = []
    decisions: list[str] = []
    common_issues: list[Issue] = []
    dependencies: list[str] = []

    def has_human_content(self) -> bool:
        """Anything a scan cannot derive again, so a module that vanished from the tree is kept."""
        return bool(
            self.patterns or self.business_rules or self.decisions or self.common_issues
            or any(k.description for k in self.key_files)
        )


class Metadata(_Closed):
    created: str = ""
    updated: str = ""
    last_scan: str = ""


class ProjectFile(_Closed):
    version: Literal[1]
    project: Project
    tech: Tech = msgspec.field(default_factory=Tech)
    architecture: Architecture = msgspec.field(default_factory=Architecture)
    modules: dict[str, Module] = {}
    metadata: Metadata = msgspec.field(default_factory=Metadata)


class InvalidProjectFile(RepoctxError):
    """project.yaml cannot be used; the message names the field at fault."""


def _field_path(message: str) -> tuple[str, str]:
    """msgspec's "… - at `$.a.b[0]`" as ("…", "a.b[0]")."""
    text, sep, where = message.rpartition(" - at `")
    if not sep:
        return message, ""
    return text, where.rstrip("`").removeprefix("$").removeprefix(".")


def from_data(data: object) -> ProjectFile:
    """A ProjectFile from parsed YAML; InvalidProjectFile naming the field otherwise."""
    if not isinstance(data, dict):
        raise InvalidProjectFile(f"{PROJECT_FILE} must be a mapping with `version` and `project`")
    version = data.get("version")
    if version != SCHEMA_VERSION and isinstance(version, int) and not isinstance(version, bool):
        raise InvalidProjectFile(
            f"{PROJECT_FILE} has version {version}; this repoctx reads version {SCHEMA_VERSION}"
        )
    modules = data.get("modules")
    if isinstance(modules, dict):  # one by one first, so an error names the module, not `modules[...]`
        for name, module in modules.items():
            _convert(module, Module, f"modules.{name}")
    pf: ProjectFile = _convert(data, ProjectFile, "")
    check(pf)
    return pf


def _convert(data: object, tp: type, prefix: str) -> Any:
    try:
        return msgspec.convert(data, tp)
    except msgspec.ValidationError as exc:
        text, where = _field_path(str(exc))
        where = ".".join(p for p in (prefix, where) if p).replace(".[", "[")
        raise InvalidProjectFile(f"{PROJECT_FILE}: {text}" + (f" (field `{where}`)" if where else "")) from None


def check(pf: ProjectFile) -> None:
    """Rules a schema cannot say: relative paths, usable module names."""
    _relative("project.path", pf.project.path)
    for name, module in pf.modules.items():
        if not name.strip() or any(ord(c) < 32 for c in name):
            raise InvalidProjectFile(f"{PROJECT_FILE}: module name {name!r} is empty or has control characters (field `modules`)")
        if module.path:
            _relative(f"modules.{name}.path", module.path)
        for i, kf in enumerate(module.key_files):
            _relative(f"modules.{name}.key_files[{i}].path", kf.path)


def _relative(field: str, path: str) -> None:
    norm = posixpath.normpath(path.replace("\\", "/")) if path else "."
    if posixpath.isabs(norm) or (len(norm) > 1 and norm[1] == ":") or norm == ".." or norm.startswith("../"):
        raise InvalidProjectFile(
            f"{PROJECT_FILE}: `{field}` must be a path relative to the repository root, got {path!r}"
        )


def content_problem(data: bytes) -> str | None:
    """Why `data` is not a valid project.yaml, or None."""
    try:
        loads(data)
    except InvalidProjectFile as exc:
        return str(exc)
    return None


def loads(raw: bytes) -> ProjectFile:
    try:
        data = bounded.yaml(raw)  # YAML 1.2: unquoted dates stay text, as the `str` fields want
    except bounded.YamlError as exc:
        raise InvalidProjectFile(f"{PROJECT_FILE} is not valid YAML at line {exc.line}: {exc.reason}") from None
    return from_data(data)


def dumps(pf: ProjectFile) -> bytes:
    check(pf)
    text = bounded.dump_yaml(
        msgspec.to_builtins(pf),
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    header = "# repoctx project file: see docs/project-file.md. `repoctx project scan` refreshes\n" \
             "# tech, modules' paths, key files and dependencies; everything else is yours.\n"
    return (header + text).encode()
