"""Project: `.repoctx/project.yaml` and its MCP resources.

`repoctx project init` derives the file from the repository (project_scan.py),
`repoctx project scan` refreshes what was derived and keeps what people wrote,
and the `add_discovery` tool records a pattern, rule, decision or issue in a
module (under a lock, atomically) and in the current session. The resources
`context://project/overview` and `context://module/{name}` render the file as
the contract's markdown. The file is parsed once per change: reads are keyed
by its stat, so a rewrite (always a new inode) is picked up at the next read.
"""

from __future__ import annotations

import errno
import os
import threading
from typing import Annotated
from urllib.parse import quote

from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.base import clock, fs, local_state
from repoctx.base.command import Check, CheckResult, CliView, Command, Resource, ResourceError
from repoctx.base.errors import RepoctxError
from repoctx.base.words import plural
from repoctx.base.workspace import PathEscape, Workspace, atomic_write, locked, stat_key
from repoctx.formats import project_file as pf
from repoctx.project import render

INVALID_PARAMS, INTERNAL_ERROR = -32602, -32603
MAX_FILE_BYTES = 8 << 20
INIT_HINT = "run `repoctx project init` to create it"


class NotInitialized(RepoctxError):
    pass


def has_data(ws: Workspace) -> bool:
    """Whether there is a project file, or a link in its place (registry/catalog.surfaces_with_data)."""
    return os.path.lexists(os.path.join(ws.root, pf.PROJECT_FILE))


def file_path(ws: Workspace) -> str:
    """The absolute path of project.yaml; PathEscape if `.repoctx` leads out of the root."""
    return ws.resolve(pf.PROJECT_FILE)[1]


# --- reading, once per change ------------------------------------------------

_cache: dict[str, tuple[tuple, pf.ProjectFile]] = {}
_cache_lock = threading.Lock()


def _read(path: str) -> pf.ProjectFile:
    try:
        raw = fs.read_bytes(*fs.split(path), MAX_FILE_BYTES)
    except FileNotFoundError:
        raise NotInitialized(f"No {pf.PROJECT_FILE} in this repository; {INIT_HINT}") from None
    except fs.LinkRefused as exc:
        raise pf.InvalidProjectFile(exc.strerror) from None
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise pf.InvalidProjectFile(f"{pf.PROJECT_FILE} is larger than {MAX_FILE_BYTES >> 20} MB") from None
        raise pf.InvalidProjectFile(f"{pf.PROJECT_FILE} cannot be read ({exc.strerror})") from None
    return pf.loads(raw)


def load(ws: Workspace) -> pf.ProjectFile:
    """The parsed project file; NotInitialized or InvalidProjectFile (messages without absolute paths)."""
    try:
        path = file_path(ws)
    except PathEscape:
        raise pf.InvalidProjectFile(f"{pf.PROJECT_DIR} leads outside the repository") from None
    try:
        st = fs.stat(ws.root, pf.PROJECT_FILE)
    except fs.LinkRefused as exc:
        raise pf.InvalidProjectFile(exc.strerror) from None
    if st is None:
        raise NotInitialized(f"No {pf.PROJECT_FILE} in this repository; {INIT_HINT}")
    key = stat_key(st)
    with _cache_lock:
        hit = _cache.get(path)
        if hit and hit[0] == key:
            return hit[1]
    parsed = _read(path)
    with _cache_lock:
        _cache[path] = (key, parsed)
    return parsed


def _write(ws: Workspace, project: pf.ProjectFile) -> None:
    path = file_path(ws)
    local_state.makedirs(ws.root, pf.PROJECT_DIR)  # its temporary file is ignored from the start
    atomic_write(path, pf.dumps(project))


# --- scan: refresh what was derived, keep what people wrote -------------------


