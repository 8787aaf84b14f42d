"""The control surface (ctxt): what repoctx is, what it serves, and whether it holds.

`self report`, `schema`, `capabilities` and `validate --run`, each an MCP tool
one-to-one with its `repoctx --json …` command (proposals, runs and client
setup live in proposals.py, runs.py and clients.py). Results carry the
envelope of base/results.py. These commands describe the registry itself, so the
module declares factories (`commands(catalog)`, `checks(catalog)`) that the catalog
calls with itself: `validate` runs every Check the surfaces register.
"""

from __future__ import annotations

import functools
import platform
import time
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx import __version__
from repoctx.base.command import Check, CheckResult, Command, core_schema
from repoctx.base.index import watching
from repoctx.base.results import Envelope, failure, is_failure, success, with_structured_invalid
from repoctx.base.words import plural
from repoctx.base.workspace import Workspace
from repoctx.formats.config import SURFACES, ConfigError
from repoctx.formats.config import load as load_config
from repoctx.formats.run import Step


class NoParams(Struct):
    pass


# --- self report ------------------------------------------------------------


class SurfaceReport(Struct):
    name: str
    has_data: bool
    tools: int  # MCP tools the surface registers
    resources: int


class WatchingReport(Struct):
    # "inotify", "fsevents" or "windows": the OS's file-system events keep a serving
    # process's scan true; "polling": none to be had, every question reads the tree again;
    # "none": turned off with `serve --no-watch`. Outside a server: what serve uses here.
    by: Literal["inotify", "fsevents", "windows", "polling", "none"]
    reason: str


class SelfReportResult(Envelope, kw_only=True):
    version: str | UnsetType = UNSET
    root: str | UnsetType = UNSET
    root_reason: str | UnsetType = UNSET  # why that directory: given with --root, or found (base/rootfind.py)
    surfaces: list[SurfaceReport] | UnsetType = UNSET
    core: dict[str, str] | UnsetType = UNSET  # the Rust core's build
    python: str | UnsetType = UNSET
    watching: WatchingReport | UnsetType = UNSET


def self_report(catalog, ws: Workspace, p: NoParams) -> SelfReportResult:
    from repoctx import _core

    with_data = catalog.surfaces_with_data(ws)
    commands, resources = catalog.all_commands(), catalog.all_resources()
    surfaces = [
        SurfaceReport(
            s, s in with_data,
            sum(1 for c in commands if c.tool and c.surface == s),
            sum(1 for r in resources if r.surface == s),
        )
        for s in SURFACES
    ]
    core = _core.build_info()
    watch = watching(ws)
    return success(SelfReportResult, "self report", version=__version__, root=ws.root, root_reason=ws.root_reason,
                   surfaces=surfaces,
                   core={"version": core.version, "profile": core.profile, "target": core.target},
                   python=platform.python_version(), watching=WatchingReport(watch.by, watch.reason))


def _render_self(r: SelfReportResult) -> str:
    lines = [f"repoctx {r.version} (Python {r.python}; core {r.core.get('version')} {r.core.get('profile')} "
             f"{r.core.get('target')})", f"root: {r.root} ({r.root_reason})"]
    for s in r.surfaces:
        data = "has data" if s.has_data else "no data"
        lines.append(f"  {s.name:<10} {data:<8}  {plural(s.tools, 'tool')}, {plural(s.resources, 'resource')}")
    lines.append(f"watching: {r.watching.by} ({r.watching.reason})")
    return "\n".join(lines)


# --- schema -------------------------------------------------------------------


class CommandSchema(Struct):
    name: str  # the CLI words
    tool: str | None  # the MCP tool, or null for a CLI-only command
    params: dict  # a JSON Schema, usually a $ref into $defs
    result: dict


class SchemaResult(Envelope, kw_only=True):
    formats: dict[str, dict] | UnsetType = UNSET  # "<module>.<Struct>" -> the JSON Schema of a file format
    commands: list[CommandSchema] | UnsetType = UNSET  # every command's parameters and result
    defs: dict[str, dict] | UnsetType = msgspec.field(default=UNSET, name="$defs")  # shared by all of them


