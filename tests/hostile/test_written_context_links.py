"""Written context behind a link out (issue 32, item 1): `.contextia/system`, or its `specs`,
`rationale` or `norms` folder, or one document, is a link to markdown outside the repository
whose title is a secret. `task_context` (over MCP) and `repoctx context` never read it: the
secret is in no answer, and the outside is not read (its atime, set in the past, holds)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli
from sample_repo import build_sample_repo

SECRET = "WRITTENOUTSIDE7f3a"
SPEC = f"---\nid: SPEC-900\ntitle: Zanzibarquux {SECRET}\npaths: [src/*.py]\n---\n\nThe helper engine {SECRET}.\n"
PLACES = ["system", "system/specs", "system/rationale", "system/norms", "system/specs/SPEC-001.md"]
TASK = "zanzibarquux helper"


def _plant(repo: Path, out: Path, place: str) -> Path:
    """Move `.contextia/<place>` to a copy outside holding the secret everywhere; link to it."""
    inside = repo / ".contextia" / place
    target = out / place.replace("/", "_")
    if inside.is_dir():
        shutil.copytree(inside, target)
        for sub in ("", "specs", "rationale", "norms"):
            if (target / sub).is_dir():
                (target / sub / "SPEC-900.md").write_text(SPEC)
        shutil.rmtree(inside)
    else:
        target.write_text(SPEC)
        inside.unlink()
    os.symlink(target, inside)
    past = 1_000_000_000
    for p in [target, *target.rglob("*")]:
        os.utime(p, (past, past + 10))  # atime before mtime: a read moves it (relatime)
    return target


def _atimes(out: Path) -> dict[str, int]:
    return {str(p): p.stat().st_atime_ns for p in out.rglob("*") if p.is_file()}


@pytest.mark.anyio
@pytest.mark.parametrize("place", PLACES)
async def test_written_context_behind_a_link_out_is_never_read(tmp_path, place):
    repo = build_sample_repo(tmp_path / "repo")
    out = tmp_path / "out"
    out.mkdir()
    target = _plant(repo, out, place)
    before = _atimes(out)
    assert before, target
    proc = run_cli("context", TASK, "--root", str(repo), "--json")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert SECRET not in proc.stdout and "SPEC-900" not in proc.stdout
    assert json.loads(proc.stdout)  # an answer, not a crash
    async with mcp_client("--root", str(repo), "--profile", "all") as client:
        result = await client.call_tool("task_context", {"task": TASK})
        text = json.dumps(result.model_dump(mode="json"))
        assert not result.is_error, text
        assert SECRET not in text and "SPEC-900" not in text
    assert _atimes(out) == before


def test_written_context_inside_still_counts(tmp_path):
    """The control: the same spec inside the repository is found (so the test above can fail)."""
    repo = build_sample_repo(tmp_path / "repo")
    (repo / ".contextia/system/specs/SPEC-900.md").write_text(SPEC)
    proc = run_cli("context", TASK, "--root", str(repo), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert SECRET in proc.stdout