def merge(old: pf.ProjectFile, new: pf.ProjectFile, now: str) -> tuple[pf.ProjectFile, list[str], list[str]]:
    """`old` with the derived parts of `new`: tech, and each module's path, key files and
    dependencies. A module is matched by name, else by path, so a module people renamed keeps
    its name. Modules that vanished stay when they hold anything people wrote.
    Returns (merged, added names, removed names)."""
    by_path = {m.path: name for name, m in old.modules.items() if m.path}
    modules: dict[str, pf.Module] = {}
    added = []
    matched: set[str] = set()
    for name, fresh in new.modules.items():
        old_name = name if name in old.modules else by_path.get(fresh.path)
        if old_name is None or old_name in matched:
            modules[name] = fresh
            added.append(name)
            continue
        matched.add(old_name)
        prev = old.modules[old_name]
        described = {k.path: k.description for k in prev.key_files if k.description}
        kept_files = [k for k in prev.key_files if k.description and k.path not in {f.path for f in fresh.key_files}]
        modules[old_name] = pf.Module(
            description=prev.description or fresh.description,
            path=fresh.path,
            key_files=[pf.KeyFile(k.path, k.role, described.get(k.path, "")) for k in fresh.key_files] + kept_files,
            patterns=prev.patterns,
            business_rules=prev.business_rules,
            decisions=prev.decisions,
            common_issues=prev.common_issues,
            dependencies=fresh.dependencies,
        )
    renamed = {fresh: kept for fresh, kept in zip(new.modules, modules) if fresh != kept}
    if renamed:
        for m in modules.values():
            m.dependencies = sorted(renamed.get(d, d) for d in m.dependencies)
    removed = []
    for name, prev in old.modules.items():
        if name in matched:
            continue
        if prev.has_human_content():
            modules[name] = prev
        else:
            removed.append(name)
    t_old, t_new = old.tech, new.tech
    merged = pf.ProjectFile(
        version=pf.SCHEMA_VERSION,
        project=pf.Project(
            name=old.project.name or new.project.name,
            type=old.project.type or new.project.type,
            path=old.project.path or new.project.path,
        ),
        tech=pf.Tech(
            stack=t_new.stack or t_old.stack,
            runtime=t_new.runtime or t_old.runtime,
            package_manager=t_new.package_manager or t_old.package_manager,
        ),
        architecture=pf.Architecture(
            pattern=old.architecture.pattern or new.architecture.pattern,
            description=old.architecture.description or new.architecture.description,
        ),
        modules=modules,
        metadata=pf.Metadata(created=old.metadata.created or now, updated=now, last_scan=now),
    )
    return merged, added, removed


# --- project init / project scan ------------------------------------------------


class ProjectParams(Struct):
    pass


class ProjectResult(Struct):
    path: str
    created: bool = False
    project: str = ""
    stack: list[str] = []
    modules: list[str] = []
    added: list[str] = []
    removed: list[str] = []
    error: str | UnsetType = UNSET


def _refuse_read_only(ws: Workspace) -> ProjectResult | None:
    if ws.read_only:
        return ProjectResult(pf.PROJECT_FILE, error="The server is read-only; project.yaml is not written")
    return None


def project_init(ws: Workspace, p: ProjectParams) -> ProjectResult:
    from repoctx.project import scan as project_scan

    if (refused := _refuse_read_only(ws)) is not None:
        return refused
    try:
        file_path(ws)  # refuses a project directory that leads out before anything is made
    except PathEscape:
        return ProjectResult(pf.PROJECT_FILE, error=f"{pf.PROJECT_DIR} leads outside the repository")
    local_state.makedirs(ws.root, pf.PROJECT_DIR)
    with locked(ws.root):
        if fs.lstat(ws.root, pf.PROJECT_FILE) is not None:
            return ProjectResult(pf.PROJECT_FILE, error=f"{pf.PROJECT_FILE} already exists; "
                                 "`repoctx project scan` refreshes it")
        derived = project_scan.derive(ws, clock.stamp())
        _write(ws, derived)
    names = list(derived.modules)
    return ProjectResult(pf.PROJECT_FILE, True, derived.project.name, derived.tech.stack, names, added=names)


