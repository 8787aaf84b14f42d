"""One command, two views: for every MCP tool, `repoctx <command> --json` prints
exactly the JSON the tool returns, and the exit code follows its isError. The JSON
is the tool's text result, or, for a contract whose text is plain (Contextia's
context format), its structured content; that text is then the CLI's default view."""

from __future__ import annotations

import json

import msgspec
import pytest

from conftest import mcp_client, run_cli
from repoctx.registry.catalog import all_commands
from sample_repo import EXAMPLES, build_sample_repo

TOOLS = [c for c in all_commands() if c.tool]


def cli_argv(cmd, args: dict) -> list[str]:
    """The CLI words for the same parameters as the MCP arguments."""
    argv = cmd.name.split()
    for name in cmd.cli.positional:
        if name in args:
            argv.append(str(args[name]))
    for name, value in args.items():
        if name in cmd.cli.positional:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            argv.append(flag if value else "--no-" + name.replace("_", "-"))
        elif isinstance(value, list):
            for item in value:
                argv += [flag, item if isinstance(item, str) else json.dumps(item)]
        elif isinstance(value, dict):
            argv += [flag, json.dumps(value)]
        else:
            argv += [flag, str(value)]
    return argv


def cli_words(cmd, args: dict) -> list[str]:
    """The command line a tool call stands for: an MCP-only form (commands.fixed_form) is its
    CLI command with the fixed parameters, and its own parameters' defaults, spelled out."""
    fixed = getattr(cmd.handler, "fixed", None)
    if fixed is None:
        return cli_argv(cmd, args)
    args = {k: v for k, v in {**msgspec.structs.asdict(cmd.parse(args)), **fixed}.items() if v is not None}
    return cli_argv(next(c for c in all_commands() if c.name == cmd.name and c.cli), args)


def test_every_tool_has_an_example():
    assert sorted(c.tool for c in TOOLS) == sorted(EXAMPLES)


@pytest.mark.anyio
async def test_cli_json_equals_mcp_result_byte_for_byte(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    async with mcp_client("--root", str(repo)) as client:
        for cmd in TOOLS:
            args = EXAMPLES[cmd.tool]
            result = await client.call_tool(cmd.tool, args)
            text = result.content[0].text
            words = cli_words(cmd, args)
            proc = run_cli(*words, "--json", "--root", str(repo))
            assert (proc.returncode != 0) == bool(result.is_error), cmd.tool
            if cmd.mcp.text is None:
                assert proc.stdout == (text if text.endswith("\n") else text + "\n"), cmd.tool
                # An unstructured tool sends its JSON once, as the text (Command.structured).
                assert result.structured_content == (json.loads(text) if cmd.mcp.structured else None), cmd.tool
            else:
                assert proc.stdout == cmd.encode(result.structured_content) + "\n", (cmd.tool, proc.stdout[:300], proc.stderr[:300])
                plain = run_cli(*words, "--root", str(repo))
                # An error goes to stderr for a person (the advice after it, if any, follows).
                assert (plain.stderr if result.is_error else plain.stdout).startswith(text + "\n"), cmd.tool
                assert plain.returncode == proc.returncode, cmd.tool


def test_json_flag_before_or_after_the_command(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    before = run_cli("--json", "--root", str(repo), "status")
    after = run_cli("status", "--json", "--root", str(repo))
    assert before.stdout == after.stdout and before.stdout.startswith("{")
