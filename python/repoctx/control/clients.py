"""MCP client setup: `repoctx install CLIENT` and `agent discover`.

Each client's documented configuration file: Claude Code's project `.mcp.json`,
Claude Desktop's `claude_desktop_config.json`, Cursor's `.cursor/mcp.json` and
VS Code's `.vscode/mcp.json` (top-level `servers`). Installing merges one
entry into the file and never touches the other servers; `--dry-run` only
shows the change. Discovery reads the same files plus the user-wide ones.
Locations follow HOME (and XDG_CONFIG_HOME or APPDATA), so tests can move them.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.base import fs
from repoctx.base.command import Command
from repoctx.base.results import Envelope, failure, is_failure, success, with_structured_invalid
from repoctx.base.words import plural
from repoctx.base.workspace import Workspace, atomic_write, locked
from repoctx.formats import bounded

MAX_CONFIG_BYTES = 16 << 20  # ~/.claude.json also holds history and can be large

ClientName = Literal["claude-code", "claude-desktop", "cursor", "vscode"]


def _home() -> str:
    return os.path.expanduser("~")


def _config_home() -> str:
    """Where desktop apps keep their settings on this platform."""
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Application Support")
    if sys.platform == "win32":
        return os.environ.get("APPDATA") or os.path.join(_home(), "AppData", "Roaming")
    return os.environ.get("XDG_CONFIG_HOME") or os.path.join(_home(), ".config")


def _servers(data: Any, *keys: str) -> dict | None:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


@dataclass(frozen=True)
class Client:
    label: str
    servers_key: str  # "mcpServers", or "servers" for VS Code
    install_path: Callable[[Workspace], str]
    # (scope, path, keys leading from the file's top level to its servers object)
    config_files: Callable[[Workspace], list[tuple[str, str, tuple[str, ...]]]]
    entry: Callable[[Workspace, str, list[str]], dict]


def _launcher(absolute: bool) -> tuple[str, list[str]]:
    """How to start repoctx: the `repoctx` script when it is on PATH, else this Python with -m.
    GUI apps do not see the shell's PATH, so they get an absolute path."""
    script = shutil.which("repoctx")
    if script:
        return (os.path.abspath(script) if absolute else "repoctx"), []
    return sys.executable, ["-m", "repoctx"]


CLIENTS: dict[str, Client] = {
    "claude-code": Client(
        label="Claude Code",
        servers_key="mcpServers",
        install_path=lambda ws: os.path.join(ws.root, ".mcp.json"),
        config_files=lambda ws: [
            ("project", os.path.join(ws.root, ".mcp.json"), ("mcpServers",)),
            ("user", os.path.join(_home(), ".claude.json"), ("mcpServers",)),
            ("local", os.path.join(_home(), ".claude.json"), ("projects", ws.root, "mcpServers")),
        ],
        # Claude Code sets CLAUDE_PROJECT_DIR for the servers it starts and expands ${VAR:-default}.
        entry=lambda ws, cmd, pre: {
            "type": "stdio", "command": cmd, "args": [*pre, "serve", "--root", "${CLAUDE_PROJECT_DIR:-.}"], "env": {},
        },
    ),
    "claude-desktop": Client(
        label="Claude Desktop",
        servers_key="mcpServers",
        install_path=lambda ws: os.path.join(_config_home(), "Claude", "claude_desktop_config.json"),
        config_files=lambda ws: [
            ("user", os.path.join(_config_home(), "Claude", "claude_desktop_config.json"), ("mcpServers",)),
        ],
        entry=lambda ws, cmd, pre: {"command": cmd, "args": [*pre, "serve", "--root", ws.root]},
    ),
    "cursor": Client(
        label="Cursor",
        servers_key="mcpServers",
        install_path=lambda ws: os.path.join(ws.root, ".cursor", "mcp.json"),
        config_files=lambda ws: [
            ("project", os.path.join(ws.root, ".cursor", "mcp.json"), ("mcpServers",)),
            ("user", os.path.join(_home(), ".cursor", "mcp.json"), ("mcpServers",)),
        ],
        entry=lambda ws, cmd, pre: {"command": cmd, "args": [*pre, "serve", "--root", "${workspaceFolder}"]},
    ),
    "vscode": Client(
        label="VS Code",
        servers_key="servers",
        install_path=lambda ws: os.path.join(ws.root, ".vscode", "mcp.json"),
        config_files=lambda ws: [
            ("project", os.path.join(ws.root, ".vscode", "mcp.json"), ("servers",)),
            ("user", os.path.join(_config_home(), "Code", "User", "mcp.json"), ("servers",)),
        ],
        entry=lambda ws, cmd, pre: {
            "type": "stdio", "command": cmd, "args": [*pre, "serve", "--root", "${workspaceFolder}"],
        },
    ),
}
GLOBAL_CLIENTS = {"claude-desktop"}  # user-wide files: the entry names the root and an absolute command


