"""The `.contextia/` project of a workspace, and the annotation index of its sources.

Every call reads the project from disk (the contract is stateless per call), but
a file is parsed again only when its stat changed, so an unchanged project costs
a directory listing and a stat per artifact. The annotation index of the source
tree is kept per server process while `SourceIndex.is_current()` holds (see
rust/artifacts/srcindex.rs); questions about one file read that file instead.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from repoctx import _core
from repoctx.base import fs
from repoctx.base.errors import RepoctxError
from repoctx.base.workspace import Workspace, read_once, stat_key
from repoctx.formats import artifact as fa
from repoctx.formats.artifact import ArtifactType, Config, Frontmatter

GLOB_CHARS = frozenset("*?[{")


class NoProject(RepoctxError):
    def __init__(self, root: str, why: str = "") -> None:
        why = f" ({why})" if why else ""
        super().__init__(
            f"No Contextia project found in {root} or any parent{why}. Run `repoctx artifacts init` to create one."
        )


def has_data(ws: Workspace) -> bool:
    """Whether a `.contextia/` serves the root (registry/catalog.surfaces_with_data)."""
    return fa.find_project_dir(ws.root) is not None


class Problem(RepoctxError):
    """A request that cannot be answered; the message is the contract's."""


def choose(name: str, value: str, valid: tuple[str, ...], plural: str | None = None) -> None:
    """Problem "Invalid <name> '<value>'. Valid <plural>: …" unless `value` is one of `valid`."""
    if value not in valid:
        raise Problem(f"Invalid {name} '{value}'. Valid {plural or name + 's'}: {', '.join(valid)}")


@dataclass(frozen=True)
class Artifact:
    id: str
    type: ArtifactType
    file: str  # relative to the root
    meta: Frontmatter
    body: str


@dataclass(frozen=True)
class Unreadable:
    id: str  # the file name's stem
    file: str
    problem: str  # e.g. "missing required field 'status' in frontmatter"

    @property
    def message(self) -> str:
        return f"Error reading {self.id}: {self.problem} ({self.file})"


@dataclass
class Project:
    root: str
    base: str  # absolute path of .contextia/
    config: Config
    config_problem: str | None
    artifacts: list[Artifact]  # in id order
    unreadable: list[Unreadable]
    identity: str | None
    by_id: dict[str, Artifact] = field(default_factory=dict)  # the first file of each id
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # id -> its files, when several

    def __post_init__(self) -> None:
        for a in self.artifacts:
            if a.id in self.by_id:
                self.duplicates.setdefault(a.id, [self.by_id[a.id].file]).append(a.file)
            else:
                self.by_id[a.id] = a

    def of_type(self, type_name: str) -> list[Artifact]:
        return [a for a in self.artifacts if a.type.name == type_name and self.by_id[a.id] is a]

    def unreadable_by_id(self, artifact_id: str) -> Unreadable | None:
        return next((u for u in self.unreadable if u.id == artifact_id), None)

    def available(self, t: ArtifactType) -> str:
        ids = [a.id for a in self.of_type(t.name)]
        if not ids:
            return f"No {t.plural} exist yet."
        return f"Available {t.plural}: {ids[0]}" + (f"..{ids[-1]}" if len(ids) > 1 else "")

    @property
    def prefix(self) -> str:
        return self.config.annotation_prefix

    @property
    def scan_paths(self) -> list[str]:
        return list(dict.fromkeys([*self.config.source_paths, *self.config.test_paths])) or ["."]

    @cached_property
    def path_owners(self) -> tuple[_core.Globs, list[tuple[Artifact, str]]]:
        """All `paths` patterns of all artifacts, compiled, with the artifact and pattern of each."""
        owners = [(a, p) for a in self.artifacts if self.by_id[a.id] is a for p in a.meta.paths]
        return globs(tuple(p for _, p in owners)), owners


@lru_cache(maxsize=256)
def globs(patterns: tuple[str, ...]) -> _core.Globs:
    return _core.Globs(list(patterns))


def is_glob(pattern: str) -> bool:
    return any(c in GLOB_CHARS for c in pattern)


# --- reading ---------------------------------------------------------------

# Parsed files by absolute path: (stat key, parsed); a changed stat parses again.
_parsed: dict[str, tuple[tuple, object]] = {}
# The last project read per root, with the stat keys of all its files: reused while they hold.
_projects: dict[str, tuple[tuple, Project]] = {}


def _read_cached(path: str, parse, key: tuple | None = None):
    if key is None:
        key = _file_key(path)
        if key is None:
            return None
    hit = _parsed.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        value = parse(fs.read_text(*fs.split(path)))
    except OSError:  # gone, or a link out: not read
        return None
    _parsed[path] = (key, value)
    return value


def _parse_artifact(text: str) -> tuple[Frontmatter, str] | str:
    try:
        return fa.parse_document(text)
    except fa.DocumentError as exc:
        return str(exc)


def _parse_config(text: str) -> Config | str:
    try:
        return fa.parse_config(text)
    except fa.DocumentError as exc:
        return str(exc)


def _strip_frontmatter(text: str) -> str:
    try:
        return fa.split_document(text)[1].strip()
    except fa.DocumentError:
        return text.strip()


