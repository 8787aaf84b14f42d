"""Golden outputs of every Contextia tool on the fixture project, through a real
`repoctx serve`: the text (context format), isError and the structured content.

Regenerate after an intended change with REPOCTX_UPDATE_GOLDEN=1 and read the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from artifacts_fixture import FIXTURE, copy_fixture
from conftest import mcp_client

GOLDEN = Path(__file__).parents[1] / "golden" / "artifacts"
UPDATE = os.environ.get("REPOCTX_UPDATE_GOLDEN") == "1"
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")

# (golden name, tool, arguments), called in this order on one server.
CASES = [
    ("show-summary", "mcp_show", {"artifact_id": "SPEC-001"}),
    ("show-meta", "mcp_show", {"artifact_id": "DEC-003", "format": "meta"}),
    ("show-full", "mcp_show", {"artifact_id": "SPEC-001", "format": "full"}),
    ("show-unknown", "mcp_show", {"artifact_id": "SPEC-099"}),
    ("show-malformed", "mcp_show", {"artifact_id": "SPEC-013"}),
    ("show-bad-yaml", "mcp_show", {"artifact_id": "TASK-005"}),
    ("show-bad-format", "mcp_show", {"artifact_id": "SPEC-001", "format": "huge"}),
    ("show-bad-id", "mcp_show", {"artifact_id": "spec-1"}),
    ("search", "mcp_search", {"query": "token refresh rotation", "limit": 5}),
    ("search-spec-tags", "mcp_search", {"query": "auth", "type": "spec", "field": "tags"}),
    ("search-none", "mcp_search", {"query": "kubernetes"}),
    ("search-bad-field", "mcp_search", {"query": "auth", "field": "author"}),
    ("list-approved-specs", "mcp_list", {"type": "spec", "status": "approved"}),
    ("list-decisions", "mcp_list", {"type": "decision"}),
    ("list-bad-type", "mcp_list", {"type": "module"}),
    ("list-bad-status", "mcp_list", {"type": "norm", "status": "approved"}),
    ("trace-python", "mcp_trace", {"path": "src/auth/login.py"}),
    ("trace-rust", "mcp_trace", {"path": "src/tokens/sign.rs"}),
    ("trace-typescript", "mcp_trace", {"path": "web/src/authClient.ts"}),
    ("trace-go", "mcp_trace", {"path": "services/ratelimit/limiter.go"}),
    ("trace-unannotated", "mcp_trace", {"path": "README.md"}),
    ("trace-missing", "mcp_trace", {"path": "src/nope.py"}),
    ("trace-escape", "mcp_trace", {"path": "../outside.py"}),
    ("find-glob", "mcp_find_by_path", {"file_path": "src/auth/*.py"}),
    ("find-file", "mcp_find_by_path", {"file_path": "web/src/legacy.js"}),
    ("find-directory", "mcp_find_by_path", {"file_path": "services"}),
    ("find-nothing", "mcp_find_by_path", {"file_path": "docs/**"}),
    ("context", "mcp_context", {"task_id": "TASK-002"}),
    ("context-tight", "mcp_context", {"task_id": "TASK-002", "budget": 400}),
    ("context-meta", "mcp_context", {"task_id": "TASK-004", "depth": "meta"}),
    ("context-full", "mcp_context", {"task_id": "TASK-003", "depth": "full"}),
    ("context-too-small", "mcp_context", {"task_id": "TASK-002", "budget": 10}),
    ("context-not-a-task", "mcp_context", {"task_id": "SPEC-001"}),
    ("check-all", "mcp_check", {}),
    ("check-links", "mcp_check", {"baseline": "links"}),
    ("check-schema", "mcp_check", {"baseline": "schema"}),
    ("check-annotations", "mcp_check", {"baseline": "annotations"}),
    ("check-ci", "mcp_check", {"baseline": "links", "ci": True}),
    ("check-bad-baseline", "mcp_check", {"baseline": "style"}),
    ("show-task", "mcp_show_task", {"task_id": "TASK-002", "format": "full"}),
    ("show-task-not-a-task", "mcp_show_task", {"task_id": "SPEC-001"}),
    ("list-tasks", "mcp_list_tasks", {}),
    ("list-tasks-in-progress", "mcp_list_tasks", {"status": "in_progress"}),
    ("list-tasks-bugs", "mcp_list_tasks", {"kind": "bug"}),
    ("list-tasks-bad-kind", "mcp_list_tasks", {"kind": "epic"}),
    ("read-log-latest", "mcp_read_log", {"task_id": "TASK-002"}),
    ("read-log-two", "mcp_read_log", {"task_id": "TASK-002", "latest": False, "n": 2}),
    ("read-log-none", "mcp_read_log", {"task_id": "TASK-006"}),
    ("write-log", "mcp_write_log", {"task_id": "TASK-006", "body": "## Progress\n- Listed the routes without scope checks"}),
    ("write-log-again", "mcp_write_log", {"task_id": "TASK-006", "body": "## Open questions\n- Admin keys?"}),
    ("read-log-open", "mcp_read_log", {"task_id": "TASK-006"}),
    ("close-log", "mcp_close_log", {"task_id": "TASK-006"}),
    ("close-log-again", "mcp_close_log", {"task_id": "TASK-006"}),
    ("write-log-empty", "mcp_write_log", {"task_id": "TASK-006"}),  # body is optional in the contract
    ("write-log-unknown-task", "mcp_write_log", {"task_id": "TASK-099", "body": "x"}),
]


def _fixture_stamps() -> set[str]:
    logs = FIXTURE / ".contextia" / "work" / "logs"
    return {m for p in logs.rglob("*") if p.is_file() for m in STAMP.findall(p.read_text())}


FIXED = _fixture_stamps()


def _normalise(text: str, root: Path) -> str:
    """The root as <root>, and times written during the test (not the fixture's) as <now>; a
    session's `#2` goes with its time (it says another session started in the same second)."""
    text = text.replace(str(root), "<root>")
    return re.sub(r"<now> #\d+", "<now>", STAMP.sub(lambda m: m.group(0) if m.group(0) in FIXED else "<now>", text))


def _record(tool: str, args: dict, result, root: Path) -> str:
    structured = json.dumps(result.structured_content, indent=2, ensure_ascii=False)
    return _normalise(
        f"# {tool} {json.dumps(args)} isError={str(bool(result.is_error)).lower()}\n"
        f"{result.content[0].text}\n# structuredContent\n{structured}\n",
        root,
    )


@pytest.mark.anyio
async def test_every_tool_matches_its_golden_output(tmp_path):
    root = copy_fixture(tmp_path / "authkit")
    tools_seen = set()
    mismatches = []
    async with mcp_client("--root", str(root)) as client:
        for name, tool, args in CASES:
            result = await client.call_tool(tool, args)
            got = _record(tool, args, result, root)
            path = GOLDEN / f"{name}.txt"
            tools_seen.add(tool)
            if UPDATE:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(got)
            elif not path.exists() or path.read_text() != got:
                mismatches.append((name, got))
    assert not mismatches, "golden mismatch (REPOCTX_UPDATE_GOLDEN=1 rewrites them):\n" + "\n".join(
        f"--- {name}\n{got}" for name, got in mismatches[:3])
    assert len(tools_seen) == 12
    assert sorted(p.stem for p in GOLDEN.glob("*.txt")) == sorted(name for name, _, _ in CASES)
