"""The mistakes people make first, and what the CLI tells them: what went wrong and what to
do next in one or two lines on stderr, a non-zero exit, and no traceback unless --debug."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from conftest import run_cli
from sample_repo import build_sample_repo


def _lines(proc) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.strip()]


def _no_traceback(proc) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


@pytest.fixture
def repo(tmp_path):
    return build_sample_repo(tmp_path / "repo")


def test_nonexistent_root(tmp_path):
    out = run_cli("status", "--root", str(tmp_path / "nowhere"))
    assert out.returncode == 1 and _lines(out) == [
        f"repoctx: {tmp_path / 'nowhere'} is not a directory; pass --root with the repository to read"]
    _no_traceback(out)


def test_root_that_is_a_file(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    out = run_cli("show", "src", "--root", str(tmp_path / "notes.txt"))
    assert out.returncode == 1 and "is not a directory; pass --root" in out.stderr
    _no_traceback(out)


def test_not_a_repository_and_no_context_files_yet(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n" * 4000)
    out = run_cli("status", "--root", str(tmp_path))
    assert out.returncode == 0
    [hint] = _lines(out)
    assert "no .context.yaml files yet" in hint and "not a git repository (is --root right?)" in hint
    assert "`repoctx init`" in hint
    (tmp_path / ".git").mkdir()
    [hint] = _lines(run_cli("status", "--root", str(tmp_path)))
    assert "not a git repository" not in hint and "`repoctx init`" in hint
    # --json stays exactly the tool's result: advice is for people only.
    assert _lines(run_cli("status", "--json", "--root", str(tmp_path))) == []


def test_unknown_scope(repo):
    out = run_cli("show", "src/nowhere", "--root", str(repo))
    assert out.returncode == 1 and out.stdout == ""
    # For a person: what is wrong, without the contract's min_tokens guess or its MCP tool name.
    assert _lines(out) == ["src/nowhere: no .context.yaml",
                           f"repoctx: src/nowhere is not a directory in the repository ({repo.resolve()}); "
                           "`repoctx status` lists the scopes"]
    answer = json.loads(run_cli("show", "src/nowhere", "--json", "--root", str(repo)).stdout)
    assert answer["error"].startswith('No .context.yaml found at scope "src/nowhere"')  # the contract's words
    out = run_cli("check", "../outside", "--root", str(repo))
    assert out.returncode == 1 and "scopes are paths inside the repository" in out.stderr
    _no_traceback(out)


@pytest.mark.parametrize("argv, first", [
    (["stauts"], "repoctx: unknown command 'stauts' (did you mean 'status'?)"),
    (["show"], "repoctx show: the following arguments are required: scope"),
    (["artifacts", "list", "spec", "--kind", "x"], "repoctx artifacts list: unrecognized arguments: --kind x"),
    (["status", "--state", "old"], "repoctx status: argument --state: invalid choice: 'old'"),
])
def test_usage_mistakes_name_the_command_and_where_to_look(repo, argv, first):
    out = run_cli(*argv, "--root", str(repo))
    assert out.returncode == 2
    lines = _lines(out)
    assert len(lines) == 2 and lines[0].startswith(first), lines
    assert lines[1].startswith("run `repoctx") and lines[1].endswith("--help` to see what it accepts")


USAGE_MISTAKES = [
    (["stauts"], "", "unknown command 'stauts' (did you mean 'status'?)"),
    (["show"], "show", "the following arguments are required: scope"),
    (["artifacts", "list", "spec", "--kind", "x"], "artifacts list", "unrecognized arguments: --kind x"),
    (["status", "--state", "old"], "status", "argument --state: invalid choice: 'old'"),
    (["status", "--no-such-option"], "status", "unrecognized arguments: --no-such-option"),
    ([], "", "no command given"),
]


@pytest.mark.parametrize("argv, command, needle, where", [
    (*case, where) for case in USAGE_MISTAKES for where in ("after", "before", "format") if case[0] or where != "format"
])
def test_usage_mistakes_with_json_answer_a_json_failure(repo, argv, command, needle, where):
    # --json after the command words, before them, or as --format json (commands only).
    flags = {"after": [*argv, "--json"], "before": ["--json", *argv], "format": [*argv, "--format", "json"]}
    out = run_cli(*flags[where], "--root", str(repo))
    assert out.returncode == 2
    payload = json.loads(out.stdout)
    assert payload == {"ok": False, "command": command, "schema_version": 1,
                       "error": {"code": "usage", "message": payload["error"]["message"]}}
    assert payload["error"]["message"].startswith(needle) and "--help` to see what it accepts" in payload["error"]["message"]
    assert _lines(out)[-1].endswith("--help` to see what it accepts")  # people still read stderr
    _no_traceback(out)


def test_usage_mistakes_without_json_leave_stdout_empty(repo):
    out = run_cli("status", "--no-such-option", "--root", str(repo))
    assert out.returncode == 2 and out.stdout == "" and "unrecognized arguments" in out.stderr


def test_a_root_that_is_not_a_directory_with_json(tmp_path):
    out = run_cli("status", "--json", "--root", str(tmp_path / "nowhere"))
    payload = json.loads(out.stdout)
    assert out.returncode == 1 and payload["ok"] is False and payload["command"] == "status"
    assert payload["error"]["code"] == "invalid_argument" and "is not a directory" in payload["error"]["message"]


@pytest.mark.parametrize("path, text, expected", [
    (".repoctx/config.yaml", "profile: [oops\n", ".repoctx/config.yaml:2:1: YAML syntax error: "),
    (".repoctx/config.yaml", "profile: everything\n", ".repoctx/config.yaml:"),
    (".context.config.yaml", "min_tokens: lots\nignore: build\n",
     ".context.config.yaml: min_tokens must be an integer, ignore must be a list of glob patterns"),
    (".context.config.yaml", "- just\n- a list\n", ".context.config.yaml: not a YAML mapping"),
    (".contextia/config.yaml", "project: [x\n", ".contextia/config.yaml is not valid YAML"),
])
def test_bad_config_files_are_named_with_what_applies(repo, path, text, expected):
    (repo / path).write_text(text)
    out = run_cli("status", "--root", str(repo))
    warnings = [line for line in _lines(out) if line.startswith("repoctx: warning:")]
    assert len(warnings) == 1 and expected in warnings[0], _lines(out)
    assert "until" in warnings[0] and "fixed" in warnings[0]
    _no_traceback(out)


def test_unexpected_errors_have_a_traceback_only_with_debug(repo):
    # An unreadable .repoctx/runs (a file where a directory belongs) is not a mistake the CLI foresees.
    runs = repo / ".repoctx" / "runs"
    import shutil

    shutil.rmtree(runs)
    runs.write_text("not a directory")
    plain = run_cli("runs", "list", "--root", str(repo))
    debug = run_cli("runs", "list", "--root", str(repo), "--debug")
    if plain.returncode == 0:
        pytest.skip("runs list copes with this case; no unexpected error to show")
    _no_traceback(plain)
    assert len(_lines(plain)) <= 2
    assert "--debug" in plain.stderr or "runs" in plain.stderr + plain.stdout
    assert debug.returncode != 0


CONSOLE_SCRIPT = os.path.join(os.path.dirname(sys.executable), "repoctx")


@pytest.mark.anyio
@pytest.mark.parametrize("start", ["script", "module"])
async def test_serve_prints_a_registration_that_can_be_pasted(tmp_path, start):
    """The serve line names the running repoctx and the root by absolute paths, so the command
    after `--` starts a working server from any directory, whatever the client's PATH."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    if start == "script" and not os.access(CONSOLE_SCRIPT, os.X_OK):
        pytest.skip("no repoctx console script beside this Python")
    repo = build_sample_repo(tmp_path / "repo")
    launch = [CONSOLE_SCRIPT] if start == "script" else [sys.executable, "-m", "repoctx"]
    proc = subprocess.run([*launch, "serve", "--root", "repo"], cwd=tmp_path, input="",
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PATH": "/nonexistent"})
    assert proc.returncode == 0 and proc.stdout == ""
    prefix = "claude mcp add repoctx -- "
    [line] = [line for line in proc.stderr.splitlines() if prefix in line]
    words = shlex.split(line.split(prefix, 1)[1])
    assert words == [*launch, "serve", "--root", os.path.realpath(repo)]
    assert all(os.path.isabs(w) for w in (words[0], words[-1]))
    params = StdioServerParameters(command=words[0], args=words[1:], cwd="/", env={**os.environ, "PATH": "/nonexistent"})
    async with Client(params, mode="legacy") as client:
        status = await client.call_tool("list_contexts", {})
    assert not status.is_error and json.loads(status.content[0].text)["entries"]
