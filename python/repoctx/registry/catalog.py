"""The catalog: the only place that names the surfaces.

The views (cli.py, server.py) ask it for every command, resource, prompt and check; surfaces
never import it. Each package names in its `__init__.py` the modules that declare what it
serves (`MODULES`: "commands" in the order the CLI lists them, "resources", "prompts",
"checks", and "data": the modules whose `has_data(ws)` says the repository holds its files) and the module of each of its first CLI words (`CLI_WORDS`), so adding a tool,
resource, prompt or check touches its own package only, and one CLI command imports only its
own module. A module declares module-level lists (`COMMANDS`, `RESOURCES`, `PROMPTS`,
`CHECKS`) or, when what it serves is about the registry itself (control's capabilities and
validate, the report), a factory of the same name in lower case that is handed this module:
so no module imports the catalog that imports it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import sys
from types import ModuleType
from typing import Any

from repoctx.base.command import Check, Command, Prompt, Resource
from repoctx.base.workspace import Workspace
from repoctx.formats.config import SURFACES
from repoctx.registry import allowlist

# The surfaces, then the views' own commands (the report), in the order the CLI lists them.
PACKAGES = (*SURFACES, "views")


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"repoctx.{name}")


def _modules(kind: str) -> list[str]:
    return [f"{p}.{m}" for p in PACKAGES for m in _module(p).MODULES.get(kind, ())]


@functools.cache
def declared(module: str, kind: str) -> tuple[Any, ...]:
    """What `module` declares of `kind` ("commands", "resources", "prompts", "checks"): its
    list, or what its factory of that name makes of this catalog."""
    mod = _module(module)
    listed = getattr(mod, kind.upper(), None)
    if listed is None:
        listed = getattr(mod, kind)(sys.modules[__name__])
    package = module.split(".", 1)[0]
    return tuple(_stamped(x, package) for x in listed)


def _stamped(declared: Any, package: str) -> Any:
    """A command, resource or prompt with its surface: the package that declares it. The views'
    own declarations (the report) name the surface they join; a check names its own."""
    if isinstance(declared, Check) or declared.surface or package not in SURFACES:
        return declared
    return dataclasses.replace(declared, surface=package)


def all_commands() -> list[Command]:
    """Every command, in the order the CLI lists them."""
    return [cmd for module in _modules("commands") for cmd in declared(module, "commands")]


def cli_commands(word: str) -> list[Command] | None:
    """The commands whose CLI words start with `word`, importing only their module;
    None for a word no command starts with."""
    for package in PACKAGES:
        module = _module(package).CLI_WORDS.get(word)
        if module is not None:
            return [c for c in declared(f"{package}.{module}", "commands") if c.name.split()[0] == word]
    return None


def by_tool_name() -> dict[str, Command]:
    """MCP tool names (and their aliases) to commands."""
    table: dict[str, Command] = {}
    for cmd in all_commands():
        if cmd.tool:
            table[cmd.tool] = cmd
            for alias in cmd.aliases:
                table[alias] = cmd
    return table


def all_resources() -> list[Resource]:
    """Every MCP resource and resource template."""
    return [r for module in _modules("resources") for r in declared(module, "resources")]


def all_prompts() -> list[Prompt]:
    """Every MCP prompt."""
    return [p for module in _modules("prompts") for p in declared(module, "prompts")]


def all_checks(strict: bool = False) -> list[Check]:
    """Every check `validate` runs; with `strict`, also those only `validate --strict` runs."""
    checks = [c for module in _modules("checks") for c in declared(module, "checks")]
    return [c for c in checks if not c.strict] + ([c for c in checks if c.strict] if strict else [])


AllowlistError = allowlist.AllowlistError


def surfaces_with_data(ws: Workspace) -> tuple[str, ...]:
    """The surfaces whose files exist in this repository: each package's "data" modules say,
    by `has_data(ws)`; a package that names none (tasks, whose data is the source itself, and
    control) always has data."""
    found = []
    for surface in SURFACES:
        modules = _module(surface).MODULES.get("data", ())
        if not modules or any(_module(f"{surface}.{m}").has_data(ws) for m in modules):
            found.append(surface)
    return tuple(found)


def listed(ws: Workspace) -> allowlist.Listing:
    """What a server on `ws` lists now (raises allowlist.AllowlistError)."""
    return select(ws).listed(surfaces_with_data(ws))


@functools.cache
def select(ws: Workspace) -> allowlist.Selection:
    """What a server on `ws` accepts (raises allowlist.AllowlistError). Decided once per
    workspace: a server's allowlist is fixed when it starts, and ctxt_capabilities reports
    that one even if the config changes meanwhile."""
    return allowlist.select(ws, all_commands(), all_resources())


def connection_observers(ws: Workspace) -> list[Any]:
    """Objects the server tells about one client connection, each call from a worker thread:
    `connected()`, `tool_called(tool, arguments, structured_result)` after every tool call,
    `disconnected()`. They never raise. (project.sessions.Tracker records sessions.)"""
    tracker = _module("project.sessions").tracker_for(ws)
    return [tracker] if tracker is not None else []


def warm_up(ws: Workspace, listed: dict[str, Command]) -> None:
    """Build what the first answers of the listed tools (by name) would wait for: the scopes
    table (a listing builds it), then, when artifact globs may be asked, the annotation index,
    and the task index when a saved one is on disk (base/task_index.warm: a server here was asked
    for task context before). Without one it is built on the first `task_context` call, so a
    server that is never asked for task context neither holds it nor writes
    `.repoctx/task-index.bin`."""
    if "list_contexts" in listed:
        cmd = listed["list_contexts"]
        cmd.handler(ws, cmd.parse({}))
    if "task_context" in listed:
        from repoctx.base import task_index

        task_index.warm(ws)
    if "mcp_find_by_path" in listed:
        _module("artifacts.store").warm(ws)


def record_run(ws: Workspace, name: str, steps: list[Any], started: float, ms: float) -> str | None:
    """Keep a CI-mode check (`--check`, `--ci`) as a run under .repoctx/runs/, as `validate
    --run` does; None when kept, else why not."""
    runs = _module("control.runs")
    try:
        runs.record(ws, name, steps, started, ms)
    except (runs.RunsError, OSError) as exc:
        return str(exc)
    return None
