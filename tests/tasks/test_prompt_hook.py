"""`repoctx install claude-code --hook`: Claude Code's UserPromptSubmit hook, run as Claude Code
runs it (the command from .claude/settings.json through a shell, the event as JSON on stdin,
no PATH), hands the agent the ranked files and a small bundle, stays silent when the prompt
is not a task, and `repoctx uninstall` removes it and nothing else."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import REPOCTX, snapshot, write

ORDERS = '''\
def apply_discount(total, coupon):
    """The total after a coupon: a percentage or a fixed amount."""
    if coupon.percentage:
        return total - total * coupon.percentage / 100
    return total - coupon.amount
''' + "\n".join(f"def helper_{i}(x):\n    return x + {i}\n" for i in range(300))
OTHER_HOOKS = {
    "model": "opus",
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo mine"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check-bash"}]}],
    },
}


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "shop"
    write(root, "shop/orders.py", ORDERS)
    write(root, "shop/cli.py", "from shop.orders import apply_discount\n\nprint(apply_discount(10, None))\n")
    write(root, "docs/guide.md", "# Guide\n\nHow to run the shop.\n")
    write(root, ".claude/settings.json", json.dumps(OTHER_HOOKS))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "REPOCTX_CEILING_DIRECTORIES": str(tmp_path.resolve())}


def install(repo, env, *args) -> dict:
    done = subprocess.run([*REPOCTX, *args, "--json"], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def our_hook(repo) -> str:
    groups = json.loads((repo / ".claude/settings.json").read_text())["hooks"]["UserPromptSubmit"]
    commands = [h["command"] for g in groups for h in g["hooks"]]
    assert commands[0] == "echo mine" and len(commands) == 2
    return commands[1]


def run_hook(command: str, cwd, env, prompt: str) -> str:
    event = {"session_id": "0b7c", "transcript_path": "/nonexistent/t.jsonl", "cwd": str(cwd),
             "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    done = subprocess.run(command, shell=True, cwd=cwd, env={**env, "PATH": ""}, input=json.dumps(event),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_hook_hands_the_agent_the_files_of_a_task_and_is_silent_otherwise(repo, env):
    result = install(repo, env, "install", "claude-code", "--hook")
    assert result["hook_action"] == "added" and result["hook_path"] == str(repo.resolve() / ".claude/settings.json")
    command = our_hook(repo)
    assert command.split()[-1] == "prompt-hook" and os.path.isabs(command.split()[0].strip("'"))
    before = snapshot(repo / "shop")
    out = json.loads(run_hook(command, repo / "shop", env, "apply_discount gives the wrong total for percentage coupons"))
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    text = out["hookSpecificOutput"]["additionalContext"]
    ranked = [line for line in text.splitlines() if line[:2] in ("1.", "2.")]
    assert ranked[0].startswith("1. shop/orders.py: ") and "apply_discount" in ranked[0]
    assert "def apply_discount(total, coupon):" in text  # the bundle holds the function's text
    tokens, budget = text.split("Excerpts (")[1].split(" tokens")[0].split(" of ")
    assert budget == "2000" and 0 < int(tokens) <= 2000
    assert snapshot(repo / "shop") == before
    for chat in ("yes, go ahead", "thanks!", "/compact", "!git status", "# always use tabs in shop code",
                 "zebra quantum xylophone marmalade"):
        assert run_hook(command, repo, env, chat) == "", chat
    # Outside any repository (no marker up to the ceiling) nothing is walked or answered.
    loose = write(repo.parent / "loose", "orders.py", ORDERS).parent
    assert run_hook(command, loose, env, "apply_discount gives the wrong total for percentage coupons") == ""
    assert not (loose / ".repoctx").exists()
    # A broken event is no reason to stop the prompt.
    done = subprocess.run(command, shell=True, cwd=repo, env={**env, "PATH": ""}, input="not json",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == ""


def test_the_hook_is_silent_when_only_the_latest_changes_would_answer(repo, env):
    """With a history, a prompt no file matches is ranked by the files changed lately (for the
    agent that asks); the hook, which nobody asked, stays silent on that."""
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "shop"],
                   check=True)
    install(repo, env, "install", "claude-code", "--hook")
    command = our_hook(repo)
    assert run_hook(command, repo, env, "zebra quantum xylophone marmalade") == ""
    assert "1. shop/orders.py" in run_hook(command, repo, env, "apply_discount gives the wrong total")
    done = subprocess.run([*REPOCTX, "context", "zebra quantum xylophone marmalade", "--json", "--root", str(repo)],
                          env=env, capture_output=True, text=True, timeout=120, check=True)
    assert [f["path"] for f in json.loads(done.stdout)["files"]] == ["shop/cli.py", "shop/orders.py"]


def test_install_again_changes_nothing_and_uninstall_removes_only_what_install_wrote(repo, env):
    write(repo, ".mcp.json", json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}))
    install(repo, env, "install", "claude-code", "--hook")
    again = install(repo, env, "install", "claude-code", "--hook")
    assert again["action"] == "unchanged" and again["hook_action"] == "unchanged"
    our_hook(repo)
    dry = install(repo, env, "uninstall", "claude-code", "--dry-run")
    assert len(dry["removed"]) == 2 and "repoctx" in json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    done = install(repo, env, "uninstall", "claude-code")
    assert done["removed"] == [f'server "repoctx" from {repo.resolve() / ".mcp.json"}',
                               f"the UserPromptSubmit prompt hook from {repo.resolve() / '.claude/settings.json'}"]
    assert json.loads((repo / ".claude/settings.json").read_text()) == OTHER_HOOKS
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"github": {"command": "gh-mcp"}}}
    assert install(repo, env, "uninstall", "claude-code")["removed"] == []


def test_a_client_without_a_prompt_hook_is_told_so(repo, env):
    done = subprocess.run([*REPOCTX, "install", "cursor", "--hook", "--json"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    out = json.loads(done.stdout)
    assert done.returncode == 1 and out["error"]["code"] == "invalid_argument" and "claude-code" in out["error"]["message"]
    assert not (repo / ".cursor").exists()