def project_scan_cmd(ws: Workspace, p: ProjectParams) -> ProjectResult:
    from repoctx.project import scan as project_scan

    if (refused := _refuse_read_only(ws)) is not None:
        return refused
    try:
        _read(file_path(ws))  # before the lock, so a repository without the file stays untouched
        with locked(ws.root):
            old = _read(file_path(ws))
            now = clock.stamp()
            merged, added, removed = merge(old, project_scan.derive(ws, now), now)
            _write(ws, merged)
    except (NotInitialized, pf.InvalidProjectFile) as exc:
        return ProjectResult(pf.PROJECT_FILE, error=str(exc))
    except PathEscape:
        return ProjectResult(pf.PROJECT_FILE, error=f"{pf.PROJECT_DIR} leads outside the repository")
    return ProjectResult(pf.PROJECT_FILE, False, merged.project.name, merged.tech.stack,
                         list(merged.modules), added, removed)


def _render_project(r: ProjectResult) -> str:
    if r.error:
        return r.error
    verb = "Wrote" if r.created else "Refreshed"
    lines = [f"{verb} {r.path}: {r.project}, {plural(len(r.modules), 'module')} ({', '.join(r.modules) or 'none'})",
             f"stack: {', '.join(r.stack) or 'unknown'}"]
    if not r.created:
        lines.append(f"added: {', '.join(r.added) or 'none'}; removed: {', '.join(r.removed) or 'none'}")
    return "\n".join(lines)


# --- add_discovery ------------------------------------------------------------


class AddDiscoveryParams(Struct):
    module: Annotated[str, Meta(min_length=1, description="Module name as listed by context://project/overview")]
    type: Annotated[pf.DiscoveryType, Meta(description="pattern, rule (a business rule), decision, or issue")]
    content: Annotated[str, Meta(min_length=1, max_length=4000,
                                 description="What was learned; for an issue, its description")]
    solution: Annotated[
        Annotated[str, Meta(max_length=4000)] | None,
        Meta(description="How the issue is solved (issues only; required for them)"),
    ] = None


class AddDiscoveryResult(Struct, omit_defaults=True):
    recorded: bool
    module: str
    type: str
    content: str
    solution: str | UnsetType = UNSET
    error: str | UnsetType = UNSET


def add_discovery(ws: Workspace, p: AddDiscoveryParams) -> AddDiscoveryResult:
    from repoctx.project import sessions

    content, solution = p.content.strip(), (p.solution or "").strip()

    def fail(message: str) -> AddDiscoveryResult:
        return AddDiscoveryResult(False, p.module, p.type, content, solution=solution or UNSET, error=message)

    if ws.read_only:
        return fail("The server is read-only; discoveries are not recorded")
    if not content:
        return fail("content is empty")
    if p.type == "issue" and not solution:
        return fail("An issue needs a solution: pass `solution`")
    if p.type != "issue" and solution:
        return fail("`solution` is only for discoveries of type issue")
    try:
        if not fs.is_file(ws.root, pf.PROJECT_FILE):
            raise NotInitialized(f"No {pf.PROJECT_FILE} in this repository; {INIT_HINT}")
        with locked(ws.root):
            project = _read(file_path(ws))  # fresh under the lock: another server may have written
            module = project.modules.get(p.module)
            if module is None:
                known = ", ".join(project.modules) or "none"
                return fail(f"Module not found: {p.module} (modules: {known})")
            session_id = sessions.live_session_id(ws)
            now = clock.stamp()
            if p.type == "issue":
                if not any(i.description == content and i.solution == solution for i in module.common_issues):
                    module.common_issues.append(pf.Issue(content, solution, now, session_id))
            else:
                items = {"pattern": module.patterns, "rule": module.business_rules, "decision": module.decisions}[p.type]
                if content not in items:
                    items.append(content)
            project.metadata.updated = now
            _write(ws, project)
            if session_id:
                sessions.record_discovery(ws, session_id, p.module, p.type, content, solution)
    except (NotInitialized, pf.InvalidProjectFile) as exc:
        return fail(str(exc))
    except PathEscape:
        return fail(f"{pf.PROJECT_DIR} leads outside the repository")
    except fs.LinkRefused as exc:
        return fail(exc.strerror)
    return AddDiscoveryResult(True, p.module, p.type, content, solution=solution or UNSET)


def _render_discovery(r: AddDiscoveryResult) -> str:
    if r.error:
        return r.error
    return f"Recorded {r.type} in module {r.module}: {r.content}" + (f" (solution: {r.solution})" if r.solution else "")


