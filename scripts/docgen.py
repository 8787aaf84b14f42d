"""docs/tools.md and docs/cli.md, written from the command registry so they cannot drift.

`python scripts/docgen.py` rewrites both files in a checkout; `--check` only
compares them and exits 1 when they differ (tests/views/test_docs.py does the same).
A script of the repository, not of the wheel: it reads the checkout's tests/ and
writes its docs/, importing the installed repoctx for the registry.
The output is deterministic: registry order, no timestamps, no absolute paths.
Example calls come from the test suite's EXAMPLES (tests/sample_repo.py), the
same arguments the parity test proves on the CLI and over MCP. Example replies of
resources and prompts are the golden files the tests compare with, or are read
from a copy of the tests' Contextia fixture.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
TARGETS = {"tools.md": "tools_md", "cli.md": "cli_md"}



def _result_schema(cmd) -> dict:
    """The result's schema: the success type's, or with the contract's error object, both."""
    from repoctx.base.command import _inline_schema

    members = [_inline_schema(tp) for tp in cmd.result_types]
    return members[0] if len(members) == 1 else {"anyOf": members}

def _examples(checkout: Path) -> dict[str, dict]:
    path = checkout / "tests" / "sample_repo.py"
    if not path.is_file():
        return {}
    spec = importlib.util.spec_from_file_location("_docgen_sample_repo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EXAMPLES


# Resource URI -> (the URI an example reads, golden file under tests/golden/ with its reply,
# or None: read it from the Contextia fixture).
RESOURCE_EXAMPLES = {
    "context://project/overview": ("context://project/overview", "project/overview.md"),
    "context://module/{name}": ("context://module/acme-core", "project/module-acme-core.md"),
    "context://session/current": ("context://session/current", "project/session-current.md"),
    "context://sessions/recent": ("context://sessions/recent?limit=2", "project/sessions-recent-limit-2.md"),
    "contextia://identity": ("contextia://identity", None),
    "contextia://index": ("contextia://index", None),
}
# Prompt -> the arguments of its example (tasks of the Contextia fixture).
PROMPT_EXAMPLES = {
    "start_feature_task": {"task_id": "TASK-002"},
    "start_bug_fix": {"task_id": "TASK-003"},
    "end_session": {"task_id": "TASK-002"},
}
SAMPLE_LINES = 14


def _sample(text: str) -> str:
    """The start of a reply: enough to show its shape without copying it whole."""
    lines = text.rstrip("\n").split("\n")
    return "\n".join(lines[:SAMPLE_LINES] + (["…"] if len(lines) > SAMPLE_LINES else []))


def _fenced(text: str, lang: str) -> list[str]:
    """A code block whose fence is longer than any run of backticks in the text (replies hold markdown)."""
    run = longest = 0
    for c in text:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return [fence + lang, text, fence]


def _replies(checkout: Path) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """(resource URI -> (example URI, sample reply), prompt -> sample text); empty without tests/."""
    from repoctx.base.workspace import Workspace
    from repoctx.registry.catalog import all_prompts, all_resources

    tests = checkout / "tests"
    fixture = tests / "fixtures" / "contextia"
    if not fixture.is_dir():
        return {}, {}
    resources, prompts = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        # A copy, so nothing a read might leave behind lands in the checkout.
        ws = Workspace.open(shutil.copytree(fixture, Path(tmp) / "project"))
        for r in all_resources():
            if r.uri not in RESOURCE_EXAMPLES:
                continue
            uri, golden = RESOURCE_EXAMPLES[r.uri]
            text = (tests / "golden" / golden).read_text(encoding="utf-8") if golden else r.read(ws, {})
            resources[r.uri] = (uri, _sample(text))
        for p in all_prompts():
            if p.name in PROMPT_EXAMPLES:
                prompts[p.name] = _sample(p.render(ws, PROMPT_EXAMPLES[p.name]))
    return resources, prompts


def _json(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _type_of(prop: dict) -> str:
    if "anyOf" in prop:
        return " or ".join(_type_of(p) for p in prop["anyOf"])
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[1]
    if prop.get("type") == "array":
        return f"array of {_type_of(prop.get('items', {}))}" if prop.get("items") else "array"
    return str(prop.get("type", "any"))


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _params_table(schema: dict) -> list[str]:
    props = schema.get("properties", {})
    if not props:
        return ["No parameters."]
    required = set(schema.get("required", ()))
    rows = ["| name | type | required | default | description |", "|---|---|---|---|---|"]
    for name, prop in props.items():
        default = json.dumps(prop["default"]) if "default" in prop else ""
        rows.append(f"| `{name}` | {_cell(_type_of(prop))} | {'yes' if name in required else 'no'} "
                    f"| {_cell(default)} | {_cell(_description(prop))} |")
    return rows


def _description(prop: dict) -> str:
    inner = [p.get("description") for p in prop.get("anyOf", ()) if p.get("description")]
    return prop.get("description") or (inner[0] if inner else "")


def _cli_words(cmd, args: dict) -> str:
    words = ["repoctx", *cmd.name.split()]
    positional = cmd.cli.positional if cmd.cli else ()  # an MCP-only form takes every argument by name
    for name in positional:
        if name in args:
            value = args[name]
            words.extend(map(str, value) if isinstance(value, list) else [str(value)])
    for name, value in args.items():
        if name in positional:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            words.append(flag if value else "--no-" + name.replace("_", "-"))
        elif isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value):
            for v in value:
                words += [flag, str(v)]
        elif isinstance(value, (dict, list)):
            words += [flag, "'" + json.dumps(value, ensure_ascii=False) + "'"]
        else:
            words += [flag, _shell(str(value))]
    return " ".join(words + ["--json"])


def _shell(word: str) -> str:
    return word if word and all(c.isalnum() or c in "-_./:*" for c in word) else "'" + word.replace("'", "'\\''") + "'"


def _cli_view(cmd):
    """How the CLI shows the command; for an MCP-only form, how it shows the command of the same words."""
    from repoctx.registry.catalog import all_commands

    return cmd.cli or next(c.cli for c in all_commands() if c.name == cmd.name and c.cli)


def _errors(cmd) -> str:
    props = cmd.output_schema.get("properties", {})
    lines = ["Arguments that do not fit the parameter schema are answered with `isError: true` "
             "and a message naming the field."]
    if "error" in props:
        lines.append("A failure the tool can explain (unknown name, refused path, read-only mode, …) "
                     "is a result with an `error` string and `isError: true`; the CLI exits 1.")
    elif _cli_view(cmd).exit_code is None:
        lines.append("A result the tool marks as failed is returned with `isError: true`; the CLI exits 1.")
    else:
        lines.append("The CLI exit status follows the result (see the command's description); "
                     "failures are reported with `isError: true`.")
    if cmd.writes:
        lines.append("This tool writes: a server started with `--read-only` refuses it.")
    return " ".join(lines)


def _effect(cmd) -> str:
    if cmd.writes:
        return "; writes"
    if cmd.records:
        return "; records a run (so not read-only; a `--read-only` server serves it and records nothing)"
    return "; read-only"


def tools_md(checkout: Path = CHECKOUT) -> str:
    from repoctx.registry.catalog import all_commands, all_prompts, all_resources

    examples = _examples(checkout)
    tools = [c for c in all_commands() if c.tool]
    out = ["# MCP tools, resources and prompts", "",
           "<!-- Generated by `python scripts/docgen.py` from the command registry; do not edit. -->", "",
           "Every tool is also a CLI command: `repoctx <command> --json` prints exactly the tool's JSON "
           "(tests/views/test_parity.py proves it byte for byte). Which tools a server lists depends on its "
           "profile and allowlist (see [control.md](control.md)).", "", "## Tools", ""]
    out += [f"- [`{c.tool}`](#{c.tool}) — {c.summary}" for c in tools]
    for cmd in tools:
        out += ["", f"### {cmd.tool}", "", cmd.summary + (" " + cmd.description if cmd.description else ""), "",
                f"- Surface: `{cmd.surface}`; CLI: `repoctx {cmd.name}`"
                + (f"; also accepted as {', '.join(f'`{a}`' for a in cmd.aliases)}" if cmd.aliases else "")
                + _effect(cmd),
                "", "Parameters:", "", *_params_table(cmd.input_schema), "",
                "Errors: " + _errors(cmd), ""]
        if cmd.mcp.text is not None:
            out += ["The MCP text content is plain text; the structured content (and `--json`) follows "
                    "the result schema.", ""]
        if not cmd.mcp.structured:
            out += ["The result is returned once, as compact JSON text (as the contract's reference server "
                    "returns text), without an output schema or structured content: the listing grows with "
                    "the tree, and a second copy would double what every client reads. The text follows "
                    "the result schema.", ""]
        out += ["<details><summary>Result schema</summary>", "", "```json", _json(_result_schema(cmd)), "```", "",
                "</details>", ""]
        if cmd.tool in examples:
            args = examples[cmd.tool]
            out += ["Example:", "", "```json", _json({"name": cmd.tool, "arguments": args}), "```", "",
                    "```sh", _cli_words(cmd, args), "```"]
    resource_replies, prompt_replies = _replies(checkout)
    out += ["", "## Resources", "",
            "Reading an unknown name or a resource whose data is absent fails with JSON-RPC error -32602 "
            "and a message saying what is missing. The examples show the start of each reply, for the "
            "tests' sample projects.", ""]
    for r in all_resources():
        out += [f"### `{r.uri}`", "", f"{r.name} ({r.mime_type}, surface `{r.surface}`). {r.description}", ""]
        if r.is_template:
            out += [f"A template: fill in {', '.join('`' + p.split('}')[0] + '`' for p in r.uri.split('{')[1:])}.", ""]
        if r.uri in resource_replies:
            uri, reply = resource_replies[r.uri]
            out += ["Example:", "", "```json", _json({"method": "resources/read", "params": {"uri": uri}}), "```", "",
                    *_fenced(reply, "markdown" if r.mime_type == "text/markdown" else "text"), ""]
    out += ["## Prompts", "",
            "Each prompt returns one user message; the examples show its start, for the tests' "
            "Contextia sample project.", ""]
    for p in all_prompts():
        out += [f"### {p.name}", "", f"{p.description} (surface `{p.surface}`)", "", "Arguments:", ""]
        out += [f"- `{name}`{' (required)' if req else ''}: {desc}" for name, desc, req in p.arguments]
        out.append("")
        if p.name in prompt_replies:
            out += ["Example:", "", "```json",
                    _json({"method": "prompts/get", "params": {"name": p.name, "arguments": PROMPT_EXAMPLES[p.name]}}),
                    "```", "", *_fenced(prompt_replies[p.name], "text"), ""]
    return "\n".join(out).rstrip() + "\n"


def _subparsers(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    """(words, parser, help) for every subcommand, depth first in registry order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*words, name), sub, helps.get(name, "")
                yield from _subparsers(sub, (*words, name))


def _option_row(action: argparse.Action) -> str | None:
    if action.help == argparse.SUPPRESS or isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
        return None
    if action.option_strings:
        names = ", ".join(f"`{s}`" for s in action.option_strings)
        if action.nargs != 0 and not isinstance(action, argparse.BooleanOptionalAction):
            metavar = action.metavar or (("{" + ",".join(map(str, action.choices)) + "}") if action.choices
                                         else action.dest.upper())
            names += f" `{metavar}`"
    else:
        names = f"`{action.metavar or action.dest}`" + (" …" if action.nargs == "*" else "")
        names += " (optional)" if action.nargs in ("?", "*") else ""
    help_text = action.help or ""
    if action.choices and action.option_strings and action.metavar:
        help_text += f" (one of {', '.join(map(str, action.choices))})"
    return f"| {names} | {_cell(help_text)} |"


COMMON = {"--json", "--root", "--allow-root", "--debug", "--cache-root"}


def _common_option(action: argparse.Action) -> bool:
    """An option every command takes (a command's own `format` parameter is not the common --format)."""
    return bool(set(action.option_strings) & COMMON) or action.dest == "_format"


def cli_md(checkout: Path = CHECKOUT) -> str:
    from repoctx.views.cli import build_parser

    parser = build_parser()
    out = ["# Command line", "",
           "<!-- Generated by `python scripts/docgen.py` from the command registry; do not edit. -->", "",
           parser.description, "",
           "Every command also takes the common options below. Errors print one or two lines on stderr "
           "saying what went wrong and what to do next, and exit non-zero (1: the command failed; "
           "2: the arguments were wrong); `--debug` adds the traceback of an unexpected error.", "",
           "| option | description |", "|---|---|"]
    common = [a for a in parser._actions if _common_option(a)]
    out += [row for a in common if (row := _option_row(a))]
    out += ["| `--format` `{json,pretty}` | json: as --json; pretty: the human view (the default) |", "",
            "## Commands", ""]
    subs = list(_subparsers(parser))
    out += [f"- [`repoctx {' '.join(w)}`](#{'-'.join(['repoctx', *w])}) — {_cell(h or '')}" for w, _, h in subs]
    for words, sub, help_text in subs:
        out += ["", f"## repoctx {' '.join(words)}", "", sub.description or help_text or "", ""]
        rows = [row for a in sub._actions if not _common_option(a) and (row := _option_row(a))]
        if rows:
            out += ["| argument | description |", "|---|---|", *rows]
        else:
            out.append("Only the common options.")
    return "\n".join(out).rstrip() + "\n"


def generate(checkout: Path = CHECKOUT) -> dict[str, str]:
    """File name under docs/ -> its generated text (examples from the checkout's tests)."""
    return {name: globals()[fn](checkout) for name, fn in TARGETS.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/docgen.py", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a committed file differs")
    ap.add_argument("--checkout", default=str(CHECKOUT), help="the source tree (its docs/ and tests/)")
    ap.add_argument("--docs", help="where the files are (default: docs/ in the checkout)")
    ns = ap.parse_args(argv)
    ns.docs = ns.docs or str(Path(ns.checkout) / "docs")
    stale = []
    for name, text in generate(Path(ns.checkout)).items():
        path = Path(ns.docs) / name
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(name)
        if not ns.check:
            path.write_text(text, encoding="utf-8")
    if ns.check and stale:
        print(f"out of date: {', '.join(stale)}; run `python scripts/docgen.py` to rewrite them", file=sys.stderr)
        return 1
    for name in stale:
        print(f"wrote docs/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
