"""Artifacts (the Contextia contract): specs, decisions, norms and tasks under
`.contextia/`, traced to the code by annotations, served by the 12 `mcp_*` tools.

Each tool's MCP text is the contract's compact plain "context format" (also the
CLI's default view); its structured content, and the CLI's `--json`, carry the
same data as JSON. Problems come back as results with an `error` message in the
contract's words, never as exceptions. The session-log tools' handlers live in
log_tools.py; this module declares all twelve. See docs/artifacts.md.
"""

from __future__ import annotations

import os
import re
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.artifacts import authoring, bundle, log_tools, session_logs, store
from repoctx.artifacts import check as artifact_check
from repoctx.artifacts import text as artifact_text
from repoctx.artifacts.log_tools import TaskId
from repoctx.artifacts.store import Artifact, Problem, Project, choose, find_artifact, load
from repoctx.base import command, tokens
from repoctx.base.command import CliView, Command, McpView
from repoctx.base.words import plural
from repoctx.base.workspace import PathEscape, Workspace
from repoctx.formats import artifact as fa
from repoctx.formats import config as config_format

TYPE_NAMES = tuple(fa.TYPES)
SEARCH_FIELDS = ("title", "tags", "body")
DEFAULT_BUDGET = 8000


def _given(value):
    """None (a parameter left out) as UNSET, so the result leaves the field out."""
    return UNSET if value is None else value


def _unreadable_count(project: Project, type_names: tuple[str, ...]) -> int:
    """Files of these types that could not be read (the list and search texts say so)."""
    dirs = {f"{fa.CONTEXTIA_DIR}/{fa.TYPES[t].directory}" for t in type_names}
    return sum(1 for u in project.unreadable if u.file.rsplit("/", 1)[0] in dirs)


def _unreadable_line(n: int) -> list[str]:
    return [f"({plural(n, 'file')} could not be read; mcp_check says why)"] if n else []


Id = Annotated[str, Meta(description="An artifact id, e.g. SPEC-012, DEC-006, NORM-003 or TASK-042")]
Depth = Annotated[
    str,
    Meta(description='Detail level: "meta" (frontmatter only), "summary" (plus the first section of the body) '
         'or "full" (the whole document)', extra_json_schema={"enum": list(fa.DEPTHS)}),
]


# --- the artifact as data -----------------------------------------------------


class ArtifactData(Struct, omit_defaults=True):
    id: str
    type: str
    title: str
    status: str
    file: str
    kind: str | None = None
    description: str | None = None
    links: list[str] = []
    tags: list[str] = []
    paths: list[str] = []
    assigned: str | None = None


def _data(a: Artifact) -> ArtifactData:
    m = a.meta
    return ArtifactData(a.id, a.type.name, m.title, m.status, a.file, m.kind, m.description,
                        m.links, m.tags, m.paths, m.assigned)


# --- mcp_show, mcp_show_task ------------------------------------------------------


class ShowParams(Struct):
    artifact_id: Id
    format: Depth = "summary"


class ShowTaskParams(Struct):
    task_id: TaskId
    format: Depth = "summary"


class ShowResult(Struct, omit_defaults=True):
    artifact: ArtifactData | None = None
    format: str | None = None
    body: str | None = None  # the part of the body the format includes
    error: str | None = None
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


def _show(ws: Workspace, artifact_id: str, depth: str, want: str | None) -> ShowResult:
    try:
        project = load(ws)
        choose("format", depth, fa.DEPTHS)
        a = find_artifact(project, artifact_id, want)
    except Problem as exc:
        return ShowResult(error=str(exc))
    return ShowResult(_data(a), depth, artifact_text.body_part(a, depth) if depth != "meta" else None)


def show(ws: Workspace, p: ShowParams) -> ShowResult:
    return _show(ws, p.artifact_id, p.format, None)


def show_task(ws: Workspace, p: ShowTaskParams) -> ShowResult:
    return _show(ws, p.task_id, p.format, "task")


def _text_show(r: ShowResult) -> str:
    return r.error or artifact_text.compose(r.artifact.id, r.artifact, r.body or "")


# --- mcp_search ---------------------------------------------------------------------


