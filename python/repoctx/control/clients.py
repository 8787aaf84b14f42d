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
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.base import fs, launcher
from repoctx.base.command import CliView, Command
from repoctx.base.errors import RepoctxError
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
    # Where a prompt hook is registered (`install --hook`): only clients whose hook can hand the
    # agent text; Cursor's beforeSubmitPrompt can only let a prompt through or stop it.
    hook_path: Callable[[Workspace], str] | None = None


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
        # No --root: the server finds the repository from wherever Claude Code starts it, a
        # subdirectory included (base/rootfind.py).
        entry=lambda ws, cmd, pre: {"type": "stdio", "command": cmd, "args": [*pre, "serve"], "env": {}},
        hook_path=lambda ws: os.path.join(ws.root, ".claude", "settings.json"),
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


class _Unreadable(RepoctxError):
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

HOOK_EVENT = "UserPromptSubmit"
HOOK_WORD = "prompt-hook"  # the CLI word the hook runs (views/prompt_hook.py)
HOOK_TIMEOUT_S = 10  # Claude Code gives up on the hook after this; the prompt goes on without context


class InstallParams(Struct):
    client: Annotated[ClientName, Meta(description="Which client to register repoctx with")]
    name: Annotated[str, Meta(min_length=1, description="The server's name in the client (default repoctx)")] = "repoctx"
    dry_run: Annotated[bool, Meta(description="Show the change without writing it")] = False
    force: Annotated[bool, Meta(description="Replace a different server already registered under the name")] = False
    hook: Annotated[bool, Meta(description="Also register a prompt hook that hands the agent the files that matter "
                                           "for each prompt (claude-code: UserPromptSubmit in .claude/settings.json)")] = False


Action = Literal["added", "replaced", "unchanged"]


class InstallResult(Envelope, kw_only=True):
    client: str | UnsetType = UNSET
    path: str | UnsetType = UNSET
    action: Action | UnsetType = UNSET
    server: str | UnsetType = UNSET
    entry: dict | UnsetType = UNSET
    other_servers: list[str] | UnsetType = UNSET  # kept as they were
    hook_path: str | UnsetType = UNSET
    hook_action: Action | UnsetType = UNSET
    hook: dict | UnsetType = UNSET  # the hook entry, as the client's file holds it
    dry_run: bool | UnsetType = UNSET


def install(ws: Workspace, p: InstallParams) -> InstallResult:
    with locked(ws.root):  # a project client's config is a repository file, read, merged and written
        return _install(ws, p)


def _project_file(ws: Workspace, client: str, path: str) -> str | None:
    """Why a client's file cannot be read or written here, or None."""
    if client not in GLOBAL_CLIENTS and not ws.contains_real(path):
        # A project file (or its directory) that is a link out: reading it would copy what it
        # points at into the repository, writing it would write there.
        return f"{path} leads outside the repository through a link; not read or written"
    return None


def _read_object(path: str) -> dict:
    """The JSON object in `path` ({} when absent); _Unreadable otherwise."""
    try:
        data = _read_json(path)
    except _Unreadable as exc:
        raise _Unreadable(f"{path} {exc}; add the entry by hand") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _Unreadable(f"{path} is not a JSON object")
    return data


