"""`repoctx install CLIENT` and `agent discover` on the CLI, with HOME and
XDG_CONFIG_HOME pointing into the test's own directory: merging never
clobbers other servers, --dry-run writes nothing, discovery reads the same files."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import REPOCTX, write


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    write(root, "src/app.py", "print('hi')\n")
    return root


def cli(env, repo, *args, json_out=True):
    proc = subprocess.run([*REPOCTX, *args, *(["--json"] if json_out else []), "--root", str(repo)],
                          capture_output=True, text=True, timeout=120, env=env)
    return proc.returncode, (json.loads(proc.stdout) if json_out else proc.stdout)


OTHERS = {"mcpServers": {"github": {"command": "gh-mcp", "args": ["--token-env", "GH"], "env": {"GH": "secret"}}},
          "someSetting": [1, 2.5, None, {"nested": True}]}


def test_claude_code_merges_into_mcp_json_keeping_every_other_server(env, repo):
    write(repo, ".mcp.json", json.dumps(OTHERS, indent=4))
    code, out = cli(env, repo, "install", "claude-code")
    assert code == 0 and out["ok"] and out["action"] == "added" and out["other_servers"] == ["github"]
    data = json.loads((repo / ".mcp.json").read_text())
    assert data["someSetting"] == OTHERS["someSetting"]
    assert data["mcpServers"]["github"] == OTHERS["mcpServers"]["github"]
    entry = data["mcpServers"]["repoctx"]
    # No root in the entry: the server finds the repository from where Claude Code starts it.
    assert entry["type"] == "stdio" and entry["args"][-1] == "serve" and "--root" not in entry["args"] and os.path.isabs(entry["command"])
    # The command is this installation's own, and starts with no PATH at all.
    started = subprocess.run([entry["command"], *entry["args"][:-1], "--version"], env={**env, "PATH": ""},
                             capture_output=True, text=True)
    assert started.returncode == 0 and started.stdout.startswith("repoctx ")
    assert cli(env, repo, "install", "claude-code")[1]["action"] == "unchanged"


def test_dry_run_shows_the_change_and_writes_nothing(env, repo):
    code, text = cli(env, repo, "install", "cursor", "--dry-run", json_out=False)
    assert code == 0 and "Would add server \"repoctx\"" in text and "${workspaceFolder}" in text
    assert not (repo / ".cursor").exists()
    write(repo, ".cursor/mcp.json", json.dumps(OTHERS))
    before = (repo / ".cursor/mcp.json").read_bytes()
    code, out = cli(env, repo, "install", "cursor", "--dry-run")
    assert out["dry_run"] is True and out["action"] == "added" and (repo / ".cursor/mcp.json").read_bytes() == before


def test_vscode_uses_its_servers_key_and_keeps_inputs(env, repo):
    write(repo, ".vscode/mcp.json", json.dumps({"inputs": [{"id": "key", "type": "promptString"}],
                                                 "servers": {"other": {"type": "stdio", "command": "x"}}}))
    code, _out = cli(env, repo, "install", "vscode")
    data = json.loads((repo / ".vscode/mcp.json").read_text())
    assert code == 0 and list(data["servers"]) == ["other", "repoctx"] and data["inputs"][0]["id"] == "key"
    assert data["servers"]["repoctx"]["type"] == "stdio" and "mcpServers" not in data


def test_claude_desktop_is_user_wide_and_names_the_root(env, repo):
    code, out = cli(env, repo, "install", "claude-desktop")
    path = os.path.join(env["XDG_CONFIG_HOME"], "Claude", "claude_desktop_config.json")
    assert code == 0 and out["path"] == path
    entry = json.loads(open(path).read())["mcpServers"]["repoctx"]
    assert entry["args"][-2:] == ["--root", str(repo.resolve())] and os.path.isabs(entry["command"])


def test_a_different_server_under_the_name_is_not_replaced_without_force(env, repo):
    mine = {"mcpServers": {"repoctx": {"command": "repoctx", "args": ["serve", "--read-only"]}}}
    write(repo, ".mcp.json", json.dumps(mine))
    code, out = cli(env, repo, "install", "claude-code")
    assert code == 1 and out["error"]["code"] == "conflict"
    assert json.loads((repo / ".mcp.json").read_text()) == mine
    code, out = cli(env, repo, "install", "claude-code", "--name", "repoctx-2")
    assert code == 0 and set(json.loads((repo / ".mcp.json").read_text())["mcpServers"]) == {"repoctx", "repoctx-2"}
    code, out = cli(env, repo, "install", "claude-code", "--force")
    assert code == 0 and out["action"] == "replaced"


def test_a_config_with_comments_is_left_alone(env, repo):
    text = '{\n  // my servers\n  "servers": {}\n}\n'
    write(repo, ".vscode/mcp.json", text)
    code, out = cli(env, repo, "install", "vscode")
    assert code == 1 and out["error"]["code"] == "config_error" and "by hand" in out["error"]["message"]
    assert (repo / ".vscode/mcp.json").read_text() == text


def test_agent_discover_reads_the_files_install_writes(env, repo):
    home = env["HOME"]
    write(repo, ".cursor/mcp.json", json.dumps(OTHERS))
    claude_json = {"mcpServers": {"notes": {"command": "notes"}},
                   "projects": {str(repo.resolve()): {"mcpServers": {"rc": {"command": "python", "args": ["-m", "repoctx", "serve"]}}}}}
    write(repo.parent / "home", ".claude.json", json.dumps(claude_json))
    code, out = cli(env, repo, "agent", "discover")
    assert code == 0 and out["ok"] and out["command"] == "agent discover"
    by = {c["client"]: c for c in out["clients"]}
    assert by["cursor"]["configured"] and not by["cursor"]["registered"]
    assert by["claude-code"]["registered"]  # the local-scope entry in ~/.claude.json runs repoctx
    local = next(f for f in by["claude-code"]["files"] if f["scope"] == "local")
    assert local["path"] == os.path.join(home, ".claude.json") and local["repoctx"] == ["rc"]
    assert not by["vscode"]["configured"] and not by["claude-desktop"]["configured"]
    assert "secret" not in json.dumps(out)  # names only, never commands or environments
    cli(env, repo, "install", "cursor")
    by = {c["client"]: c for c in cli(env, repo, "agent", "discover")[1]["clients"]}
    assert by["cursor"]["registered"]
    project = next(f for f in by["cursor"]["files"] if f["scope"] == "project")
    assert project["servers"] == ["github", "repoctx"] and project["repoctx"] == ["repoctx"]
