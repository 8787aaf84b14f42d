"""Pathological but legal input (issue 20, item 11): ignore files of tens of thousands of
lines or with a megabyte on one line, and thousands of artifacts. The answers are git's (or
follow the documented limits of rust/tree/ignore.rs, with a warning naming the file) and
come within run_cli's 120 s, a sanity bound far above the figures in docs/security.md,
which are measured, not asserted."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import mcp_client, mkfifo, run_cli, write
from repoctx.base.workspace import Workspace
from repoctx.registry import catalog
from repoctx.views import report

DIRS = ["src", "src/core", "out", "src/out", "n7", "n49999", "keep", "docs", "docs/gen"]

# name: (the pathological .gitignore, the same rules deduplicated or None when there is nothing to drop)
CASES = {
    "50,000 ** lines": ("**\n" * 50_000, "**\n"),
    "50,000 **/out/** lines": ("**/out/**\n" * 50_000, "**/out/**\n"),
    "50,000 out/ lines": ("out/\n" * 50_000, "out/\n"),
    "50,000 distinct names": ("".join(f"n{i}/\n" for i in range(50_000)), None),
    "a 1 MB line": ("zz" + "*" * 1_000_000 + "\n/keep\n", "/keep\n"),
}


def _repo(root: Path, gitignore: str) -> Path:
    for d in DIRS:
        write(root, f"{d}/m.py", "x = 1\n")
    write(root, ".context.config.yaml", "min_tokens: 0\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write(root, ".gitignore", gitignore)
    return root


def _git_walked(root: Path) -> set[str]:
    """The directories a walk reaches as git decides: neither they nor a parent ignored."""
    proc = subprocess.run(["git", "check-ignore", "--stdin", "--no-index"], cwd=root, input="\n".join(DIRS),
                          capture_output=True, text=True, timeout=120)
    ignored = set(proc.stdout.split())
    return {"."} | {d for d in DIRS if not any(d == i or d.startswith(i + "/") for i in ignored)}


def _status(root: Path) -> tuple[set[str], str]:
    out = run_cli("status", "--json", "--root", str(root))
    assert out.returncode in (0, 1), out.stderr
    return {e["scope"] for e in json.loads(out.stdout)["entries"]}, out.stderr


def _report_scopes(root: Path) -> set[str]:
    out = run_cli("report", "--out", "-", "--root", str(root))
    assert out.returncode == 0, out.stderr
    return {s[0] for s in _page_data(out.stdout)["scopes"]}


def _page_data(html: str) -> dict:
    data = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S).group(1)
    return json.loads(data.replace("<\\/", "</"))


def _modules(root: Path) -> list[str]:
    """The modules `project init` then `project scan` derive (the module walk, rust/project/modscan.rs)."""
    for step in ("init", "scan"):
        out = run_cli("project", step, "--json", "--root", str(root))
        assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)["modules"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("case", CASES)
def test_pathological_gitignore_gives_gits_answers(tmp_path, case):
    text, deduplicated = CASES[case]
    root = _repo(tmp_path / "hostile", text)
    expected = _git_walked(root)
    scopes, stderr = _status(root)
    assert scopes == expected
    assert _report_scopes(root) == expected
    modules = _modules(root)
    if deduplicated is not None:
        plain = _repo(tmp_path / "plain", deduplicated)
        assert _status(plain)[0] == expected
        assert [m.replace("plain", "hostile") for m in _modules(plain)] == modules
    if case == "a 1 MB line":  # not applied (and git matches it with nothing here), said once
        assert stderr.count(".gitignore: 1 line(s) longer than 4096 bytes are not applied") == 1


@pytest.mark.anyio
async def test_list_contexts_over_mcp_with_50000_distinct_lines(tmp_path):
    root = _repo(tmp_path / "repo", "".join(f"n{i}/\n" for i in range(50_000)) + "out/\n" * 50_000)
    async with mcp_client("--root", str(root)) as client:
        listing = await client.call_tool("list_contexts", {})
        assert not listing.is_error
        scopes = {e["scope"] for e in json.loads(listing.content[0].text)["entries"]}
    assert scopes == {".", "src", "src/core", "keep", "docs", "docs/gen"}


def test_wildcard_lines_past_the_limit_are_not_applied_and_the_file_is_named(tmp_path):
    # 50,000 distinct wildcard lines: the first 1,000 apply (n7 is ignored as git has it),
    # the rest do not (n49999 is scanned though git ignores it), and stderr says so.
    root = _repo(tmp_path / "repo", "".join(f"**/n{i}\n" for i in range(50_000)))
    scopes, stderr = _status(root)
    assert not {"n7", "n49999"} & _git_walked(root)
    assert "n7" not in scopes and "n49999" in scopes
    assert re.search(r"\.gitignore: its last 49000 wildcard pattern\(s\) are not applied: at most 1000", stderr)


def test_ignore_files_that_are_fifos_hold_no_rules_and_hang_nothing(tmp_path):
    root = _repo(tmp_path / "repo", "out/\n")
    (root / ".git/info/exclude").unlink()
    for fifo in (".contextignore", "src/.gitignore", "keep/.gitignore", ".git/info/exclude"):
        mkfifo(root / fifo)
    scopes, _ = _status(root)
    assert scopes == {".", "src", "src/core", "n7", "n49999", "keep", "docs", "docs/gen"}
    assert _report_scopes(root) == scopes
    assert "keep" in _modules(root)


def test_a_repository_cache_of_a_subdirectory_under_100000_lines_follows_the_rules_above_it(tmp_path):
    root = _repo(tmp_path / "repo", "".join(f"n{i}/\n" for i in range(50_000)) + "*.log\n" * 50_000)
    for rel, text in {"docs/guide.md": "# Guide", "docs/debug.log": "noise", "docs/n7/x.md": "# X"}.items():
        write(root, rel, text)
    out = run_cli("cache", "build", "--root", str(root), "--sources", str(root / "docs"), "--cache", "d", "--repo")
    assert out.returncode == 0, out.stdout + out.stderr
    index = json.loads((root / ".repoctx/caches/d/index.json").read_text())
    assert sorted(index) == ["gen/m.py", "guide.md"]


def _tasks(root: Path, n: int) -> Path:
    write(root, ".contextia/config.yaml", "project: big\nsource_paths: [src]\n")
    for i in range(1, 11):
        write(root, f".contextia/system/specs/SPEC-{i:03d}.md",
              f"---\nid: SPEC-{i:03d}\ntitle: Spec {i}\nstatus: approved\npaths: [src/m{i}.py]\n---\n\nBody {i}.\n")
        write(root, f"src/m{i}.py", f"# @spec SPEC-{i:03d}\nx = {i}\n")
    for i in range(1, n + 1):
        write(root, f".contextia/work/tasks/TASK-{i:03d}.md",
              f"---\nid: TASK-{i:03d}\ntitle: Task {i}\nstatus: {'in_progress' if i % 3 else 'done'}\n"
              f"kind: feature\nlinks: [SPEC-{i % 10 + 1:03d}]\n---\n\nDo thing {i}.\n")
    return root


def test_the_report_reads_once_and_shows_what_each_question_answers(tmp_path):
    # One reading for the whole page gives what asking each tool on its own gives.
    ws = Workspace.open(_tasks(tmp_path, 300))
    once = report.collect(catalog, ws)
    each = report._collect(catalog, ws)
    once.pop("generated"), each.pop("generated")
    assert once.pop("only") is None  # the page's filter, not a reading
    assert once == each
    assert len(once["artifacts"]["items"]) == 310


def test_the_report_on_thousands_of_tasks(tmp_path):
    root = _tasks(tmp_path, 3000)
    out = run_cli("report", "--out", "-", "--root", str(root))
    assert out.returncode == 0, out.stderr
    items = {a["id"]: a for a in _page_data(out.stdout)["artifacts"]["items"]}
    assert len(items) == 3010
    assert items["TASK-3000"]["links"] == ["SPEC-001"] and items["TASK-3000"]["status"] == "done"
    assert items["SPEC-003"]["paths"] == ["src/m3.py"] and items["SPEC-003"]["annotations"] == ["src/m3.py:1"]
