"""The command-line view: argparse generated from the command registry.

`repoctx <command> [--json]` runs one registry command; `repoctx serve` starts
the MCP server. This module imports nothing of the MCP SDK: `serve` loads it
only when called, so every other command starts fast.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
import types
import typing
from typing import Any

import msgspec

from repoctx import __version__
from repoctx.base.errors import RepoctxError
from repoctx.base.failures import failures
from repoctx.formats import bounded
from repoctx.formats.config import NAMINGS, PROFILES

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _common(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS keeps a subcommand's unset option from hiding the same option given before it.
    s = argparse.SUPPRESS
    parser.add_argument("--json", action="store_true", default=s, help="print the result as JSON (as the MCP tool returns it)")
    parser.add_argument("--root", metavar="DIR", default=s, help="repository root, taken as given (default: the nearest directory "
                        "at or above the current one holding .git, .repoctx, .context.config.yaml or .contextia)")
    parser.add_argument("--allow-root", metavar="DIR", action="append", default=s,
                        help="another root a `path` override may name (repeatable)")
    parser.add_argument("--debug", action="store_true", default=s, help="show tracebacks on errors")
    parser.add_argument("--cache-root", metavar="DIR", default=s,
                        help="directory of context caches (default: $CONTEXT_CACHE_ROOT, else <root>/.repoctx/caches)")


def _server_options(parser: argparse.ArgumentParser) -> None:
    """How a server is started: `serve` takes these, and so do the commands whose answer
    depends on them (capabilities, validate), so each equals its tool in such a server."""
    parser.add_argument("--read-only", action="store_true", help="turn every writing tool off")
    parser.add_argument("--tools", metavar="NAME,…", help="closed allowlist of tools to list and accept "
                        "(safe or contract names); resources and prompts are served only for the surfaces of "
                        "these tools (default: `tools:` in .repoctx/config.yaml)")
    parser.add_argument("--profile", choices=PROFILES,
                        help="serve one surface's tools and resources, propose (propose_change), or all (default: "
                        "`profile:` in .repoctx/config.yaml, else every contract, listing the surfaces that have "
                        "data in this repository as they appear)")
    parser.add_argument("--names", choices=NAMINGS,
                        help="list tools by safe names (context_resolve, the default) or by the contracts' own "
                        "(context.resolve; some hosts refuse dots); either is accepted on call. contract also "
                        "answers in the contracts' own states (a .context.yaml that cannot be used: missing, not invalid) "
                        "(default: `names:` in .repoctx/config.yaml)")


def _unwrap(tp: Any) -> tuple[Any, bool]:
    """(inner type, optional?) for `X | None` annotations."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return (args[0] if len(args) == 1 else tp), True
    return tp, False


def _add_params(parser: argparse.ArgumentParser, cmd) -> None:
    props = cmd.input_schema.get("properties", {})
    hints = typing.get_type_hints(cmd.params, include_extras=False)
    for field in msgspec.structs.fields(cmd.params):
        tp, _ = _unwrap(hints[field.name])
        help_text = props.get(field.encode_name, {}).get("description")
        kwargs: dict[str, Any] = {"help": help_text}
        origin = typing.get_origin(tp)
        flag = "--" + field.name.replace("_", "-")
        if tp is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif origin is list:
            kwargs["action"] = "append"
            kwargs["metavar"] = field.name.upper().rstrip("S") or "VALUE"
            if _structured(typing.get_args(tp)[0]):
                kwargs.update(type=_json_value, metavar="JSON", action=_JsonItems,
                              help=f"{(help_text or '').rstrip('.')}. On the command line: one JSON object per "
                              f"{flag} (repeat it for more), or a JSON array of them in one")
        elif _structured(tp):
            kwargs.update(type=_json_value, metavar="JSON")
        elif origin is typing.Literal:
            kwargs["choices"] = list(typing.get_args(tp))
        elif tp in (int, float):
            kwargs["type"] = tp
        if field.name in cmd.cli.positional:
            if origin is list:  # `regen a b`: any number of words
                kwargs.pop("action")
                kwargs["nargs"] = "*"
            elif field.default is not msgspec.NODEFAULT:
                kwargs["nargs"] = "?"
            parser.add_argument(field.name, **kwargs)
        else:
            parser.add_argument(flag, dest=field.name, default=None, **kwargs)