class SearchParams(Struct):
    query: Annotated[str, Meta(description="Words to look for in titles, tags and bodies")]
    type: Annotated[
        str | None, Meta(description="Only this artifact type: spec, decision, norm or task (default: all)")
    ] = None
    field: Annotated[
        str | None, Meta(description="Only this field: title, tags or body (default: all)")
    ] = None
    # No upper bound (the contract has none): a search answers at most every artifact, as mcp_list does.
    limit: Annotated[int, Meta(description="Maximum number of results, 1 or more")] = 10

    def __post_init__(self) -> None:
        _all_means_any(self, "type", "field")


class Hit(Struct, omit_defaults=True):
    id: str
    type: str
    title: str
    status: str
    score: int
    tags: list[str] = []
    snippet: str | None = None


class SearchResult(Struct):
    query: str
    type: str | UnsetType = UNSET
    field: str | UnsetType = UNSET
    total: int = 0
    results: list[Hit] = []
    unreadable: int = 0
    error: str | UnsetType = UNSET
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


WORD = re.compile(r"[\w-]+")


def _snippet(text: str, terms: list[str], width: int = 100) -> str | None:
    """The first line of `text` (markdown markers aside) that holds a term, cut to about `width` around it."""
    for line in text.splitlines():
        flat = " ".join(line.lstrip("#>-*0123456789. ").split())
        hits = [m.start() for t in terms if (m := re.search(r"(?<!\w)" + re.escape(t), flat.lower()))]
        if hits:
            start = max(0, min(hits) - width // 3)
            if start:  # begin at a word
                start = flat.find(" ", start) + 1 if flat.find(" ", start, min(hits)) >= 0 else min(hits)
            end = min(len(flat), start + width)
            return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")
    return None


def _score(a: Artifact, terms: list[str], field: str | None) -> tuple[int, int]:
    """(terms matched, score): title words weigh most, then tags, then body occurrences."""
    title = a.meta.title.lower()
    title_words = set(WORD.findall(title))
    tags = [t.lower() for t in a.meta.tags]
    body = f"{a.meta.description or ''}\n{a.body}".lower()
    matched = score = 0
    for term in terms:
        s = 0
        if field in (None, "title"):
            s += 6 if term in title_words else 3 if any(w.startswith(term) for w in title_words) else 0
        if field in (None, "tags"):
            s += 5 if term in tags else 2 if any(term in t for t in tags) else 0
        if field in (None, "body"):
            s += min(5, len(re.findall(r"(?<!\w)" + re.escape(term), body)))
        if field is None and term == a.id.lower():
            s += 10
        if s:
            matched += 1
            score += s
    phrase = " ".join(terms)
    if matched and len(terms) > 1 and (phrase in title or (field in (None, "body") and phrase in body)):
        score += 3
    return matched, score


def search(ws: Workspace, p: SearchParams) -> SearchResult:
    out = SearchResult(p.query, _given(p.type), _given(p.field))
    try:
        project = load(ws)
        if p.type is not None:
            choose("type", p.type, TYPE_NAMES)
        if p.field is not None:
            choose("field", p.field, SEARCH_FIELDS)
        if p.limit < 1:
            raise Problem(f"Invalid limit {p.limit}. Valid limits: 1 or more")
        terms = list(dict.fromkeys(WORD.findall(p.query.lower())))
        if not terms:
            raise Problem(f"Invalid query '{p.query}'. Give one or more words to search for")
    except Problem as exc:
        out.error = str(exc)
        return out
    ranked = []
    for a in project.artifacts:
        if project.by_id[a.id] is not a or (p.type and a.type.name != p.type):
            continue
        matched, score = _score(a, terms, p.field)
        if matched:
            ranked.append((-matched, -score, fa.id_sort_key(a.id), a, score))
    ranked.sort(key=lambda r: r[:3])
    out.total = len(ranked)
    for *_, a, score in ranked[: p.limit]:
        source = a.body if p.field in (None, "body") else ""
        snippet = _snippet(source, terms) or _snippet(a.meta.description or "", terms) or a.meta.description
        out.results.append(Hit(a.id, a.type.name, a.meta.title, a.meta.status, score, a.meta.tags, snippet))
    out.unreadable = _unreadable_count(project, (p.type,) if p.type else TYPE_NAMES)
    return out


def _text_search(r: SearchResult) -> str:
    if r.error:
        return r.error
    noun = fa.TYPES[r.type].plural if r.type else "artifacts"
    if r.total == 1:
        noun = r.type or "artifact"
    shown = f" (showing {len(r.results)})" if len(r.results) < r.total else ""
    lines = [f'Found {r.total} {noun} matching "{r.query}"{shown}' + (":" if r.results else ".")]
    for i, h in enumerate(r.results, 1):
        tags = f" [{', '.join(h.tags)}]" if h.tags else ""
        lines.append(f"{i}. {h.id}: {h.title}{tags}")
        if h.snippet:
            lines.append(f"   {h.snippet}")
    return "\n".join(lines + _unreadable_line(r.unreadable))


# --- mcp_list, mcp_list_tasks ---------------------------------------------------------


def _all_means_any(params: Struct, *filters: str) -> None:
    """The contract shows "all" as a filter's default: given literally, it filters nothing."""
    for name in filters:
        if getattr(params, name) == "all":
            setattr(params, name, None)


class ListParams(Struct):
    type: Annotated[str, Meta(description="Artifact type: spec, decision, norm or task",
                              extra_json_schema={"enum": list(TYPE_NAMES)})]
    status: Annotated[str | None, Meta(description="Only this status, e.g. approved, draft, deprecated (default: all)")] = None

    def __post_init__(self) -> None:
        _all_means_any(self, "status")


class ListTasksParams(Struct):
    status: Annotated[str | None, Meta(description="Only this status: backlog, in_progress, blocked or done (default: all)")] = None
    kind: Annotated[str | None, Meta(description="Only this kind: feature, bug, chore or spike (default: all)")] = None

    def __post_init__(self) -> None:
        _all_means_any(self, "status", "kind")


class Listed(Struct, omit_defaults=True):
    id: str
    title: str
    status: str
    kind: str | None = None


class ListResult(Struct):
    type: str
    status: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    count: int = 0
    artifacts: list[Listed] = []
    unreadable: int = 0
    error: str | UnsetType = UNSET
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


def _listing(ws: Workspace, type_name: str, status: str | None, kind: str | None, tasks_only: bool) -> ListResult:
    out = ListResult(type_name, _given(status), _given(kind))
    try:
        project = load(ws)
        choose("type", type_name, TYPE_NAMES)
        t = fa.TYPES[type_name]
        if status is not None:
            choose("status", status, t.statuses, "statuses" if tasks_only else f"statuses for {t.plural}")
        if kind is not None:
            choose("kind", kind, fa.TASK_KINDS)
    except Problem as exc:
        out.error = str(exc)
        return out
    for a in project.of_type(type_name):
        if (status is None or a.meta.status == status) and (kind is None or a.meta.kind == kind):
            out.artifacts.append(Listed(a.id, a.meta.title, a.meta.status, a.meta.kind))
    out.count = len(out.artifacts)
    out.unreadable = _unreadable_count(project, (type_name,))
    return out


def list_artifacts(ws: Workspace, p: ListParams) -> ListResult:
    return _listing(ws, p.type, p.status, None, False)


def list_tasks(ws: Workspace, p: ListTasksParams) -> ListResult:
    return _listing(ws, "task", p.status, p.kind, True)


def _text_list(r: ListResult) -> str:
    if r.error:
        return r.error
    t = fa.TYPES[r.type]
    words = " ".join(w for w in (r.status, r.kind) if w)
    noun = t.name if r.count == 1 else t.plural
    lines = [f"{r.count} {words + ' ' if words else ''}{noun}" + (":" if r.artifacts else ".")]
    for a in r.artifacts:
        facts = f"{a.kind}, {a.status}" if r.type == "task" and a.kind else a.status
        lines.append(f"- {a.id}: {a.title} [{facts}]")
    return "\n".join(lines + _unreadable_line(r.unreadable))


# --- mcp_trace, mcp_find_by_path -----------------------------------------------------------


class TraceParams(Struct):
    path: Annotated[str, Meta(description="Relative path to a source file, e.g. src/auth/login.py")]


class AnnotationData(Struct, omit_defaults=True):
    line: int
    kind: str
    target: str
    exists: bool
    symbol_kind: str | None = None
    symbol: str | None = None


class Reference(Struct, omit_defaults=True):
    id: str
    type: str
    title: str
    patterns: list[str] = []


class TaskTouch(Struct, omit_defaults=True):
    id: str
    title: str
    status: str
    via: list[str] = []  # "paths: <glob>" or the linked id that ties the task to the file


class TraceResult(Struct):
    path: str
    prefix: str = "@"
    annotations: list[AnnotationData] = []
    referenced_by: list[Reference] = []
    tasks: list[TaskTouch] = []
    error: str | UnsetType = UNSET
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


def _resolve(ws: Workspace, path: str) -> tuple[str, str]:
    try:
        rel, abs_path = ws.resolve(path)
    except PathEscape:
        raise Problem(f"Invalid path '{path}': it leads outside the project") from None
    if rel == ".":
        raise Problem(f"Invalid path '{path}': give a file (or a glob) relative to the project root")
    return rel, abs_path


def _covering(project: Project, rel: str) -> dict[str, list[str]]:
    """Artifact id -> its `paths` patterns that match the file."""
    g, owners = project.path_owners
    out: dict[str, list[str]] = {}
    for i in g.matches(rel):
        a, pattern = owners[i]
        out.setdefault(a.id, []).append(pattern)
    return out


def trace(ws: Workspace, p: TraceParams) -> TraceResult:
    out = TraceResult(p.path)
    try:
        project = load(ws)
        rel, abs_path = _resolve(ws, p.path)
        out.path = rel
        if not os.path.isfile(abs_path):
            raise Problem(f"File {rel} not found in the project")
    except Problem as exc:
        out.error = str(exc)
        return out
    out.prefix = project.prefix
    annotated = []
    for ann in store.annotations_of_file(project, rel, abs_path):
        artifact_id = store.target_id(ann.target)
        annotated.append(artifact_id)
        out.annotations.append(AnnotationData(ann.line, ann.kind, ann.target, artifact_id in project.by_id,
                                              ann.symbol_kind or None, ann.symbol or None))
    covering = _covering(project, rel)
    for artifact_id, patterns in covering.items():
        a = project.by_id[artifact_id]
        if a.type.name != "task":
            out.referenced_by.append(Reference(a.id, a.type.name, a.meta.title, patterns))
    ties = set(annotated) | {r.id for r in out.referenced_by}
    for task in project.of_type("task"):
        if task.meta.status not in fa.ACTIVE_TASK_STATUSES:
            continue
        via = [f"paths: {g}" for g in covering.get(task.id, [])]
        via += [t for t in dict.fromkeys(task.meta.links) if t in ties]
        if via:
            out.tasks.append(TaskTouch(task.id, task.meta.title, task.meta.status, via))
    return out


def _symbol(a: AnnotationData) -> str:
    return f", {a.symbol_kind}: {a.symbol}" if a.symbol else ""


def _text_trace(r: TraceResult) -> str:
    if r.error:
        return r.error
    lines = [f"Trace for {r.path}:"]
    if r.annotations:
        lines.append("  Annotations found:")
        for a in r.annotations:
            missing = "" if a.exists else " [no such artifact]"
            lines.append(f"    - {r.prefix}{a.kind} {a.target} (line {a.line}{_symbol(a)}){missing}")
    else:
        lines.append("  Annotations found: none")
    for t in TYPE_NAMES[:-1]:
        refs = [x for x in r.referenced_by if x.type == t]
        if refs:
            lines.append(f"  Referenced by {fa.TYPES[t].plural}:")
            lines += [f"    - {x.id}: {x.title} (paths: {', '.join(x.patterns)})" for x in refs]
    if not r.referenced_by:
        lines.append("  Referenced by specs: none")
    if r.tasks:
        lines.append("  Active tasks touching this file:")
        lines += [f"    - {t.id}: {t.title} ({t.status}; via {', '.join(t.via)})" for t in r.tasks]
    else:
        lines.append("  Active tasks touching this file: none")
    return "\n".join(lines)


class FindParams(Struct):
    file_path: Annotated[str, Meta(description="Relative path or glob pattern, e.g. src/auth/*.py")]


class Found(Struct, omit_defaults=True):
    id: str
    exists: bool
    type: str | None = None
    title: str | None = None
    paths: list[str] = []  # the artifact's `paths` patterns that reach the query
    annotations: list[str] = []  # "file:line" of annotations naming the artifact


class FindResult(Struct):
    query: str
    artifacts: list[Found] = []
    error: str | UnsetType = UNSET
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


def find_by_path(ws: Workspace, p: FindParams) -> FindResult:
    out = FindResult(p.file_path)
    try:
        project = load(ws)
        rel, abs_path = _resolve(ws, p.file_path)
    except Problem as exc:
        out.error = str(exc)
        return out
    out.query = rel
    pattern = rel
    if not store.is_glob(rel) and os.path.isdir(abs_path):
        pattern = rel + "/**"
    patterns: dict[str, list[str]] = {}
    annotations: dict[str, list[str]] = {}
    globs, owners = project.path_owners
    if store.is_glob(pattern):
        query = store.globs((pattern,))
        index = store.source_index(project, query)
        overlap = index.overlaps(query, globs)
        for i, (a, own) in enumerate(owners):
            # An overlap by a file, or one pattern matching the other's text (src/auth/* and src/auth/*.py).
            if overlap[i] or own == pattern or i in globs.matches(pattern) or query.matches(own):
                patterns.setdefault(a.id, []).append(own)
        rows = index.annotations(query)
    else:
        for artifact_id, own in _covering(project, rel).items():
            patterns[artifact_id] = own
        rows = store.annotations_of_file(project, rel, abs_path) if os.path.isfile(abs_path) else []
    for ann in rows:
        annotations.setdefault(store.target_id(ann.target), []).append(f"{ann.path}:{ann.line}")
    for artifact_id in sorted(patterns.keys() | annotations.keys(), key=fa.id_sort_key):
        a = project.by_id.get(artifact_id)
        out.artifacts.append(Found(
            artifact_id, a is not None, a.type.name if a else None, a.meta.title if a else None,
            patterns.get(artifact_id, []), annotations.get(artifact_id, []),
        ))
    return out


def _text_find(r: FindResult) -> str:
    if r.error:
        return r.error
    if not r.artifacts:
        return f"No artifacts reference {r.query}."
    lines = [f"Artifacts referencing {r.query}:"]
    for f in r.artifacts:
        why = []
        if f.paths:
            why.append(f"paths: {', '.join(f.paths)}")
        if f.annotations:
            more = len(f.annotations) - 5
            why.append(f"annotations: {', '.join(f.annotations[:5])}" + (f" and {more} more" if more > 0 else ""))
        title = f.title if f.exists else "[no such artifact]"
        lines.append(f"- {f.id}: {title} ({'; '.join(why)})")
    return "\n".join(lines)


# --- mcp_context --------------------------------------------------------------------------


class ContextParams(Struct):
    task_id: TaskId
    depth: Annotated[
        str,
        Meta(description='Detail level for linked artifacts: "meta", "summary" or "full"',
             extra_json_schema={"enum": list(fa.DEPTHS)}),
    ] = "summary"
    budget: Annotated[
        int,
        Meta(description="Approximate token budget for the whole bundle (counted by the tokenizer of "
                         ".repoctx/config.yaml: bytes / 4 unless o200k or cl100k is set)"),
    ] = DEFAULT_BUDGET


class BundlePart(Struct, omit_defaults=True):
    id: str  # an artifact id, "identity", or "session <start>"
    group: str  # task, spec, decision, norm, identity or log
    depth: str | None = None  # as included; absent when left out
    requested: str | None = None


class ContextResult(Struct, omit_defaults=True):
    task_id: str
    depth: str | None = None
    budget: int | None = None
    tokens: int | None = None
    parts: list[BundlePart] = []
    shortened: list[str] = []
    left_out: list[str] = []
    missing_links: list[str] = []
    text: str | None = None
    error: str | None = None
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


def context(ws: Workspace, p: ContextParams) -> ContextResult:
    out = ContextResult(p.task_id)
    try:
        project = load(ws)
        choose("depth", p.depth, fa.DEPTHS)
        if p.budget < 1:
            raise Problem(f"Invalid budget {p.budget}. Valid budgets: 1 token or more")
        task = find_artifact(project, p.task_id, "task")
        count = tokens.counter(config_format.load(ws.root).tokenizer)
        b = bundle.assemble(project, task, p.depth, p.budget, session_logs.sessions(ws, task.id), count)
    except (Problem, config_format.ConfigError) as exc:
        out.error = str(exc)
        return out
    except bundle.BudgetTooSmall as exc:
        out.error = f"Budget {p.budget} is too small for {p.task_id}: the smallest bundle needs {exc.needed} tokens"
        return out
    except PathEscape:
        out.error = f"The session logs of {p.task_id} lead outside the project; not read"
        return out
    parts = [BundlePart(x.key, x.group, b.depths[x.key], x.start) for x in b.parts]
    return ContextResult(task.id, p.depth, p.budget, b.tokens, parts, b.shortened, b.left_out, b.missing, b.text)


def _text_context(r: ContextResult) -> str:
    return r.error or r.text or ""


# --- mcp_check ------------------------------------------------------------------------------


class CheckParams(Struct):
    baseline: Annotated[
        str,
        Meta(description='Which checks to run: "all", "links", "schema" or "annotations"',
             extra_json_schema={"enum": list(artifact_check.BASELINES)}),
    ] = "all"
    ci: Annotated[bool, Meta(description="Fail (isError, non-zero exit) when any error is found")] = False


class CheckReport(Struct):
    baseline: str
    errors: int = 0
    warnings: int = 0
    infos: int = 0
    findings: list[artifact_check.Finding] = []
    ci: bool = False
    error: str | UnsetType = UNSET


def check(ws: Workspace, p: CheckParams) -> CheckReport:
    out = CheckReport(p.baseline, ci=p.ci)
    try:
        project = load(ws)
        choose("baseline", p.baseline, artifact_check.BASELINES)
    except Problem as exc:
        out.error = str(exc)
        return out
    out.findings = artifact_check.run(project, p.baseline)
    out.errors, out.warnings, out.infos = (sum(1 for f in out.findings if f.severity == s)
                                           for s in artifact_check.SEVERITIES)
    return out


CHECK_TITLES = {"all": "Check results", "links": "Link check results", "schema": "Schema check results",
                "annotations": "Annotation check results"}


def _text_check(r: CheckReport) -> str:
    if r.error:
        return r.error
    lines = [f"{CHECK_TITLES[r.baseline]}:"]
    for severity, count, noun in (("error", r.errors, "error"), ("warning", r.warnings, "warning"),
                                  ("info", r.infos, "info")):
        label = plural(count, noun)
        lines.append(f"  {label}" + (":" if count else ""))
        lines += [f"    - {f.message}" for f in r.findings if f.severity == severity]
    return "\n".join(lines)


# --- the registry ---------------------------------------------------------------------------------------


def _failed(r) -> bool:
    return bool(r.error)


def _cmd(name: str, tool: str | None, summary: str, description: str, params, result, handler, text,
         positional=(), writes=False, is_error=_failed) -> Command:
    # Results can list hundreds of artifacts or annotations: clients need not validate them item by item.
    return Command(name=name, tool=tool, summary=summary, description=description, params=params, result=result,
                   handler=handler, is_error=is_error, writes=writes,
                   cli=CliView(positional=positional, render=text), mcp=McpView(text=text, large_lists=True))


COMMANDS = [
    _cmd("artifacts init", None, "Create the .contextia/ layout and config.yaml (never overwrites).",
         "Idempotent: creates only what is missing.", authoring.InitParams, authoring.InitResult, authoring.init,
         authoring.text_init, writes=True),
    _cmd("artifacts new", None, "Add a spec, decision, norm or task with the next free id.",
         "The id is chosen and written under a lock, so concurrent runs never share an id.",
         authoring.NewParams, authoring.NewResult, authoring.new, authoring.text_new, positional=("type",),
         writes=True),
    _cmd("artifacts show", "mcp_show", "Read one artifact by id.",
         'format: "meta" (frontmatter only), "summary" (default: plus the first section of the body) or "full".',
         ShowParams, ShowResult, show, _text_show, positional=("artifact_id",)),
    _cmd("artifacts search", "mcp_search", "Search artifacts by words, ranked by relevance, with a snippet.",
         "Matches titles, tags and bodies; filter by type (spec, decision, norm, task) and field "
         "(title, tags, body); limit defaults to 10.",
         SearchParams, SearchResult, search, _text_search, positional=("query",)),
    _cmd("artifacts list", "mcp_list", "List all artifacts of a type, optionally of one status.",
         "type: spec, decision, norm or task. Each line: id, title and status.",
         ListParams, ListResult, list_artifacts, _text_list, positional=("type",)),
    _cmd("artifacts trace", "mcp_trace", "Trace a source file to the artifacts: its annotations, the specs whose "
         "paths cover it, and the active tasks that touch it.",
         "Annotations are read from the file now, with their line and enclosing function or class.",
         TraceParams, TraceResult, trace, _text_trace, positional=("path",)),
    _cmd("artifacts find", "mcp_find_by_path", "Find the artifacts that reference a path or glob, through "
         "frontmatter paths or source annotations.",
         "A directory means everything below it.", FindParams, FindResult, find_by_path, _text_find,
         positional=("file_path",)),
    _cmd("artifacts context", "mcp_context", "Assemble a task's context bundle within a token budget.",
         "The task, its linked specs, decisions and norms, the project identity and prior session logs. "
         "Over budget, the least important parts are shortened first (norms, decisions, identity, specs, logs; the "
         "task last) and left out only when meta does not fit; the bundle says what. Default depth summary, "
         f"budget {DEFAULT_BUDGET} tokens.",
         ContextParams, ContextResult, context, _text_context, positional=("task_id",)),
    _cmd("artifacts check", "mcp_check", "Validate the project: links, schema and annotations, grouped by severity.",
         'baseline: "all" (default), "links", "schema" or "annotations". With ci, errors make the call fail.',
         CheckParams, CheckReport, check, _text_check,
         is_error=lambda r: bool(r.error) or (r.ci and r.errors > 0)),
    _cmd("artifacts task show", "mcp_show_task", "Read one task by id.",
         'format: "meta", "summary" (default) or "full".', ShowTaskParams, ShowResult, show_task, _text_show,
         positional=("task_id",)),
    _cmd("artifacts task list", "mcp_list_tasks", "List tasks, optionally of one status and kind.",
         "status: backlog, in_progress, blocked, done; kind: feature, bug, chore, spike.",
         ListTasksParams, ListResult, list_tasks, _text_list),
    _cmd("artifacts log read", "mcp_read_log", "Read a task's session logs, most recent first.",
         "latest (default true): only the most recent session; otherwise the n most recent.",
         log_tools.ReadLogParams, log_tools.ReadLogResult, log_tools.read_log, log_tools.text_read_log,
         positional=("task_id",)),
    _cmd("artifacts log write", "mcp_write_log", "Append an entry to the task's open session log (starting one).",
         "Call it as you work: progress, decisions, open questions, files changed.",
         log_tools.WriteLogParams, log_tools.WriteLogResult, log_tools.write_log, log_tools.text_write_log,
         positional=("task_id",), writes=True),
    _cmd("artifacts log close", "mcp_close_log", "Close the task's open session log, with its duration and entries.",
         "The next mcp_write_log starts a new session.", log_tools.CloseLogParams, log_tools.CloseLogResult,
         log_tools.close_log, log_tools.text_close_log,
         positional=("task_id",), writes=True),
]



def _check_artifacts(ws: Workspace) -> command.CheckResult:
    """The artifacts surface's own `mcp_check` in CI mode (through its command)."""
    cmd = next(c for c in COMMANDS if c.tool == "mcp_check")
    if fa.find_project_dir(ws.root) is None:
        return command.CheckResult("skip", "No .contextia/ project")
    result = cmd.handler(ws, cmd.parse({"ci": True}))
    data = msgspec.to_builtins(result)
    errors, warnings = (data.get("errors", 0), data.get("warnings", 0)) if isinstance(data, dict) else (0, 0)
    status = "fail" if cmd.is_error(result) else ("warn" if warnings else "pass")
    lines = (cmd.cli.render(result) if cmd.cli and cmd.cli.render else cmd.encode(result)).splitlines()
    return command.CheckResult(status, f"{plural(errors, 'error')}, {plural(warnings, 'warning')}", lines[:200] if status != "pass" else [])


CHECKS = [command.Check("artifacts.check", "artifacts", "Links, ids, frontmatter and annotations of .contextia/ (mcp_check).",
                _check_artifacts)]
