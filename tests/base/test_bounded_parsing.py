"""Bounded parsing (issue 20, items 4 and 5; docs/security.md, "Bounded parsing").

YAML nested 100,000 deep (200 KB) killed the CLI and the server with SIGSEGV, and a 1 KB
anchor bomb took `project scan` past 2 GiB. Every YAML file repoctx reads gets both, and
every JSON and TOML file gets nesting past Python's recursion limit, through the CLI and
through `repoctx serve` with the official client: the answer is a refusal naming the file,
the line and the reason (or, where a file is read leniently, an answer without it), the
process lives, and it stays small and quick. The bounds asserted here are loose; the
measured figures are in docs/security.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

from conftest import REPOCTX, mcp_client, write
from repoctx.formats import bounded
from sample_repo import build_sample_repo

N = 100_000
DEEP_YAML = "a: " + "[" * N + "]" * N + "\n"
# The billion laughs: nine levels of nine aliases each, 9**9 strings once expanded.
LAUGHS = 'l0: &l0 "lol"\n' + "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))
BOMBS = {
    "deep": (DEEP_YAML, "nested deeper than 128 levels"),
    "laughs": (LAUGHS, "aliases expand to more than 1048576 bytes"),
}
DEEP_JSON = '{"a": ' + "[" * N + "]" * N + "}"
DEEP_TOML = "a = " + "[" * N + "]" * N + "\n"

# Peak RSS and wall time a command may take on a bomb (measured: ~30 MB, < 2 s).
MAX_RSS_MB = 200
TIMEOUT_S = 60

# What `repoctx init`-like commands leave beside the bombs: a task with a session log.
TASK = "---\nid: TASK-001\ntitle: A task\nstatus: in_progress\nkind: chore\n---\n\nDo it.\n"


def frontmatter(bomb: str) -> str:
    return f"---\n{bomb}---\n\nBody.\n"


def measured(*args: str, root: Path) -> tuple[int, str, int]:
    """(exit code, stdout + stderr, peak RSS in MB) of `repoctx --root root *args`."""
    probe = ("import json, resource, subprocess, sys\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "print(json.dumps([p.returncode, p.stdout + p.stderr,"
             " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024]))\n")
    proc = subprocess.run([sys.executable, "-c", probe, *REPOCTX, "--root", str(root), *args],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    code, out, rss = json.loads(proc.stdout)
    assert code >= 0, f"killed by signal {-code}:\n{out}"  # a negative code is a signal (SIGSEGV: -11)
    assert "Traceback" not in out and "internal error" not in out.lower(), out
    assert rss <= MAX_RSS_MB, f"peak RSS {rss} MB"
    return code, out, rss


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, "src/app.py", "def main():\n    return 1\n" * 200)
    return root


# (file, how the bomb sits in it, command, what the answer says: {reason}, {line})
YAML_FILES = [
    (".repoctx/project.yaml", "{bomb}", ["project", "scan"],
     r"\.repoctx/project\.yaml is not valid YAML at line \d+: {reason}"),
    (".repoctx/config.yaml", "{bomb}", ["status"],
     r"\.repoctx/config\.yaml: not valid YAML \({reason} at line \d+\)"),
    (".context.config.yaml", "{bomb}", ["status"],
     r"\.context\.config\.yaml: not valid YAML \({reason} at line \d+\); the defaults apply"),
    ("src/.context.yaml", "{bomb}", ["validate"], r"src/\.context\.yaml:\d+:\d+: {reason}"),
    ("src/.context.yaml", "{bomb}", ["show", "src"], r"src: invalid \(src/\.context\.yaml:\d+:\d+: {reason}\)"),
    (".contextia/config.yaml", "{bomb}", ["artifacts", "check"],
     r"config\.yaml is not valid YAML \({reason} at line \d+\)"),
    (".contextia/system/specs/SPEC-001.md", "---\n{bomb}---\n", ["artifacts", "show", "SPEC-001"],
     r"Error reading SPEC-001: frontmatter is not valid YAML at line \d+ \(field '\w+'\): {reason} "
     r"\(\.contextia/system/specs/SPEC-001\.md\)"),
    # Session logs are read leniently: a session or entry that cannot be read is left out.
    (".contextia/work/logs/TASK-001/2026-01-01T00-00-00Z/session.yaml", "{bomb}",
     ["artifacts", "log", "read", "TASK-001"], r"No session logs for TASK-001"),
    (".contextia/work/logs/TASK-001/2026-01-01T00-00-00Z/001.md", "---\n{bomb}---\nDone.\n",
     ["artifacts", "log", "read", "TASK-001"], r"entries: 1\n[^\n]*\n[^\n]*\n  Done\."),
    ("pnpm-workspace.yaml", "{bomb}", ["project", "init"], r"Wrote \.repoctx/project\.yaml"),
]


@pytest.mark.parametrize("bomb", BOMBS)
@pytest.mark.parametrize(("rel", "shape", "args", "answer"), YAML_FILES,
                         ids=[f"{f[0]}:{' '.join(f[2])}" for f in YAML_FILES])
def test_every_yaml_file_refuses_deep_nesting_and_alias_bombs_on_the_cli(tmp_path, bomb, rel, shape, args, answer):
    text, reason = BOMBS[bomb]
    root = tree(tmp_path)
    if rel.startswith(".contextia/"):
        write(root, ".contextia/config.yaml", "project: x\n")
        write(root, ".contextia/work/tasks/TASK-001.md", TASK)
        write(root, ".contextia/system/specs/SPEC-002.md", "---\nid: SPEC-002\ntitle: t\nstatus: draft\n---\n")
    if rel.endswith("001.md"):
        write(root, rel.replace("001.md", "session.yaml"), "task: TASK-001\nstarted: '2026-01-01T00:00:00Z'\nstatus: open\n")
    if rel == ".repoctx/project.yaml":
        assert measured("project", "init", root=root)[0] == 0
    write(root, rel, shape.format(bomb=text))
    _code, out, _rss = measured(*args, root=root)
    assert re.search(answer.format(reason=re.escape(reason)), out), out


JSON_FILES = [
    ("package.json", DEEP_JSON, ["project", "init"], r"Wrote \.repoctx/project\.yaml"),
    ("package.json", DEEP_JSON, ["init"], r"Wrote \d+ context files?\b"),
    ("pyproject.toml", DEEP_TOML, ["project", "init"], r"Wrote \.repoctx/project\.yaml"),
    ("pyproject.toml", DEEP_TOML, ["init"], r"Wrote \d+ context files?\b"),
    ("Cargo.toml", DEEP_TOML, ["init"], r"Wrote \d+ context files?\b"),
    (".mcp.json", DEEP_JSON, ["install", "claude-code", "--dry-run"],
     r"\.mcp\.json is not plain JSON \(JSON is malformed: nested too deeply\)"),
    (".repoctx/caches/docs/manifest.json", DEEP_JSON, ["resolve", "--cache", "docs", "--query", "x", "--budget", "1000"],
     r"cache_invalid|not a valid cache"),
    (".repoctx/proposals/0123456789ab.json", DEEP_JSON, ["proposals", "inspect", "--id", "0123456789ab"],
     r"Proposal 0123456789ab is not a valid proposal file"),
    (".repoctx/runs/20260101T000000000000Z.json", DEEP_JSON, ["runs", "read", "--id", "20260101T000000000000Z"],
     r"Run 20260101T000000000000Z is not a valid run file"),
]


@pytest.mark.parametrize(("rel", "text", "args", "answer"), JSON_FILES,
                         ids=[f"{f[0]}:{' '.join(f[2])}" for f in JSON_FILES])
def test_json_and_toml_nested_past_the_recursion_limit_are_refused_as_malformed(tmp_path, rel, text, args, answer):
    root = tree(tmp_path)
    write(root, rel, text)
    _code, out, _rss = measured(*args, root=root)
    assert re.search(answer, out), out


def test_serve_refuses_to_start_on_a_bomb_in_its_config(tmp_path):
    root = tree(tmp_path)
    for text, reason in BOMBS.values():
        write(root, ".repoctx/config.yaml", text)
        proc = subprocess.run([*REPOCTX, "serve", "--root", str(root)], input="", capture_output=True,
                              text=True, timeout=TIMEOUT_S)
        assert proc.returncode == 2 and proc.stdout == ""
        assert f".repoctx/config.yaml: not valid YAML ({reason} at line" in proc.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("bomb", BOMBS)
async def test_the_server_refuses_each_bomb_and_keeps_serving(tmp_path, bomb):
    text, reason = BOMBS[bomb]
    root = build_sample_repo(tmp_path / "repo")
    write(root, ".repoctx/project.yaml", text)
    write(root, "src/core/.context.yaml", text)
    write(root, ".context.config.yaml", text)
    write(root, ".contextia/system/specs/SPEC-001.md", frontmatter(text))
    logs = root / ".contextia/work/logs/TASK-001/2026-02-28T14-30-00Z"
    write(logs, "session.yaml", text)
    write(logs, "001.md", frontmatter(text))
    write(root, ".repoctx/caches/docs/manifest.json", DEEP_JSON)
    with anyio.fail_after(TIMEOUT_S):
        async with mcp_client("--root", str(root)) as client:
            with pytest.raises(MCPError) as raised:  # the contract's error, with our reason
                await client.read_resource("context://project/overview")
            assert reason in raised.value.error.data["reason"]

            async def refused(tool: str, args: dict) -> str:
                result = await client.call_tool(tool, args)
                assert result.is_error, result
                return result.content[0].text

            assert reason in await refused("add_discovery", {"module": "core", "type": "pattern", "content": "x"})
            queried = json.loads(await refused("query_context", {"scope": "src/core"}))
            assert queried["error"] == 'Invalid or corrupt .context.yaml at scope "src/core"'  # the contract's
            shown = await refused("mcp_show", {"artifact_id": "SPEC-001"})
            assert "frontmatter is not valid YAML at line" in shown and reason in shown
            proposed = await refused("propose_change", {
                "title": "t", "rationale": "r",
                "operations": [{"op": "write", "path": "docs/.context.yaml", "content": text}]})
            assert f"not valid YAML ({reason} at line" in proposed
            inspected = await client.call_tool("context_inspect_cache", {"cache": "docs"})
            assert inspected.structured_content["valid"] is False

            # Files read leniently answer without the bomb: the defaults, the session left out.
            listed = await client.call_tool("list_contexts", {})
            assert not listed.is_error
            log = await client.call_tool("mcp_read_log", {"task_id": "TASK-001"})
            assert "Read the engine" not in log.content[0].text
            checked = await client.call_tool("mcp_check", {})
            assert reason in checked.content[0].text
            assert not (await client.call_tool("ctxt_capabilities", {})).is_error  # still serving


SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
DATA = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(DATA)
def test_what_repoctx_writes_reads_back_as_written(value):
    # PyYAML writes YAML 1.1, the reader reads 1.2: `1e3` or `0o17` must come back as text.
    assert bounded.yaml(bounded.dump_yaml(value, sort_keys=False, allow_unicode=True)) == value


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="[]{}-:,&*!|>'\"#?% \n\tab01.~", max_size=200))
def test_any_text_is_read_or_refused_with_a_line(text):
    try:
        bounded.yaml(text)
    except bounded.YamlError as exc:
        assert 1 <= exc.line <= text.count("\n") + 2 and exc.reason


@pytest.mark.anyio
async def test_a_bomb_in_the_contextia_config_is_named_by_the_server(tmp_path):
    root = build_sample_repo(tmp_path / "repo")
    for text, reason in BOMBS.values():
        write(root, ".contextia/config.yaml", text)
        with anyio.fail_after(TIMEOUT_S):
            async with mcp_client("--root", str(root)) as client:
                checked = await client.call_tool("mcp_check", {})
                assert f"config.yaml is not valid YAML ({reason} at line" in checked.content[0].text
                assert not (await client.call_tool("ctxt_capabilities", {})).is_error