COMMANDS = [
    Command(
        name="project init", tool=None,
        summary="Derive .repoctx/project.yaml from the repository.",
        description="Stack, runtime and package manager from manifests and lockfiles; modules from workspace "
        "members, Python packages and top-level source directories, with key files and dependencies.",
        params=ProjectParams, result=ProjectResult, handler=project_init,
        is_error=lambda r: bool(r.error), writes=True,
        cli=CliView(render=_render_project),
    ),
    Command(
        name="project scan", tool=None,
        summary="Refresh the derived parts of .repoctx/project.yaml, keeping what people wrote.",
        description="Tech, and each module's path, key files and dependencies, are derived again; descriptions, "
        "patterns, rules, decisions and issues stay.",
        params=ProjectParams, result=ProjectResult, handler=project_scan_cmd,
        is_error=lambda r: bool(r.error), writes=True,
        cli=CliView(render=_render_project),
    ),
    Command(
        name="project discover", tool="add_discovery",
        summary="Record what you learned about a module: a pattern, a business rule, a decision, or an issue with its solution.",
        description="It is added to the module in .repoctx/project.yaml (shown by context://module/{name}) and "
        "linked to the current session. Adding the same thing twice keeps one copy.",
        params=AddDiscoveryParams, result=AddDiscoveryResult, handler=add_discovery,
        is_error=lambda r: bool(r.error), writes=True,
        cli=CliView(positional=("module", "type", "content"), render=_render_discovery),
    ),
]


# --- resources -------------------------------------------------------------------


def module_uri(name: str) -> str:
    return "context://module/" + quote(name, safe="")


def _load_for_resource(ws: Workspace, uri: str) -> pf.ProjectFile:
    try:
        return load(ws)
    except NotInitialized as exc:
        raise ResourceError(INVALID_PARAMS, "Project not initialized", {"resource": uri, "reason": str(exc)}) from None
    except pf.InvalidProjectFile as exc:
        raise ResourceError(INTERNAL_ERROR, "Failed to read resource", {"resource": uri, "reason": str(exc)}) from None


def read_overview(ws: Workspace, fields: dict[str, str]) -> str:
    return render.overview(_load_for_resource(ws, OVERVIEW_URI))


def read_module(ws: Workspace, fields: dict[str, str]) -> str:
    name = fields.get("name", "")
    uri = module_uri(name)
    project = _load_for_resource(ws, uri)
    module = project.modules.get(name)
    if module is None:
        raise ResourceError(INVALID_PARAMS, f"Module not found: {name}", {
            "resource": uri, "module": name, "reason": f"Module '{name}' not found in project.yaml",
        })
    return render.module(name, module, uri)


def module_instances(ws: Workspace) -> list[tuple[str, str]]:
    try:
        project = load(ws)
    except (NotInitialized, pf.InvalidProjectFile):
        return []
    return [(module_uri(name), f"Module: {name}") for name in project.modules]


OVERVIEW_URI = "context://project/overview"
MARKDOWN = "text/markdown"

RESOURCES = [
    Resource(OVERVIEW_URI, "Project Overview",
             "High-level project information, tech stack, and architecture", MARKDOWN, read_overview),
    Resource("context://module/{name}", "Module Detail",
             "Detailed module information including patterns, rules, and issues", MARKDOWN, read_module,
             instances=module_instances),
]


def _check_project_file(ws: Workspace) -> CheckResult:
    try:
        rel, path = ws.resolve(pf.PROJECT_FILE)
    except Exception:
        return CheckResult("fail", f"{pf.PROJECT_FILE} leads outside the repository")
    try:
        raw = fs.read_bytes(*fs.split(path))
    except FileNotFoundError:
        return CheckResult("skip", f"No {pf.PROJECT_FILE}")
    except OSError as exc:
        return CheckResult("fail", f"{rel} cannot be read ({exc.strerror})")
    try:
        project = pf.loads(raw)
    except pf.InvalidProjectFile as exc:
        return CheckResult("fail", str(exc))
    return CheckResult("pass", f"{rel} is valid ({plural(len(project.modules), 'module')})")


CHECKS = [Check("project.file", "project", ".repoctx/project.yaml follows its schema.", _check_project_file)]