class _JsonItems(argparse.Action):
    """A list of objects on the command line: each use of the flag gives one JSON object, or a
    JSON array of them (what an agent's tool call holds, pasted whole)."""

    def __call__(self, parser, namespace, value, option_string=None):
        items = list(getattr(namespace, self.dest, None) or [])
        items += value if isinstance(value, list) else [value]
        setattr(namespace, self.dest, items)


def _structured(tp: Any) -> bool:
    """Whether a parameter type is an object (a Struct, a dict or a union of them): given as JSON on the CLI."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        return all(_structured(a) for a in typing.get_args(tp))
    return tp is dict or typing.get_origin(tp) is dict or (isinstance(tp, type) and issubclass(tp, msgspec.Struct))


def _json_value(text: str) -> Any:
    try:
        return bounded.json(text)
    except msgspec.DecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None


def _command_word(argv: list[str]) -> str | None:
    """The first word that is not an option or an option's value: the command."""
    takes_value = {"--root", "--allow-root", "--cache-root"}
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in takes_value:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def build_parser(word: str | None = None) -> argparse.ArgumentParser:
    """The parser for every command, or only for those starting with `word` (faster:
    only their module is imported)."""
    from repoctx.registry.catalog import all_commands, cli_commands

    parser = _Parser(
        prog="repoctx",
        description="Project context for coding agents: serve it over MCP (`repoctx serve`) "
        "or query it here. Every command takes --json to print exactly what its MCP tool returns.",
    )
    parser.add_argument("--version", action="version", version=f"repoctx {__version__}")
    _common(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    groups: dict[tuple[str, ...], Any] = {(): sub}
    # A command may also head a group (`sessions` and `sessions show`): list it before its subcommands.
    parsers: dict[tuple[str, ...], Any] = {}
    # `serve` needs no other command's parser: building them all stood before a restarted server's
    # first answer (about 0.04 s).
    for cmd in [] if word == "serve" else (word and cli_commands(word)) or all_commands():
        if not cmd.cli:
            continue
        words = cmd.name.split()
        for i in range(1, len(words)):
            key = tuple(words[:i])
            if key not in groups:
                g = parsers.get(key) or groups[key[:-1]].add_parser(words[i - 1], help=f"{' '.join(key)} commands")
                groups[key] = g.add_subparsers(dest="_".join(key), metavar="COMMAND", required=key not in parsers)
        tool = f" (MCP tool: {cmd.tool})" if cmd.tool else ""
        p = parsers[tuple(words)] = groups[tuple(words[:-1])].add_parser(
            words[-1], help=cmd.summary, description=f"{cmd.summary} {cmd.description}{tool}"
        )
        _common(p)
        if cmd.cli.server_view:
            _server_options(p)
        _add_params(p, cmd)
        if "--format" not in p._option_string_actions:  # the context-engine CLI's spelling of --json
            p.add_argument("--format", dest="_format", choices=("json", "pretty"), default=argparse.SUPPRESS,
                           help="json: as --json; pretty: the human view (the default)")
        p.set_defaults(_cmd=cmd)
    serve = sub.add_parser("serve", help="Serve this repository's context over MCP (stdio).",
                           description="Serve the repository's context to an MCP client over stdio. "
                           "stdout carries protocol messages only; logs go to stderr.")
    _common(serve)
    _server_options(serve)
    serve.add_argument("--no-watch", action="store_true",
                       help="do not follow file-system events; rescan the tree for every question")
    serve.set_defaults(_serve=True)
    # Answered by views/prompt_hook.py from __main__.py, before this module is imported; listed for --help.
    sub.add_parser("prompt-hook", add_help=False, help="Claude Code's prompt hook: the files that matter for the "
                   "prompt on stdin (registered by `repoctx install claude-code --hook`).")
    return parser


def _workspace(ns: argparse.Namespace):
    from repoctx.base import rootfind
    from repoctx.base.workspace import Workspace

    given = getattr(ns, "root", None)
    if given is not None and not os.path.isdir(given):
        raise UserError(f"{given} is not a directory; pass --root with the repository to read")
    choice = rootfind.given(given) if given is not None else rootfind.find_root(os.getcwd())
    if given is None and not getattr(ns, "_serve", False) and choice.root != os.path.realpath(os.getcwd()):
        print(f"repoctx: root {choice.root} ({choice.reason})", file=sys.stderr)
    cache_root = getattr(ns, "cache_root", None) or os.environ.get("CONTEXT_CACHE_ROOT")
    tools = getattr(ns, "tools", None)
    return Workspace.open(choice.root, getattr(ns, "allow_root", None) or (), read_only=getattr(ns, "read_only", False),
                          tools=tuple(t.strip() for t in tools.split(",") if t.strip()) if tools is not None else None,
                          profile=getattr(ns, "profile", None), names=getattr(ns, "names", None),
                          cache_root=cache_root, root_reason=choice.reason)


class UsageError(RepoctxError):
    """A command line the parser cannot take; `prog` is the command it was given to."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message, code="usage")
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """Usage mistakes in two lines (what is wrong, where to look) rather than the whole usage text;
    raised as UsageError so main() can answer in JSON when --json was asked for."""

    def error(self, message: str):
        import difflib
        import re

        choice = re.match(r"argument COMMAND: invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            options = re.findall(r"'([^']*)'", choice.group(2))
            close = difflib.get_close_matches(choice.group(1), options, n=1)
            message = f"unknown command '{choice.group(1)}'" + (f" (did you mean '{close[0]}'?)" if close else "")
        raise UsageError(self.prog, message)

    def parse_args(self, args=None, namespace=None):
        ns, extra = self.parse_known_args(args, namespace)
        if extra:  # name the command they were given to, not the top level
            cmd = getattr(ns, "_cmd", None)
            raise UsageError(f"repoctx {cmd.name}" if cmd else self.prog, f"unrecognized arguments: {' '.join(extra)}")
        return ns


def _json_asked(argv: list[str]) -> bool:
    """Whether a command line asks for JSON, read from the words alone (for lines that do not parse)."""
    words = argv[:argv.index("--")] if "--" in argv else argv
    return "--json" in words or "--format=json" in words or any(
        a == "--format" and b == "json" for a, b in itertools.pairwise(words))


def _usage_failure(exc: UsageError, as_json: bool) -> int:
    """The usage mistake on stderr for people and, with --json, as the failure object on stdout."""
    hint = f"run `{exc.prog} --help` to see what it accepts"
    if as_json:
        from repoctx.base.command import pretty_json
        from repoctx.base.results import Envelope, failure

        command = exc.prog.removeprefix("repoctx").strip()
        _print_line(pretty_json(failure(Envelope, command, "usage", f"{exc.message}; {hint}")))
    print(f"{exc.prog}: {exc.message}\n{hint}", file=sys.stderr)
    return EXIT_USAGE


class UserError(RepoctxError):
    """A mistake the person can fix; printed without a traceback."""


def _wants_json(ns: argparse.Namespace) -> bool:
    return getattr(ns, "json", False) or getattr(ns, "_format", None) == "json"


def _print_line(text: str, stream=None) -> None:
    (stream or sys.stdout).write(text if text.endswith("\n") else text + "\n")


def _says_why_it_failed(cmd, result) -> bool:
    """Whether a result is an error message (for a person: stderr) rather than the command's
    answer: it failed and carries its `error`. Checks that ran and failed (`validate`,
    `status --check`) are an answer, and stay on stdout; `--json` always prints on stdout."""
    if not cmd.is_error(result):
        return False
    error = getattr(result, "error", None)
    return bool(error) and getattr(error, "code", None) != "validation_failed"


def run_command(cmd, ns: argparse.Namespace) -> int:
    values = {
        f.name: getattr(ns, f.name)
        for f in msgspec.structs.fields(cmd.params)
        if getattr(ns, f.name, None) is not None
    }
    try:
        params = cmd.parse(values)
    except msgspec.ValidationError as exc:
        if cmd.on_invalid is None:
            raise UserError(f"invalid arguments: {exc}") from None
        params = None
    from repoctx.base.workspace import settle

    ws = _workspace(ns)
    settle(ws.root)  # a multi-file write a killed process left is finished first (journal.py)
    for_people = not _wants_json(ns)
    if for_people:
        from repoctx.views import advice

        for problem in advice.config_problems(ws.root) + advice.read_problems(cmd, ws.root):
            print(f"repoctx: warning: {problem}", file=sys.stderr)
    started, t0 = time.time(), time.perf_counter()
    result = cmd.handler(ws, params) if params is not None else cmd.on_invalid(values)
    if not for_people or cmd.cli.render is None:
        text = cmd.encode(result)
    else:
        text = cmd.cli.render(result)
    _print_line(text, sys.stderr if for_people and _says_why_it_failed(cmd, result) else sys.stdout)
    if for_people and (step := advice.next_step(cmd, result, ws, values)):
        print(f"repoctx: {step}", file=sys.stderr)
    failed = cmd.is_error(result)
    if getattr(params, "check", None) is True or getattr(params, "ci", None) is True:
        human = cmd.cli.render(result) if cmd.cli.render else text
        _record_ci_run(ws, cmd, failed, human, started, (time.perf_counter() - t0) * 1000)
    if cmd.cli.exit_code is not None:
        return cmd.cli.exit_code(result)
    return EXIT_ERROR if failed else EXIT_OK


def _record_ci_run(ws, cmd, failed: bool, text: str, started: float, ms: float) -> None:
    """A check in CI mode (`--check`, `--ci`) is kept as a run under .repoctx/runs/, as `validate --run` is."""
    from repoctx.formats.run import Step
    from repoctx.registry.catalog import record_run

    lines = text.splitlines()
    step = Step(name=cmd.name, surface=cmd.surface, status="fail" if failed else "pass",
                message=lines[-1] if lines else "", duration_ms=round(ms, 3), problems=lines[:-1][:200])
    if (why := record_run(ws, cmd.name, [step], started, ms)) is not None:
        print(f"repoctx: the run was not recorded ({why})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # answered before the registry is imported, so it is instant
        print(f"repoctx {__version__}")
        return EXIT_OK
    parser = build_parser(_command_word(argv))
    try:
        ns = parser.parse_args(argv)
    except UsageError as exc:
        return _usage_failure(exc, _json_asked(argv))
    try:
        if getattr(ns, "_serve", False):
            from repoctx.views import warm

            ws = _workspace(ns)
            warm.start(ws, watch=not ns.no_watch)  # the core builds while the SDK is imported
            from repoctx.views.server import serve

            return serve(ws, watch=not ns.no_watch)
        cmd = getattr(ns, "_cmd", None)
        if cmd is None:
            if _wants_json(ns):
                return _usage_failure(UsageError("repoctx", "no command given"), True)
            parser.print_help()
            return EXIT_USAGE
        return run_command(cmd, ns)
    except UserError as exc:
        cmd = getattr(ns, "_cmd", None)
        if cmd is not None and _wants_json(ns):
            from repoctx.base.results import Envelope, failure

            _print_line(cmd.encode(failure(Envelope, cmd.name, "invalid_argument", str(exc))))
        print(f"repoctx: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except failures() as exc:
        if getattr(ns, "debug", False):
            raise
        cmd = getattr(ns, "_cmd", None)
        from repoctx.base.results import admits_envelope, internal_failure

        # The structured failure the MCP tool answers, where its contract has room for it.
        if cmd is not None and _wants_json(ns) and admits_envelope(cmd):
            _print_line(cmd.encode(internal_failure(cmd.name, exc)))
        from repoctx.base.workspace import LinkRefused

        if isinstance(exc, LinkRefused):
            print(f"repoctx: {exc.strerror}", file=sys.stderr)
        else:
            print(f"repoctx: unexpected error: {exc} (run again with --debug for the traceback)", file=sys.stderr)
        return EXIT_ERROR
