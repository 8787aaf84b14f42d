"""Every door that judges a scope gives one answer (issue 21, "A drift users can see"):
`status`, `check`, `validate` and the report on the CLI, `list_contexts`, `check_freshness`
and `ctxt_validate_run` from a server, over random trees, edits and git commits."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import how_deep, mcp_client, run_cli, write

# Examples of the property test; each starts a server and runs a dozen CLI commands a round.
EXAMPLES = how_deep("REPOCTX_STATE_EXAMPLES", 3, 25)

DIRS = ["", "a", "a/b", "c"]
FILES = ["m.py", "n.md"]
UNUSABLE = ("missing", "invalid")  # the contract lists a file that cannot be used as missing

ops = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(DIRS), st.sampled_from(FILES), st.integers(1, 4)),
    st.tuples(st.just("touch"), st.sampled_from(DIRS), st.sampled_from(FILES), st.integers(1, 9)),
    st.tuples(st.just("delete"), st.sampled_from(DIRS), st.sampled_from(FILES), st.just(0)),
    st.tuples(st.just("commit"), st.just(""), st.just(""), st.just(0)),
    st.tuples(st.just("regen"), st.sampled_from(DIRS), st.just(""), st.just(0)),
    st.tuples(st.just("corrupt"), st.sampled_from(DIRS), st.just(""), st.just(0)),
    st.tuples(st.just("drop"), st.sampled_from(DIRS), st.just(""), st.just(0)),
)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
                    *args], cwd=root, check=True, capture_output=True, timeout=60)


def cli_json(root: Path, *args: str) -> dict:
    proc = run_cli(*args, "--json", "--root", str(root))
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def committed_repository(root: Path) -> Path:
    """A repository with history, context files written by `init`, and that committed."""
    write(root, ".context.config.yaml", "min_tokens: 0\n")
    for d in DIRS:
        write(root, f"{d}/m.py" if d else "m.py", f"def f_{d.replace('/', '_')}():\n    return 1\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "code")
    run_cli("init", "--quiet", "--root", str(root), check=True)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "context")
    return root


def apply(root: Path, op) -> None:
    kind, d, name, n = op
    base = root / d
    context = base / ".context.yaml"
    if kind == "write":
        write(root, f"{d}/{name}" if d else name, f"x = {n}\n" * n)
    elif kind == "touch" and (base / name).is_file():
        # Content unchanged, mtime moved (into the past, so the heads memo keeps trusting stamps).
        mtime = (base / name).stat().st_mtime_ns - n * 10**12
        os.utime(base / name, ns=(mtime, mtime))
    elif kind == "delete" and (base / name).is_file():
        (base / name).unlink()
    elif kind == "commit":
        git(root, "add", "-A")
        git(root, "commit", "-qm", "edit", "--allow-empty")
    elif kind == "regen" and base.is_dir():
        run_cli("regen", d or ".", "--quiet", "--root", str(root))
    elif kind == "corrupt" and base.is_dir():
        context.write_text("version: 1\nsummary: [unclosed\n")
    elif kind == "drop" and context.is_file():
        context.unlink()


def _listing(entries) -> dict[str, str]:
    """scope -> fresh, fresh by git, stale or unusable, from list_contexts entries."""
    return {e["scope"]: "unusable" if e["state"] in UNUSABLE else e["state"] + (" by git" if e.get("fresh_by") else "")
            for e in entries}


def _check(r: dict) -> str:
    if r.get("error"):
        return "missing" if r["error"].startswith("No .context.yaml found") else "invalid"
    return r["state"] + (" by git" if r.get("fresh_by") else "")


def _validated(result: dict) -> dict[str, str]:
    """scope -> stale or invalid, from scopes.context_files' problems (fresh files are not named)."""
    check = next(c for c in result["checks"] if c["name"] == "scopes.context_files")
    out = {}
    for problem in check.get("problems", []):
        path, what = problem.split(": ", 1)
        out[os.path.dirname(path) or "."] = "stale" if what.startswith("stale (stored fingerprint") else "invalid"
    return out