def _listing(ws: Workspace, base: str) -> list[tuple[ArtifactType, str, str, tuple]]:
    """(type, file name, path, stat key) of every artifact file; symlinks leading out are skipped."""
    found = []
    for t in fa.TYPES.values():
        directory = os.path.join(base, t.directory)
        rel = os.path.relpath(directory, ws.root)
        try:
            entries = [e for e in fs.scandir(ws.root, rel)  # a link out on the way is not listed
                       if e.name.endswith(".md") and not e.name.startswith(".")]
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:  # a link is followed only while it stays inside the root
                st = fs.stat(ws.root, f"{rel}/{name}") if entry.kind == "l" else fs.lstat(ws.root, f"{rel}/{name}")
            except OSError:
                continue
            if st is not None and stat.S_ISREG(st.st_mode):
                found.append((t, name, os.path.join(directory, name), stat_key(st)))
    return found


def _file_key(path: str) -> tuple | None:
    try:
        st = fs.stat(*fs.split(path))
    except OSError:  # a link out among them
        return None
    return stat_key(st) if st is not None else None


def open_project(ws: Workspace) -> Project:
    """The project under `ws.root` (raises NoProject); the same object while no file changed,
    and read once inside `one_reading()`."""
    return read_once(("contextia", ws.root), lambda: _read_project(ws))


def _read_project(ws: Workspace) -> Project:
    base = os.path.join(ws.root, fa.CONTEXTIA_DIR)
    try:
        if not fs.is_dir(ws.root, fa.CONTEXTIA_DIR):
            raise NoProject(ws.root)
    except fs.LinkRefused as exc:
        raise NoProject(ws.root, exc.strerror) from None
    listing = _listing(ws, base)
    config_path = os.path.join(base, fa.CONFIG_FILE)
    identity_path = os.path.join(base, fa.IDENTITY_FILE)
    if not ws.contains_real(identity_path):
        identity_path = ""
    config_key, identity_key = _file_key(config_path), identity_path and _file_key(identity_path)
    key = (tuple((path, k) for _t, _n, path, k in listing), config_key, identity_key)
    held = _projects.get(ws.root)
    if held is not None and held[0] == key:
        return held[1]
    config, config_problem = Config(), None
    parsed = _read_cached(config_path, _parse_config, config_key) if config_key else None
    if isinstance(parsed, str):
        config_problem = parsed
    elif parsed is not None:
        config = parsed
    if config_key is None:
        try:
            fs.stat(*fs.split(config_path))
        except fs.LinkRefused as exc:
            config_problem = exc.strerror  # named, not read
    artifacts: list[Artifact] = []
    unreadable: list[Unreadable] = []
    for t, name, path, file_key in sorted(listing, key=lambda x: x[2]):
        rel = f"{fa.CONTEXTIA_DIR}/{t.directory}/{name}"
        doc = _read_cached(path, _parse_artifact, file_key)
        if doc is None:
            continue
        if isinstance(doc, str):
            unreadable.append(Unreadable(name[:-3], rel, doc))
            continue
        meta, body = doc
        if not fa.ARTIFACT_ID.match(meta.id):
            unreadable.append(Unreadable(name[:-3], rel,
                                         f"field 'id' in frontmatter must look like {t.prefix}-001 (got '{meta.id}')"))
            continue
        artifacts.append(Artifact(meta.id, fa.type_of_id(meta.id), rel, meta, body))
    artifacts.sort(key=lambda a: (fa.id_sort_key(a.id), a.file))
    identity = _read_cached(identity_path, _strip_frontmatter, identity_key) if identity_key else None
    project = Project(ws.root, base, config, config_problem, artifacts, unreadable, identity or None)
    _projects[ws.root] = (key, project)
    return project


def load(ws: Workspace) -> Project:
    """open_project, with NoProject as a Problem."""
    try:
        return open_project(ws)
    except NoProject as exc:
        raise Problem(str(exc)) from None


# --- the annotation index -------------------------------------------------------

_indexes: dict[str, tuple[tuple, _core.SourceIndex]] = {}
_index_lock = threading.Lock()


def source_index(project: Project, query: _core.Globs | None = None, fresh: bool = False) -> _core.SourceIndex:
    """The annotation index of the project's sources: the one this process holds while it is
    current for `query` (same settings, no directory or ignore file it can see changed), else a
    new scan."""
    key = (project.prefix, tuple(project.scan_paths))
    with _index_lock:
        held = _indexes.get(project.root)
        if not fresh and held is not None and held[0] == key and held[1].is_current(query):
            return held[1]
        index = _core.SourceIndex(project.root, project.prefix, project.scan_paths)
        _indexes[project.root] = (key, index)
        return index


def warm(ws: Workspace) -> None:
    """Build the annotation index a serving process keeps, before the first glob question
    needs it (that scan is most of a first question's time); nothing without a project."""
    try:
        project = open_project(ws)
    except NoProject:
        return
    source_index(project)


def annotations_of_file(project: Project, rel: str, path: str) -> list[_core.Annotation]:
    """Annotations of one file, read now."""
    return _core.annotate_file(path, rel, project.prefix)


def target_id(target: str) -> str:
    """`SPEC-012.token-refresh` or `SPEC-001/login-success` -> the artifact id."""
    return target.split(".", 1)[0].split("/", 1)[0]


def find_artifact(project: Project, artifact_id: str, want: str | None = None) -> Artifact:
    t = fa.type_of_id(artifact_id)
    if want == "task" and (t is None or t.name != "task"):
        raise Problem(f"Invalid task id '{artifact_id}'. Task ids look like TASK-001")
    if t is None:
        raise Problem(f"Invalid artifact id '{artifact_id}'. Ids look like SPEC-001, DEC-001, NORM-001 or TASK-001")
    found = project.by_id.get(artifact_id)
    if found is not None:
        return found
    broken = project.unreadable_by_id(artifact_id)
    if broken is not None:
        raise Problem(broken.message)
    raise Problem(f"Artifact {artifact_id} not found. {project.available(t)}")