class _Unreadable(Exception):
    pass


def _read_json(path: str) -> Any:
    """The parsed file; None when absent; _Unreadable when it is not plain JSON."""
    try:
        raw = fs.read_head(*fs.split(path), MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _Unreadable(f"cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise _Unreadable(f"is larger than {MAX_CONFIG_BYTES} bytes")
    if not raw.strip():
        return {}
    try:
        return bounded.json(raw)
    except msgspec.DecodeError as exc:
        raise _Unreadable(f"is not plain JSON ({exc}); comments and trailing commas are not merged") from None


def runs_repoctx(entry: Any) -> bool:
    """Whether a server entry starts repoctx (`repoctx …`, `python -m repoctx …`, `uvx repoctx …`)."""
    if not isinstance(entry, dict):
        return False
    words = [entry.get("command")] + list(entry.get("args") or [])
    return any(isinstance(w, str) and os.path.basename(w).removesuffix(".exe") == "repoctx" for w in words)


# --- repoctx install CLIENT ----------------------------------------------------------


class InstallParams(Struct):
    client: Annotated[ClientName, Meta(description="Which client to register repoctx with")]
    name: Annotated[str, Meta(min_length=1, description="The server's name in the client (default repoctx)")] = "repoctx"
    dry_run: Annotated[bool, Meta(description="Show the change without writing it")] = False
    force: Annotated[bool, Meta(description="Replace a different server already registered under the name")] = False


class InstallResult(Envelope, kw_only=True):
    client: str | UnsetType = UNSET
    path: str | UnsetType = UNSET
    action: Literal["added", "replaced", "unchanged"] | UnsetType = UNSET
    server: str | UnsetType = UNSET
    entry: dict | UnsetType = UNSET
    other_servers: list[str] | UnsetType = UNSET  # kept as they were
    dry_run: bool | UnsetType = UNSET


def install(ws: Workspace, p: InstallParams) -> InstallResult:
    with locked(ws.root):  # a project client's config is a repository file, read, merged and written
        return _install(ws, p)


def _install(ws: Workspace, p: InstallParams) -> InstallResult:
    name = "install"
    client = CLIENTS[p.client]
    path = client.install_path(ws)
    fields = {"client": p.client, "path": path, "server": p.name}
    if p.client not in GLOBAL_CLIENTS and not ws.contains_real(path):
        # A project file (or its directory) that is a link out: reading it would copy what it
        # points at into the repository, writing it would write there.
        return failure(InstallResult, name, "invalid_path",
                       f"{path} leads outside the repository through a link; not read or written", **fields)
    try:
        data = _read_json(path)
    except _Unreadable as exc:
        return failure(InstallResult, name, "config_error", f"{path} {exc}; add the server by hand", **fields)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return failure(InstallResult, name, "config_error", f"{path} is not a JSON object", **fields)
    servers = data.get(client.servers_key, {})
    if not isinstance(servers, dict):
        return failure(InstallResult, name, "config_error",
                       f"{path}: `{client.servers_key}` is not an object; fix it by hand", **fields)
    cmd, pre = _launcher(absolute=p.client in GLOBAL_CLIENTS)
    entry = client.entry(ws, cmd, pre)
    current = servers.get(p.name)
    others = [k for k in servers if k != p.name]
    if current == entry:
        action = "unchanged"
    elif current is not None and not p.force:
        return failure(InstallResult, name, "conflict",
                       f'{path} already has a different server named "{p.name}"; pass --force to replace it '
                       "or --name to add repoctx under another name", entry=entry, other_servers=others, **fields)
    else:
        action = "replaced" if current is not None else "added"
    if action != "unchanged" and not p.dry_run:
        merged = {**data, client.servers_key: {**servers, p.name: entry}}
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, msgspec.json.format(msgspec.json.encode(merged), indent=2) + b"\n")
    return success(InstallResult, name, action=action, entry=entry, other_servers=others, dry_run=p.dry_run, **fields)


def _render_install(r: InstallResult) -> str:
    if not r.ok:
        return r.error.message
    entry = msgspec.json.format(msgspec.json.encode(r.entry), indent=2).decode()
    kept = f" (kept {plural(len(r.other_servers), 'other server')}: {', '.join(r.other_servers)})" if r.other_servers else ""
    if r.action == "unchanged":
        return f'{r.path} already registers "{r.server}" exactly so; nothing changed.'
    verb = {"added": "Added", "replaced": "Replaced"}[r.action]
    if r.dry_run:
        verb = {"added": "Would add", "replaced": "Would replace"}[r.action]
    return f'{verb} server "{r.server}" in {r.path}{kept}:\n{entry}'


# --- agent discover ------------------------------------------------------------------


class DiscoverParams(Struct):
    pass


class ConfigFile(Struct, omit_defaults=True):
    scope: str  # project (this repository), local (this repository, private) or user
    path: str
    exists: bool
    servers: list[str] = []  # the names of every server the file registers
    repoctx: list[str] = []  # those that start repoctx
    problem: str | UnsetType = UNSET


class ClientReport(Struct):
    client: str
    label: str
    configured: bool  # at least one of its files exists
    registered: bool  # repoctx is registered in one of them
    files: list[ConfigFile]


class DiscoverResult(Envelope, kw_only=True):
    clients: list[ClientReport] | UnsetType = UNSET


def discover(ws: Workspace, p: DiscoverParams) -> DiscoverResult:
    reports = []
    for key, client in CLIENTS.items():
        files = []
        for scope, path, keys in client.config_files(ws):
            if scope == "project" and not ws.contains_real(path):
                files.append(ConfigFile(scope, path, os.path.lexists(path),
                                        problem="leads outside the repository through a link; not read"))
                continue
            try:
                data = _read_json(path)
            except _Unreadable as exc:
                files.append(ConfigFile(scope, path, True, problem=f"the file {exc}"))
                continue
            if data is None:
                files.append(ConfigFile(scope, path, False))
                continue
            servers = _servers(data, *keys) or {}
            files.append(ConfigFile(scope, path, True, sorted(servers),
                                    sorted(k for k, v in servers.items() if runs_repoctx(v))))
        reports.append(ClientReport(key, client.label, any(f.exists for f in files),
                                    any(f.repoctx for f in files), files))
    return success(DiscoverResult, "agent discover", clients=reports)


def _render_discover(r: DiscoverResult) -> str:
    lines = []
    for c in r.clients:
        state = "repoctx registered" if c.registered else ("configured, repoctx not registered" if c.configured else "not configured")
        lines.append(f"{c.label}: {state}")
        for f in c.files:
            if f.exists:
                detail = f.problem or (plural(len(f.servers), "server") + (f", repoctx as {', '.join(f.repoctx)}" if f.repoctx else ""))
                lines.append(f"  {f.scope:<8} {f.path}: {detail}")
    lines.append("Register with `repoctx install claude-code|claude-desktop|cursor|vscode`.")
    return "\n".join(lines)


COMMANDS = with_structured_invalid([
    Command(
        name="install",
        tool=None,
        summary="Register repoctx with an MCP client: claude-code, claude-desktop, cursor or vscode.",
        description="Merges one server entry into the client's documented config file (Claude Code: "
        ".mcp.json; Cursor: .cursor/mcp.json; VS Code: .vscode/mcp.json; Claude Desktop: its user-wide "
        "claude_desktop_config.json), keeps every other server, and prints what changed.",
        params=InstallParams,
        result=InstallResult,
        handler=install,
        is_error=is_failure,
        writes=True,
        positional=("client",),
        render=_render_install,
    ),
    Command(
        name="agent discover",
        tool="ctxt_agent_discover",
        summary="Which MCP clients are configured on this machine, and whether repoctx is registered in each.",
        description="Reads the config files `repoctx install` writes (and the user-wide ones) for Claude Code, "
        "Claude Desktop, Cursor and VS Code; lists server names only, never commands or environments.",
        params=DiscoverParams,
        result=DiscoverResult,
        handler=discover,
        is_error=is_failure,
        render=_render_discover,
    ),
])
