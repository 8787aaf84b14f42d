"""`repoctx validate --strict` (issue 3): every check of `validate`, plus context files
cross-checked against the code (check scopes.consistency, what `scopes validate --strict`
finds); exit 0 only when everything is valid and consistent. Plain `validate` is unchanged."""

from __future__ import annotations

import json

import pytest

from conftest import mcp_client, run_cli, write


@pytest.fixture
def drifted(tmp_path):
    """A repository whose context file lists a file (and its export) that was deleted since."""
    root = tmp_path / "repo"
    write(root, "main.py", "def main():\n    return 1\n")
    write(root, "util.py", "def helper():\n    return 2\n")
    run_cli("init", "--root", str(root), check=True)
    (root / "util.py").unlink()
    return root


def checks(stdout: str) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads(stdout)["checks"]}


@pytest.mark.anyio
async def test_strict_fails_on_drift_that_plain_validate_accepts(drifted):
    plain = run_cli("validate", "--no-run", "--json", "--root", str(drifted))
    assert plain.returncode == 0 and "scopes.consistency" not in checks(plain.stdout)

    strict = run_cli("validate", "--strict", "--no-run", "--json", "--root", str(drifted))
    assert strict.returncode == 1
    result = json.loads(strict.stdout)
    assert result["ok"] is False and result["error"]["code"] == "validation_failed"
    consistency = checks(strict.stdout)["scopes.consistency"]
    assert consistency["status"] == "fail"
    assert consistency["problems"] == [".: phantom file: util.py", ".: phantom export: helper"]
    # Every other check still runs, as in plain validate.
    assert set(checks(plain.stdout)) < set(checks(strict.stdout))

    human = run_cli("validate", "--strict", "--no-run", "--root", str(drifted))
    assert human.returncode == 1 and "phantom file: util.py" in human.stdout

    async with mcp_client("--root", str(drifted)) as client:
        tool = await client.call_tool("ctxt_validate_run", {"strict": True, "run": False})
    assert tool.is_error and tool.content[0].text + "\n" == strict.stdout


def test_strict_passes_once_the_context_is_regenerated(drifted):
    run_cli("regen", "--root", str(drifted), check=True)
    proc = run_cli("validate", "--strict", "--json", "--root", str(drifted))
    assert proc.returncode == 0 and checks(proc.stdout)["scopes.consistency"]["status"] == "pass"
    run = json.loads(run_cli("runs", "read", "latest", "--json", "--root", str(drifted), check=True).stdout)
    assert "scopes.consistency" in run["content"]  # the recorded run has the strict step


def test_help_says_what_strict_does():
    out = run_cli("validate", "--help", check=True).stdout
    assert "--strict" in out and "scopes validate --strict" in " ".join(out.split())