def _report(root: Path) -> dict[str, str]:
    html = cli_json(root, "report", "--out", "-")["html"]
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.DOTALL)
                      .group(1).replace("<\\/", "</"))
    return {row[0]: "unusable" if row[1] in UNUSABLE else row[1] for row in data["scopes"]}


async def assert_one_answer(root: Path, client) -> None:
    listed = _listing(json.loads((await client.call_tool("list_contexts", {})).content[0].text)["entries"])
    checks_mcp = {s: _check((await client.call_tool("check_freshness", {"scope": s})).structured_content)
                  for s in listed}
    served = (await client.call_tool("ctxt_validate_run", {"run": False})).structured_content
    with ThreadPoolExecutor(4) as pool:  # the CLI's answers, each its own process, asked at once
        status = pool.submit(cli_json, root, "status")
        report = pool.submit(_report, root)
        validated = pool.submit(cli_json, root, "validate", "--no-run")
        checks = {s: pool.submit(cli_json, root, "check", s) for s in listed}
    status = _listing(status.result()["entries"])
    assert listed == status, "list_contexts (server) and status (CLI) disagree"
    assert report.result() == {s: v.removesuffix(" by git") for s, v in status.items()}, \
        "the report and status disagree"
    checks_cli = {s: _check(f.result()) for s, f in checks.items()}
    assert checks_mcp == checks_cli, "check_freshness (server) and check (CLI) disagree"
    assert {s: "unusable" if v in UNUSABLE else v for s, v in checks_cli.items()} == status, \
        "check and status disagree"
    validated = {s: v for s, v in _validated(validated.result()).items() if s in status}
    assert {s: v for s, v in _validated(served).items() if s in status} == validated, \
        "ctxt_validate_run (server) and validate (CLI) disagree"
    assert validated == {s: v for s, v in checks_cli.items() if v in ("stale", "invalid")}, \
        "validate and check disagree on which scopes are stale or invalid"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(st.lists(ops, min_size=1, max_size=5), min_size=1, max_size=3))
def test_every_door_gives_one_state_per_scope(tmp_path_factory, rounds):
    root = committed_repository(tmp_path_factory.mktemp("state") / "repo")

    async def main():
        async with mcp_client("--root", str(root)) as client:
            await assert_one_answer(root, client)
            for batch in rounds:
                for op in batch:
                    apply(root, op)
                await assert_one_answer(root, client)

    try:
        anyio.run(main)
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


@pytest.mark.anyio
async def test_a_touch_after_a_commit_is_fresh_by_git_at_every_door(tmp_path):
    """The drift as reported: after `init`, a commit and a touch, status and check said fresh
    (git finds the content unchanged) and validate said stale."""
    root = committed_repository(tmp_path / "repo")
    await anyio.sleep(2.1)  # as reported: the touch comes seconds after the commit
    (root / "a/m.py").touch()
    assert {"scope": "a", "state": "fresh", "fresh_by": "git"}.items() <= \
        next(e for e in cli_json(root, "status")["entries"] if e["scope"] == "a").items()
    checked = cli_json(root, "check", "a")
    assert checked["state"] == "fresh" and checked["fresh_by"] == "git"
    assert checked["fingerprint"]["stored"] != checked["fingerprint"]["computed"]
    context_files = next(c for c in cli_json(root, "validate", "--no-run")["checks"]
                         if c["name"] == "scopes.context_files")
    assert context_files["status"] == "pass" and not context_files.get("problems"), context_files
    async with mcp_client("--root", str(root)) as client:
        served = (await client.call_tool("ctxt_validate_run", {"run": False})).structured_content
        assert next(c for c in served["checks"] if c["name"] == "scopes.context_files") == context_files
        (root / "a/m.py").write_text("def changed():\n    return 2\n")  # now the content differs
        served = (await client.call_tool("ctxt_validate_run", {"run": False})).structured_content
        stale = next(c for c in served["checks"] if c["name"] == "scopes.context_files")
        assert stale["status"] == "warn" and [p.split(":")[0] for p in stale["problems"]] == ["a/.context.yaml"]