def format_structs() -> dict[str, type]:
    """Every file format: the msgspec Structs of `repoctx.formats` that no other Struct of
    their module contains (the files themselves, not their parts)."""
    import importlib
    import pkgutil

    import repoctx.formats as formats

    found: dict[str, type] = {}
    for info in sorted(pkgutil.iter_modules(formats.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"repoctx.formats.{info.name}")
        structs = [
            v for k, v in vars(module).items()
            if isinstance(v, type) and issubclass(v, Struct) and v.__module__ == module.__name__
            and not k.startswith("_")
        ]
        contained = set()
        for s in structs:
            contained |= set(msgspec.json.schema(s).get("$defs", {})) - {s.__name__}
        for s in structs:
            if s.__name__ not in contained:
                found[f"{info.name}.{s.__name__}"] = s
    return found


def schema(catalog, ws: Workspace, p: NoParams) -> SchemaResult:
    commands = catalog.all_commands()
    formats = format_structs()
    results = [tp for c in commands for tp in c.result_types]
    types = [c.params for c in commands] + results + list(formats.values())
    refs, defs = msgspec.json.schema_components(types, ref_template="#/$defs/{name}", schema_hook=core_schema)
    n, m = len(commands), len(results)
    params, result_refs = iter(refs[:n]), iter(refs[n:n + m])
    out = []
    for c in commands:
        members = [next(result_refs) for _ in c.result_types]
        out.append(CommandSchema(c.name, c.tool, next(params), members[0] if len(members) == 1 else {"anyOf": members}))
    return success(SchemaResult, "schema", formats=dict(zip(formats, refs[n + m:])), commands=out, defs=defs)


def _render_schema(r: SchemaResult) -> str:
    lines = ["File formats:", *(f"  {name}" for name in r.formats), "Commands (params -> result):"]
    lines += [f"  {c.name}" + (f"  [MCP {c.tool}]" if c.tool else "") for c in r.commands]
    lines.append("`repoctx schema --json` prints the JSON Schemas.")
    return "\n".join(lines)


# --- capabilities ---------------------------------------------------------------


class CapabilitiesResult(Envelope, kw_only=True):
    profile: str | None | UnsetType = UNSET  # null: the default (every contract; the surfaces with data listed)
    surfaces: list[str] | UnsetType = UNSET  # the surfaces listed now
    tools: list[str] | UnsetType = UNSET  # what `repoctx serve` lists here now, under the names it lists
    aliases: list[str] | UnsetType = UNSET  # the other names those tools answer to
    writing_tools: list[str] | UnsetType = UNSET
    resources: list[str] | UnsetType = UNSET
    read_only: bool | UnsetType = UNSET
    allowed_roots: list[str] | UnsetType = UNSET  # the root, then the roots a `path` override may name
    network_used: bool | UnsetType = UNSET  # repoctx never uses the network


def capabilities(catalog, ws: Workspace, p: NoParams) -> CapabilitiesResult:
    name = "capabilities"
    try:
        sel, shown = catalog.select(ws), catalog.listed(ws)
    except catalog.AllowlistError as exc:
        return failure(CapabilitiesResult, name, "config_error", str(exc))
    return success(
        CapabilitiesResult, name,
        profile=sel.profile,
        surfaces=list(shown.surfaces),
        tools=shown.tool_names,
        aliases=shown.aliases,
        writing_tools=[c.listed_name(shown.names) for c in shown.commands if c.writes],
        resources=[r.uri for r in shown.resources],
        read_only=ws.read_only,
        allowed_roots=[ws.root, *ws.allowed_roots],
        network_used=False,
    )


def _render_capabilities(r: CapabilitiesResult) -> str:
    if not r.ok:
        return r.error.message
    return "\n".join([
        f"profile: {r.profile or 'default (the surfaces with data)'}; surfaces: {', '.join(r.surfaces)}",
        f"tools ({len(r.tools)}): {', '.join(r.tools)}",
        *([f"aliases: {', '.join(r.aliases)}"] if r.aliases else []),
        f"resources: {', '.join(r.resources) or 'none'}",
        f"read-only: {'yes' if r.read_only else 'no'}; allowed roots: {', '.join(r.allowed_roots)}",
        "network: never used",
    ])


# --- validate --run ---------------------------------------------------------------


MAX_PROBLEMS = 100  # per check, in the result and the run


class ValidateParams(Struct):
    run: Annotated[
        bool,
        Meta(description="Record the validation as a run under .repoctx/runs/ (the default; "
             "--no-run only checks). Read-only servers check without recording."),
    ] = True
    strict: Annotated[
        bool,
        Meta(description="Also cross-check context files against the code (check scopes.consistency, as "
             "`repoctx scopes validate --strict`): listed files that do not exist, source files not listed, "
             "exports that no longer exist. Any finding fails."),
    ] = False


class CheckReport(Struct, omit_defaults=True):
    name: str
    surface: str
    status: str  # pass, warn, fail or skip
    message: str
    problems: list[str] = []


class ValidateResult(Envelope, kw_only=True):
    passed: bool | UnsetType = UNSET  # no check failed (warnings do not fail)
    checks: list[CheckReport] | UnsetType = UNSET
    recorded: bool | UnsetType = UNSET  # stored as a run (see `runs read latest`)


def run_checks(catalog, ws: Workspace, strict: bool = False) -> list[tuple[Check, CheckResult, float]]:
    """Every registered check (with `strict`, the strict ones too), each with its result and
    how long it took (ms)."""
    out = []
    for check in catalog.all_checks(strict):
        t0 = time.perf_counter()
        try:
            result = check.run(ws)
        except Exception as exc:  # a broken check is a failed check, never a crash of validate
            result = CheckResult("fail", f"the check itself failed ({type(exc).__name__})")
        if len(result.problems) > MAX_PROBLEMS:  # a result agents' clients can still take in
            more = len(result.problems) - MAX_PROBLEMS
            result = msgspec.structs.replace(result, problems=[*result.problems[:MAX_PROBLEMS], f"… and {more} more"])
        out.append((check, result, (time.perf_counter() - t0) * 1000))
    return out


def validate(catalog, ws: Workspace, p: ValidateParams) -> ValidateResult:
    from repoctx.control import runs

    name = "validate"
    started = time.time()
    t0 = time.perf_counter()
    results = run_checks(catalog, ws, p.strict)
    reports = [CheckReport(c.name, c.surface, r.status, r.message, r.problems) for c, r, _ in results]
    passed = all(r.status != "fail" for _c, r, _ in results)
    recorded = False
    if p.run and not ws.read_only:
        steps = [Step(name=c.name, surface=c.surface, status=r.status, message=r.message,
                      duration_ms=round(ms, 3), problems=r.problems) for c, r, ms in results]
        try:
            runs.record(ws, name, steps, started, (time.perf_counter() - t0) * 1000)
            recorded = True
        except (runs.RunsError, OSError):
            recorded = False
    if not passed:
        failed = [r for r in reports if r.status == "fail"]
        return failure(ValidateResult, name, "validation_failed",
                       f"{len(failed)} of {len(reports)} checks failed: {', '.join(r.name for r in failed)}",
                       passed=False, checks=reports, recorded=recorded)
    return success(ValidateResult, name, passed=True, checks=reports, recorded=recorded)


def _render_validate(r: ValidateResult) -> str:
    marks = {"pass": "✓", "warn": "⚠", "fail": "✗", "skip": "-"}
    lines = []
    for c in r.checks or []:
        lines.append(f"  {marks.get(c.status, '?')} {c.name:<24} {c.message}")
        lines += [f"      {x}" for x in c.problems]
    lines.append(r.error.message if not r.ok else f"All {len(r.checks)} checks passed.")
    if r.recorded:
        lines.append("Recorded as a run: `repoctx runs read latest`.")
    return "\n".join(lines)


# --- checks ---------------------------------------------------------------------


def _check_config(catalog, ws: Workspace) -> CheckResult:
    try:
        load_config(ws.root)
        shown = catalog.listed(ws)
    except (ConfigError, catalog.AllowlistError) as exc:
        return CheckResult("fail", str(exc))
    return CheckResult("pass", f"{plural(len(shown.commands), 'tool')} listed ({', '.join(shown.surfaces)})")


def checks(catalog) -> list[Check]:
    return [Check("control.config", "control", ".repoctx/config.yaml is valid and names known tools.",
                  functools.partial(_check_config, catalog))]


def commands(catalog) -> list[Command]:
    """The commands, each handed the catalog they describe."""
    def on(handler):
        return functools.partial(handler, catalog)

    return with_structured_invalid([
        Command(
            name="self report",
            tool="ctxt_self_report",
            summary="What this repoctx is: version, root, which surfaces have data, the core's build.",
            description="Start here to see which of scopes, caches, artifacts, project, tasks and control hold data "
            "in this repository and how many tools and resources each registers.",
            params=NoParams,
            result=SelfReportResult,
            handler=on(self_report), surface="control",
            is_error=is_failure,
            render=_render_self,
        ),
        Command(
            name="schema",
            tool="ctxt_schema",
            summary="JSON Schemas of every file format and every command's parameters and result.",
            description="Formats are the files repoctx reads or writes (.context.yaml, project.yaml, proposals, "
            "runs, config); commands include CLI-only ones (tool null).",
            params=NoParams,
            result=SchemaResult,
            handler=on(schema), surface="control",
            is_error=is_failure,
            render=_render_schema,
            # Schemas are for programs: compact JSON keeps them within what clients accept in one result.
            encode=lambda r: msgspec.json.encode(r).decode(),
        ),
        Command(
            name="capabilities",
            tool="ctxt_capabilities",
            summary="What this server exposes: enabled tools, read-only state, allowed roots; network_used is false.",
            description="The closed allowlist as the server applies it (serve --tools/--profile, else "
            ".repoctx/config.yaml, else every contract, listing the surfaces that have data). From the CLI "
            "(which takes serve's --tools, --profile, --names and --read-only): what a server started so "
            "would expose.",
            params=NoParams,
            result=CapabilitiesResult,
            handler=on(capabilities), surface="control",
            is_error=is_failure,
            server_view=True,
            render=_render_capabilities,
        ),
        Command(
            name="validate",
            tool="ctxt_validate_run",
            summary="Run every check repoctx has and record the run (as `repoctx validate --run`).",
            description="Context files, caches, artifacts, project.yaml, proposals and config; each check passes, "
            "warns, fails or is skipped when its surface has no data. Fails (non-zero exit, isError) when any "
            "check fails; the run is kept under .repoctx/runs/ (see ctxt_runs_read_latest). With strict "
            "(`repoctx validate --strict`), context files must also agree with the code: listed files exist, "
            "source files are listed, listed exports exist.",
            params=ValidateParams,
            result=ValidateResult,
            handler=on(validate), surface="control",
            is_error=is_failure,
            records=True,
            server_view=True,
            render=_render_validate,
        ),
    ])
