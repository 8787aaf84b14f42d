"""Details a Contextia client relies on (issue 19): `mcp_write_log` without a body,
`mcp_search` limits beyond 100, plain text for a failure nobody foresaw, and glob
answers that see an edit whose mtime was put back."""

from __future__ import annotations

import json
import os
import sys

import pytest

from artifacts_fixture import copy_fixture
from conftest import mcp_client, run_cli, write


@pytest.fixture
def project(tmp_path):
    return copy_fixture(tmp_path / "authkit")


def edit_keeping_stat(path, old: str, new: str) -> None:
    """Rewrite `path` in place with the same size and put its mtime back: only the change
    time (and the bytes) say it changed."""
    assert len(old) == len(new)
    st = os.stat(path)
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns


@pytest.mark.anyio
async def test_glob_and_directory_queries_see_a_same_size_edit_with_its_mtime_restored(project):
    # copy_fixture dates every mtime an hour back: no stamp is racy, so the kept index is trusted
    # by its stamps, and the edit below changes only the file's bytes and change time.
    async with mcp_client("--root", str(project)) as client:

        async def find(q: str) -> str:
            return (await client.call_tool("mcp_find_by_path", {"file_path": q})).content[0].text

        queries = ["src/auth/*", "src/auth/**", "src/auth", "src/auth/providers.py"]
        for q in queries:
            before = await find(q)
            assert "src/auth/providers.py:2" in before and "SPEC-006" not in before, q
        edit_keeping_stat(project / "src/auth/providers.py", "@spec SPEC-012", "@spec SPEC-006")
        for q in queries:
            after = await find(q)
            assert "SPEC-006: Password Reset (annotations: src/auth/providers.py:2)" in after, (q, after)


@pytest.mark.anyio
async def test_write_log_without_a_body_writes_an_entry_with_only_its_time(project):
    """The contract's table has task_id alone: `mcp_write_log(task_id=…)` is a whole call."""
    async with mcp_client("--root", str(project)) as client:
        written = await client.call_tool("mcp_write_log", {"task_id": "TASK-006"})
        read = await client.call_tool("mcp_read_log", {"task_id": "TASK-006"})
    assert written.is_error is False
    first, note = written.content[0].text.split("\n")
    assert first.startswith("Log entry written to TASK-006 session ") and note == "The entry has no text: no body was given."
    assert written.structured_content["empty"] is True
    [session] = read.structured_content["sessions"]
    assert [e["body"] for e in session["entries"]] == [""]
    # The CLI form: --body may be left out too; an entry with text has no note.
    proc = run_cli("artifacts", "log", "write", "TASK-006", "--root", str(project), check=True)
    assert proc.stdout.count("\n") == 2
    proc = run_cli("artifacts", "log", "write", "TASK-006", "--body", "Done.", "--json", "--root", str(project),
                   check=True)
    assert "empty" not in json.loads(proc.stdout)


def test_search_takes_limits_beyond_100_and_answers_at_most_every_artifact(project):
    for n in range(200, 330):
        write(project, f".contextia/system/specs/SPEC-{n}.md",
              f"---\nid: SPEC-{n}\ntitle: Widget {n}\nstatus: draft\n---\nA widget.\n")

    def search(*args: str) -> dict:
        out = run_cli("artifacts", "search", "widget", *args, "--json", "--root", str(project), check=True).stdout
        return json.loads(out)

    assert [len(search()["results"]), search()["total"]] == [10, 130]
    for limit in ("150", "100000"):
        found = search("--limit", limit)
        assert found["total"] == 130 and len(found["results"]) == 130, limit
    text = run_cli("artifacts", "search", "widget", "--limit", "150", "--root", str(project), check=True).stdout
    assert text.startswith('Found 130 artifacts matching "widget":\n') and "130. SPEC-" in text
    bad = run_cli("artifacts", "search", "widget", "--limit", "0", "--root", str(project))
    assert bad.returncode == 1 and bad.stderr.strip() == "Invalid limit 0. Valid limits: 1 or more"


# A server whose project reader fails as a bug would: the error names an absolute path.
FAILING = """
import sys
from repoctx.artifacts import tools as artifacts
from repoctx.views.cli import main

def broken(ws):
    raise RuntimeError(f"cannot read {ws.root}")

artifacts.load = broken
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_unexpected_failure_of_a_contextia_tool_is_plain_text(project, tmp_path, mode):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-c", FAILING, "serve", "--root", str(project)],
                                   env=dict(os.environ))
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            failed = await client.call_tool("mcp_search", {"query": "auth"})
    assert failed.is_error is True
    text = failed.content[0].text
    with pytest.raises(ValueError):
        json.loads(text)
    assert text.strip() and not text.lstrip().startswith("{"), text
    assert str(project) not in text and "cannot read" not in text and "Traceback" not in text
    assert "RuntimeError: cannot read" in (tmp_path / "stderr.txt").read_text()


def test_a_session_log_the_disk_refuses_is_a_plain_text_error(project, monkeypatch):
    import errno

    from repoctx.artifacts import log_tools, session_logs
    from repoctx.base.workspace import Workspace

    def full(*_args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(session_logs, "write_entry", full)
    result = log_tools.write_log(Workspace.open(project), log_tools.WriteLogParams("TASK-006", "Progress."))
    assert result.error == "The session log of TASK-006 could not be written: No space left on device"