def _write_object(path: str, data: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n")


def _install(ws: Workspace, p: InstallParams) -> InstallResult:
    name = "install"
    client = CLIENTS[p.client]
    path = client.install_path(ws)
    fields = {"client": p.client, "path": path, "server": p.name}
    if p.hook and client.hook_path is None:
        return failure(InstallResult, name, "invalid_argument",
                       f"{client.label} has no prompt hook that can hand the agent context; --hook is for claude-code",
                       **fields)
    if (why := _project_file(ws, p.client, path)) is not None:
        return failure(InstallResult, name, "invalid_path", why, **fields)
    try:
        data = _read_object(path)
    except _Unreadable as exc:
        return failure(InstallResult, name, "config_error", str(exc), **fields)
    servers = data.get(client.servers_key, {})
    if not isinstance(servers, dict):
        return failure(InstallResult, name, "config_error",
                       f"{path}: `{client.servers_key}` is not an object; fix it by hand", **fields)
    words = launcher.command()
    if (why := launcher.why_it_fails(words)) is not None:
        return failure(InstallResult, name, "io_error", f"{why}; nothing was written", **fields)
    entry = client.entry(ws, words[0], words[1:])
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
    hook_fields = {}
    if p.hook:
        hook_path = client.hook_path(ws)
        if (why := _project_file(ws, p.client, hook_path)) is not None:
            return failure(InstallResult, name, "invalid_path", why, **fields)
        try:
            settings = _read_object(hook_path)
            hook, hook_action, new_settings = _with_hook(settings, hook_path, words)
        except _Unreadable as exc:
            return failure(InstallResult, name, "config_error", str(exc), **fields)
        hook_fields = {"hook_path": hook_path, "hook_action": hook_action, "hook": hook}
        if hook_action != "unchanged" and not p.dry_run:
            _write_object(hook_path, new_settings)
    if action != "unchanged" and not p.dry_run:
        _write_object(path, {**data, client.servers_key: {**servers, p.name: entry}})
    return success(InstallResult, name, action=action, entry=entry, other_servers=others, dry_run=p.dry_run,
                   **fields, **hook_fields)


def _runs_hook(group: Any) -> bool:
    """Whether a hook group of the client's settings runs repoctx's prompt hook."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    for h in hooks if isinstance(hooks, list) else ():
        command = h.get("command") if isinstance(h, dict) else None
        try:
            words = shlex.split(command) if isinstance(command, str) else []
        except ValueError:
            continue
        if HOOK_WORD in words and runs_repoctx({"command": words[0], "args": words[1:]}):
            return True
    return False


def _hook_groups(settings: dict, path: str) -> list:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.get(HOOK_EVENT, []), list):
        raise _Unreadable(f"{path}: `hooks.{HOOK_EVENT}` is not a list; fix it by hand")
    return hooks.get(HOOK_EVENT, [])


def _with_hook(settings: dict, path: str, words: list[str]) -> tuple[dict, Action, dict]:
    """(repoctx's hook group, what changes, the settings with it): any earlier repoctx hook
    is replaced, every other hook kept in its place."""
    groups = _hook_groups(settings, path)
    group = {"hooks": [{"type": "command", "command": shlex.join([*words, HOOK_WORD]), "timeout": HOOK_TIMEOUT_S}]}
    ours = [g for g in groups if _runs_hook(g)]
    if ours == [group]:
        return group, "unchanged", settings
    kept = [g for g in groups if not _runs_hook(g)]
    hooks = {**settings.get("hooks", {}), HOOK_EVENT: [*kept, group]}
    return group, ("replaced" if ours else "added"), {**settings, "hooks": hooks}


def _render_install(r: InstallResult) -> str:
    if not r.ok:
        return r.error.message
    entry = msgspec.json.format(msgspec.json.encode(r.entry), indent=2).decode()
    kept = f" (kept {plural(len(r.other_servers), 'other server')}: {', '.join(r.other_servers)})" if r.other_servers else ""
    verbs = ({"added": "Would add", "replaced": "Would replace"} if r.dry_run
             else {"added": "Added", "replaced": "Replaced"})
    if r.action == "unchanged":
        lines = [f'{r.path} already registers "{r.server}" exactly so; nothing changed.']
    else:
        lines = [f'{verbs[r.action]} server "{r.server}" in {r.path}{kept}:\n{entry}']
    if r.hook_action is UNSET:
        pass
    elif r.hook_action == "unchanged":
        lines.append(f"{r.hook_path} already runs repoctx's prompt hook; nothing changed.")
    else:
        lines.append(f"{verbs[r.hook_action]} the {HOOK_EVENT} prompt hook in {r.hook_path}: "
                     f"{r.hook['hooks'][0]['command']}")
    return "\n".join(lines)


# --- repoctx uninstall CLIENT --------------------------------------------------------


class UninstallParams(Struct):
    client: Annotated[ClientName, Meta(description="Which client to remove repoctx from")]
    name: Annotated[str, Meta(min_length=1, description="The server's name in the client (default repoctx)")] = "repoctx"
    dry_run: Annotated[bool, Meta(description="Show the change without writing it")] = False


class UninstallResult(Envelope, kw_only=True):
    client: str | UnsetType = UNSET
    removed: list[str] | UnsetType = UNSET  # each as "<what> from <file>"
    dry_run: bool | UnsetType = UNSET


def uninstall(ws: Workspace, p: UninstallParams) -> UninstallResult:
    with locked(ws.root):
        return _uninstall(ws, p)


def _uninstall(ws: Workspace, p: UninstallParams) -> UninstallResult:
    """Remove what `install` wrote: the server entry (only when it runs repoctx) and the
    prompt hook; every other server, hook and key stays."""
    name = "uninstall"
    client = CLIENTS[p.client]
    changes: list[tuple[str, str, dict]] = []  # (what, file, the file's new content)
    paths = [client.install_path(ws)] + ([client.hook_path(ws)] if client.hook_path else [])
    try:
        for path in paths:
            if (why := _project_file(ws, p.client, path)) is not None:
                return failure(UninstallResult, name, "invalid_path", why, client=p.client)
            data = _read_object(path)
            if path == paths[0]:
                servers = data.get(client.servers_key)
                entry = servers.get(p.name) if isinstance(servers, dict) else None
                if entry is not None and not runs_repoctx(entry):
                    return failure(UninstallResult, name, "conflict", f'{path}: the server "{p.name}" does not run '
                                   "repoctx; left as it is (pass --name to name repoctx's)", client=p.client)
                if entry is not None:
                    rest = {k: v for k, v in servers.items() if k != p.name}
                    changes.append((f'server "{p.name}"', path, {**data, client.servers_key: rest}))
            elif data and any(_runs_hook(g) for g in _hook_groups(data, path)):
                kept = [g for g in _hook_groups(data, path) if not _runs_hook(g)]
                hooks = {k: v for k, v in data["hooks"].items() if k != HOOK_EVENT} | ({HOOK_EVENT: kept} if kept else {})
                changes.append((f"the {HOOK_EVENT} prompt hook", path, {**data, "hooks": hooks}))
    except _Unreadable as exc:
        return failure(UninstallResult, name, "config_error", str(exc), client=p.client)
    if not p.dry_run:
        for _, path, data in changes:
            _write_object(path, data)
    return success(UninstallResult, name, client=p.client, removed=[f"{what} from {path}" for what, path, _ in changes],
                   dry_run=p.dry_run)


def _render_uninstall(r: UninstallResult) -> str:
    if not r.ok:
        return r.error.message
    if not r.removed:
        return f"repoctx is not registered with {CLIENTS[r.client].label} here; nothing changed."
    verb = "Would remove" if r.dry_run else "Removed"
    return "\n".join(f"{verb} {what}" for what in r.removed)


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
        "claude_desktop_config.json), keeps every other server, and prints what changed. The command written is "
        "the absolute path of this repoctx, checked to start with PATH emptied. With --hook (claude-code), also "
        "registers a UserPromptSubmit hook in .claude/settings.json that runs `repoctx prompt-hook`.",
        params=InstallParams,
        result=InstallResult,
        handler=install,
        is_error=is_failure,
        writes=True,
        cli=CliView(positional=("client",), render=_render_install),
    ),
    Command(
        name="uninstall",
        tool=None,
        summary="Remove what `repoctx install` wrote for a client: its server entry and its prompt hook.",
        description="Removes the server entry (only when it starts repoctx) from the client's config file and, "
        "for claude-code, repoctx's UserPromptSubmit hook from .claude/settings.json; keeps every other server, "
        "hook and key.",
        params=UninstallParams,
        result=UninstallResult,
        handler=uninstall,
        is_error=is_failure,
        writes=True,
        cli=CliView(positional=("client",), render=_render_uninstall),
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
        cli=CliView(render=_render_discover),
    ),
])
