"""The catalog: the only place that names the surfaces' modules.

The views (cli.py, server.py) ask it for every command, resource, prompt and check;
surfaces never import it. A module declares what it serves as module-level lists
(`COMMANDS`, `RESOURCES`, `PROMPTS`, `CHECKS`) or, when what it serves is about the
registry itself (control's capabilities and validate, the report), as a factory of the
same name in lower case that is handed this module: so no module imports the catalog
that imports it. One CLI command imports only the module that declares it (CLI_WORDS).
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from repoctx.base.command import Check, Command, Prompt, Resource
from repoctx.registry import allowlist

# The modules that declare commands, in the order the CLI lists them.
COMMAND_MODULES = (
    "scopes.read", "scopes.write", "caches.engine", "artifacts.tools", "project.overview",
    "project.sessions", "control.introspect", "control.proposals", "control.runs", "control.clients",
    "views.report",
)
RESOURCE_MODULES = ("project.overview", "project.sessions", "artifacts.tools")
PROMPT_MODULES = ("artifacts.tools",)
# In the order `validate` runs them; checks that only `validate --strict` runs come last.
CHECK_MODULES = (
    "project.sessions", "scopes.checks", "caches.engine", "artifacts.tools", "project.overview",
    "control.introspect", "control.proposals",
)

# The first CLI word of each command and the module declaring it, so one CLI command
# imports only its own module (tests/control/test_cli_words.py keeps this equal to the registry).
CLI_WORDS = {
    "status": "scopes.read", "check": "scopes.read", "show": "scopes.read",
    "init": "scopes.write", "regen": "scopes.write", "rehash": "scopes.write",
    "update": "scopes.write", "scopes": "scopes.write",
    "resolve": "caches.engine", "cache": "caches.engine",
    "artifacts": "artifacts.tools", "project": "project.overview", "sessions": "project.sessions",
    "self": "control.introspect", "schema": "control.introspect", "capabilities": "control.introspect",
    "validate": "control.introspect",
    "propose": "control.proposals", "proposals": "control.proposals", "runs": "control.runs",
    "install": "control.clients", "agent": "control.clients", "report": "views.report",
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"repoctx.{name}")


@functools.cache
def declared(module: str, kind: str) -> tuple:
    """What `module` declares of `kind` ("commands", "resources", "prompts", "checks"): its
    list, or what its factory of that name makes of this catalog."""
    mod = _module(module)
    listed = getattr(mod, kind.upper(), None)
    if listed is None:
        factory = getattr(mod, kind, None)
        listed = factory(_this()) if factory is not None else ()
    return tuple(listed)


def _this() -> ModuleType:
    import sys

    return sys.modules[__name__]


def all_commands() -> list[Command]:
    """Every command, in the order the CLI lists them."""
    return [cmd for module in COMMAND_MODULES for cmd in declared(module, "commands")]


def cli_commands(word: str) -> list[Command] | None:
    """The commands whose CLI words start with `word`, importing only their module;
    None for a word no command starts with."""
    module = CLI_WORDS.get(word)
    if module is None:
        return None
    return [c for c in declared(module, "commands") if c.name.split()[0] == word]


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
    return [r for module in RESOURCE_MODULES for r in declared(module, "resources")]


def all_prompts() -> list[Prompt]:
    """Every MCP prompt."""
    return [p for module in PROMPT_MODULES for p in declared(module, "prompts")]


def all_checks(strict: bool = False) -> list[Check]:
    """Every check `validate` runs; with `strict`, also those only `validate --strict` runs."""
    checks = [c for module in CHECK_MODULES for c in declared(module, "checks")]
    return [c for c in checks if not c.strict] + ([c for c in checks if c.strict] if strict else [])


AllowlistError = allowlist.AllowlistError
surfaces_with_data = allowlist.surfaces_with_data


@functools.cache
def select(ws) -> allowlist.Selection:
    """What a server on `ws` accepts (raises allowlist.AllowlistError). Decided once per
    workspace: a server's allowlist is fixed when it starts, and ctxt_capabilities reports
    that one even if the config changes meanwhile."""
    return allowlist.select(ws, all_commands(), all_resources())


def connection_observers(ws) -> list:
    """Objects the server tells about one client connection, each call from a worker thread:
    `connected()`, `tool_called(tool, arguments, structured_result)` after every tool call,
    `disconnected()`. They never raise. (project.sessions.Tracker records sessions.)"""
    tracker = _module("project.sessions").tracker_for(ws)
    return [tracker] if tracker is not None else []


def warm_up(ws, listed: dict[str, Command]) -> None:
    """Build what the first answers of the listed tools (by name) would wait for: the scopes
    table (a listing builds it), then, when artifact globs may be asked, the annotation index."""
    if "list_contexts" in listed:
        cmd = listed["list_contexts"]
        cmd.handler(ws, cmd.parse({}))
    if "mcp_find_by_path" in listed:
        _module("artifacts.store").warm(ws)
