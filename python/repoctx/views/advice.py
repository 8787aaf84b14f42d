"""What the CLI tells a person beyond a command's own result: problems in the
configuration files, and the next step after a result that is an error or empty.

All of it goes to stderr and only in the human view, so `--json` stays exactly
what the MCP tool returns.
"""

from __future__ import annotations

import os

from repoctx.base import fs
from repoctx.base.workspace import CONFIG_FILE, load_yaml_file
from repoctx.formats import bounded

VALIDATE = "`repoctx validate` lists every problem"


def config_problems(root: str) -> list[str]:
    """One line per configuration file that exists but cannot be used as written."""
    problems = []
    from repoctx.formats import config

    try:
        config.load(root)
    except config.ConfigError as exc:
        # formats.config.load is the one place that decides: every command that reads the file
        # refuses it (serve, capabilities, context, …), so no default is claimed here.
        problems.append(f"{exc}; commands that read it fail until it is fixed ({VALIDATE})")
    problems += _scan_config(root)
    from repoctx.formats import artifact as fa

    try:
        fa.parse_config(fs.read_text(root, ".contextia/config.yaml"))
    except FileNotFoundError:
        pass
    except OSError as exc:  # a link out among them: strerror names it
        problems.append(f".contextia/config.yaml: {exc.strerror}; artifacts commands may fail until it is fixed ({VALIDATE})")
    except fa.DocumentError as exc:
        problems.append(f".contextia/{exc}; artifacts commands may fail until it is fixed ({VALIDATE})")
    return problems


def read_problems(cmd, root: str) -> list[str]:
    """Files a command reads in passing and would leave out without a word when broken: the
    task context reads `.repoctx/project.yaml`'s modules as notes (rust/tasks/written.rs)."""
    if cmd.surface != "tasks":
        return []
    from repoctx.formats.project_file import PROJECT_FILE

    try:
        data = bounded.yaml(fs.read_bytes(root, PROJECT_FILE))
    except OSError:  # absent, or not a file to read: nothing to leave out
        return []
    except bounded.YamlError as exc:
        return [f"{exc.at(PROJECT_FILE)}; its modules are left out of the task context until it is fixed"]
    if data is not None and not isinstance(data, dict):
        return [f"{PROJECT_FILE}: not a YAML mapping; its modules are left out of the task context until it is fixed"]
    return []


def _scan_config(root: str) -> list[str]:
    try:
        if not fs.is_file(root, CONFIG_FILE):
            return []
    except OSError as exc:  # a link that leads out
        return [f"{CONFIG_FILE}: {exc.strerror}; the defaults apply"]
    try:
        data = load_yaml_file(os.path.join(root, CONFIG_FILE))
    except bounded.YamlError as exc:
        return [f"{exc.at(CONFIG_FILE)}; the defaults apply until it is fixed"]
    if not isinstance(data, dict):
        return [f"{CONFIG_FILE}: not a YAML mapping (e.g. `min_tokens: 4096`); the defaults apply until it is fixed"]
    wrong = [f"{name} must be {kind}" for name, kind, ok in (
        ("min_tokens", "an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
        ("max_depth", "a positive integer", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1),
        ("ignore", f"a list of glob patterns of at most {bounded.MAX_SETTING} characters",
         lambda v: isinstance(v, list) and all(bounded.is_setting(p) for p in v)),
        ("include_fixtures", "true or false", lambda v: isinstance(v, bool)),
    ) if name in data and not ok(data[name])]
    if not wrong:
        return []
    defaults = "its default applies" if len(wrong) == 1 else "their defaults apply"
    return [f"{CONFIG_FILE}: {', '.join(wrong)}; {defaults} until the file is fixed"]


def next_step(cmd, result, ws, arguments: dict) -> str | None:
    """A line saying what to do after this result, when the result alone does not."""
    if cmd.cli and cmd.cli.advise is not None:
        return cmd.cli.advise(ws, arguments, result)
    root = ws.root
    error = getattr(result, "error", None)
    text = error if isinstance(error, str) else ""
    if "No .context.yaml found at scope" in text:
        scope = getattr(result, "scope", "")
        if not _is_directory(ws, scope):
            return f"{scope} is not a directory in the repository ({root}); `repoctx status` lists the scopes"
        return "next: `repoctx status` lists the scopes that should have one; `repoctx init` writes them"
    if "path traversal detected" in text:
        return "scopes are paths inside the repository, such as `src/core`; `repoctx status` lists them"
    if cmd.name == "status" and not text and getattr(result, "tracked", None) == 0:
        where = "" if os.path.exists(os.path.join(root, ".git")) else f" and {root} is not a git repository (is --root right?)"
        return f"no .context.yaml files yet{where}; `repoctx init` writes one for every eligible directory"
    return None


def _is_directory(ws, scope: str) -> bool:
    from repoctx.base.workspace import PathEscape

    try:
        return fs.is_dir(ws.root, ws.resolve(scope)[0])
    except (PathEscape, OSError):
        return False
