"""Path confinement, proven: every tool and resource that takes a path, scope, cache name,
artifact id, task id, module name, proposal id or URI gets the same table of hostile values.

Outside the served root sits a canary: a copy of the sample repository whose every text
file carries a secret string. After all cases ran, no output may contain the secret, and
no canary file or directory may have been read (atime), changed (mtime, bytes) or added.
Reads are seen through atime: each canary entry's atime is set before its mtime, so the
mount's relatime updates it on the first read.
"""

from __future__ import annotations

import json
import os
import posixpath
from pathlib import Path
from urllib.parse import quote

import msgspec
import pytest

from conftest import run_cli, write
from repoctx.base.command import ResourceError
from repoctx.base.workspace import Workspace
from repoctx.project import sessions
from repoctx.project.store import Store
from repoctx.registry.catalog import all_commands, all_resources
from repoctx.views import server
from sample_repo import EXAMPLES, build_sample_repo

SECRET = "CANARY-7f3a9c-SECRET"

# Parameters that name something on disk (or an id that becomes a file name), per tool.
PATH_PARAMS = {"path", "under", "scope", "cache", "artifact_id", "file_path", "task_id", "module", "id"}


def hostile_values(outside: Path) -> list[str]:
    o = str(outside)
    return [
        # `..` in every position
        "..", "../", "../outside", "../outside/secret.txt", "../../../../../../etc/passwd",
        "src/../../outside", "src/core/../../../outside/secret.txt", "./../outside", "a/b/../../../outside",
        "src/..", "src/../..", "..//outside", ".../outside", "src/./../../outside/.context.yaml",
        # absolute paths and home
        o, o + "/", o + "/secret.txt", o + "/src/core", "/etc/passwd", "/", "//", "/proc/self/environ",
        "~", "~/", "~/.ssh/id_rsa", "~root",
        # backslash forms
        "..\\outside", "..\\outside\\secret.txt", "src\\..\\..\\outside", "\\\\server\\share", o.replace("/", "\\"),
        # URL-encoded and double-encoded separators and dots
        "..%2Foutside", "%2e%2e/outside", "%2e%2e%2foutside%2fsecret.txt", "%252e%252e%252foutside",
        "..%5coutside", "%c0%ae%c0%ae/outside", "file://" + o + "/secret.txt",
        # NUL and control bytes
        "\x00", "src\x00/../../outside", "../outside\x00.md", "src/\x01\x1b[31m", "\n../outside", "\r\n", "\t",
        # overlong names
        "a" * 256, "a" * 5000, "a/" * 3000, "../" * 2000 + "outside",
        # Unicode look-alikes of dots and slashes, and non-UTF-8 (surrogate-escaped) bytes
        "\u2025/outside", "\uff0e\uff0e/outside", "..\u2215outside", "\u2024\u2024/outside", "..\uff0foutside",
        "\u0000\u202e", "..\udcff/outside", "\udcc0\udcae\udcc0\udcae/outside",
        # symlinks inside the root that lead out: file, directory, relative, absolute, chains, loops
        "links/dir_rel", "links/dir_rel/secret.txt", "links/dir_abs", "links/dir_abs/src/core",
        "links/file_rel", "links/file_abs", "links/chain", "links/chain/secret.txt", "links/loop_a",
        "links/loop_a/x", "links/up", "links/up/outside/secret.txt", "links/dir_rel/..",
        # ids and names that look like paths
        "SPEC-001/../../../outside", "TASK-001/../../../../outside", "docs/../../outside",
    ]


def _mark_unread(root: Path) -> dict[str, tuple]:
    """Set every entry's atime an hour before its mtime; return (atime, mtime, bytes) per path."""
    state = {}
    for directory, dirs, files in os.walk(root):
        for name in files + dirs + ["."]:
            p = os.path.normpath(os.path.join(directory, name))
            if os.path.islink(p):
                continue
            st = os.stat(p)
            os.utime(p, ns=(st.st_mtime_ns - 3_600_000_000_000, st.st_mtime_ns))
    for directory, dirs, files in os.walk(root):
        for name in files + dirs + ["."]:
            p = os.path.normpath(os.path.join(directory, name))
            st = os.lstat(p)
            data = Path(p).read_bytes() if os.path.isfile(p) and not os.path.islink(p) else None
            # reading the bytes above moved the atime: set it back
            if data is not None:
                os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
            state[p] = (st.st_atime_ns, st.st_mtime_ns, data)
    for p, (atime, mtime, _data) in state.items():  # the second walk read the directories again
        os.utime(p, ns=(atime, mtime))
    return state


def _changes(root: Path, before: dict[str, tuple]) -> list[str]:
    out = []
    for p, (atime, mtime, data) in before.items():
        st = os.lstat(p)
        if st.st_atime_ns != atime:
            out.append(f"read: {p}")
        if st.st_mtime_ns != mtime or (data is not None and Path(p).read_bytes() != data):
            out.append(f"modified: {p}")
    return out


def _snapshot_names(root: Path) -> set[str]:
    return {os.path.join(d, n) for d, ds, fs in os.walk(root) for n in ds + fs}


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    base = tmp_path_factory.mktemp("confine")
    outside = base / "outside"
    build_sample_repo(outside)
    for directory, _dirs, files in os.walk(outside):
        for name in files:
            p = Path(directory, name)
            try:
                text = p.read_text()
            except UnicodeDecodeError:
                continue
            if p.suffix in (".yaml", ".yml"):
                text = text.replace('"Core engine."', f'"{SECRET}"').replace('"Sources."', f'"{SECRET}"')
                text = text.replace("The engine.", SECRET).replace("name: sample", f"name: {SECRET}")
                text += f"# {SECRET}\n"
            else:
                text = text.replace("engine", SECRET) + f"\n{SECRET}\n"
            p.write_text(text)
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (outside / ".env").write_text(f"TOKEN={SECRET}\n")

    repo = base / "repo"
    build_sample_repo(repo)
    links = repo / "links"
    links.mkdir()
    os.symlink("../../outside", links / "dir_rel")
    os.symlink(str(outside), links / "dir_abs")
    os.symlink("../../outside/secret.txt", links / "file_rel")
    os.symlink(str(outside / "secret.txt"), links / "file_abs")
    os.symlink("dir_rel", links / "chain")  # chain: chain -> dir_rel -> outside
    os.symlink("loop_b", links / "loop_a")
    os.symlink("loop_a", links / "loop_b")
    os.symlink("../..", links / "up")
    os.symlink("../../outside/src/core", repo / "src/escaped")  # a scope-looking directory that leaves
    # a symlinked root: the server may be started at a link to the repository
    os.symlink(str(repo), base / "rootlink")
    return base, repo, outside


def _cases(outside: Path):
    values = hostile_values(outside)
    for cmd in all_commands():
        if not cmd.tool:
            continue
        fields = {f.name for f in msgspec.structs.fields(cmd.params)}
        example = EXAMPLES.get(cmd.tool, {})
        for field in sorted(fields & PATH_PARAMS):
            for v in values:
                yield cmd, {**example, field: v}, field, v
        if cmd.tool == "propose_change":
            for v in values:
                for op in ({"op": "write", "path": v, "content": SECRET},
                           {"op": "replace", "path": v, "old": "a", "new": SECRET},
                           {"op": "delete", "path": v}):
                    yield cmd, {**example, "operations": [op]}, "operations[].path", v


def _uris(outside: Path):
    for r in all_resources():
        if not r.is_template:
            continue
        head = r.uri.split("{", 1)[0]
        for v in hostile_values(outside):
            yield head + quote(v, safe="", errors="surrogateescape")  # percent-encoded
            yield head + quote(quote(v, safe="", errors="surrogateescape"), safe="")  # double-encoded
            if "/" not in v and "?" not in v and "#" not in v:
                yield head + v  # raw


def test_no_hostile_input_escapes(arena):
    base, repo, outside = arena
    names = _snapshot_names(outside)  # listing reads directories: before marking them unread
    before = _mark_unread(outside)
    workspaces = [Workspace.open(repo), Workspace.open(base / "rootlink")]
    counts = {"cases": 0, "refused": 0, "answered": 0, "escapes": 0}
    leaks, crashes, not_refused = [], [], []

    for ws in workspaces:
        for cmd, args, field, value in _cases(outside):
            counts["cases"] += 1
            try:
                result = server.call(ws, cmd, args)
            except Exception as exc:  # a handler must answer, never raise
                crashes.append(f"{cmd.tool}.{field}={value[:40]!r}: {type(exc).__name__}: {exc}")
                continue
            text = "".join(c.text for c in result.content) + msgspec.json.encode(result.structured_content).decode()
            if SECRET in text:
                leaks.append(f"{cmd.tool}.{field}={value[:40]!r}")
            counts["refused" if result.is_error else "answered"] += 1
            if not result.is_error and field in ("path", "scope", "cache", "operations[].path") and _escapes(value):
                not_refused.append(f"{cmd.tool}.{field}={value[:60]!r}")

        resources = all_resources()
        for uri in _uris(outside):
            counts["cases"] += 1
            found = server.match_resource(resources, uri)
            if found is None:
                counts["refused"] += 1
                continue
            resource, fields = found
            try:
                text = resource.read(ws, fields)
            except ResourceError:
                counts["refused"] += 1
                continue
            except Exception as exc:
                crashes.append(f"{uri[:60]!r}: {type(exc).__name__}: {exc}")
                continue
            counts["answered"] += 1
            if SECRET in text:
                leaks.append(uri[:80])

        # Listings and scans over a tree whose symlinks lead out must not follow them.
        for cmd in all_commands():
            if cmd.tool and not cmd.writes and not {f.name for f in msgspec.structs.fields(cmd.params)} & PATH_PARAMS:
                counts["cases"] += 1
                result = server.call(ws, cmd, EXAMPLES.get(cmd.tool, {}))
                text = "".join(c.text for c in result.content)
                if SECRET in text:
                    leaks.append(f"{cmd.tool} (listing)")

    touched = _changes(outside, before)
    added = _snapshot_names(outside) - names
    counts["escapes"] = len(leaks) + len(touched) + len(added)
    print(f"\nconfinement: {counts}")
    assert not crashes, crashes[:20]
    assert not leaks, leaks[:20]
    assert not touched, touched[:20]
    assert not added, sorted(added)[:20]
    assert not not_refused, not_refused[:20]
    assert counts["cases"] > 3000


def _escapes(value: str) -> bool:
    """Values that name a place outside the root once taken literally (so must be refused)."""
    v = value.replace("\\", "/")
    if "\x00" in v:
        return True
    parts = [p for p in v.split("/") if p]
    depth = 0
    for p in parts:
        depth += -1 if p == ".." else (0 if p == "." else 1)
        if depth < 0:
            return True
    # Paths are normalised lexically before symlinks are resolved (`links/dir_rel/..` is `links`).
    return v.startswith("/") or posixpath.normpath(v).startswith(("links/dir", "links/file", "links/chain", "links/up"))


def test_path_override_to_a_directory_not_allowed(arena):
    base, repo, outside = arena
    ws = Workspace.open(repo)
    by_tool = {c.tool: c for c in all_commands() if c.tool}
    for tool in ("list_contexts", "check_freshness", "query_context"):
        for override in (str(outside), str(base), "..", "../outside", str(repo / "links/dir_abs"), "/", "~"):
            args = {**EXAMPLES.get(tool, {}), "path": override}
            result = server.call(ws, by_tool[tool], args)
            assert result.is_error, (tool, override, result)
            assert SECRET not in result.content[0].text
    # Allowed roots are honoured, and only those.
    allowed = Workspace.open(repo, allowed_roots=[outside / "docs"])
    result = server.call(allowed, by_tool["list_contexts"], {"path": str(outside)})
    assert result.is_error


# --- fixed places a command writes or reads, reached through a link that leads out -----------------
# Not arguments but the directories and files a command always uses: `.contextia/<type>`,
# a client's project config, `.repoctx`. A link there must be refused, and the directory it
# points at must come out exactly as it went in (names and bytes).


def _listing(directory: Path) -> dict[str, bytes | None]:
    return {os.path.relpath(os.path.join(d, n), directory): (Path(d, n).read_bytes() if n in fs else None)
            for d, ds, fs in os.walk(directory) for n in ds + fs}


@pytest.fixture
def repo_and_outside(tmp_path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    write(repo, "src/app.py", "print('hi')\n")
    write(outside, "keep.txt", f"{SECRET}\n")
    return repo, outside


def _cli_json(repo: Path, *args: str) -> tuple[int, dict]:
    proc = run_cli(*args, "--json", "--root", str(repo))
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize("link, refused", [
    ("work", ".contextia/work/tasks"),  # holds tasks and logs: without the check both were made outside
    ("system/specs", ".contextia/system/specs"),
])
def test_artifacts_init_refuses_a_type_directory_linked_out_and_makes_nothing(repo_and_outside, link, refused):
    repo, outside = repo_and_outside
    (repo / ".contextia" / link).parent.mkdir(parents=True)
    os.symlink(outside, repo / ".contextia" / link)
    before, project_before = _listing(outside), _listing(repo)
    code, out = _cli_json(repo, "artifacts", "init")
    assert code == 1
    assert out["error"] == f"Invalid path '{refused}': it leads outside the project"
    assert out.get("created", []) == []
    assert _listing(outside) == before
    assert _listing(repo) == project_before  # every directory is checked before any is made


def test_artifacts_new_refuses_a_type_directory_linked_out(repo_and_outside):
    repo, outside = repo_and_outside
    run_cli("artifacts", "init", "--root", str(repo), check=True)
    specs = repo / ".contextia/system/specs"
    specs.rmdir()
    os.symlink(outside, specs)
    before = _listing(outside)
    code, out = _cli_json(repo, "artifacts", "new", "spec", "--title", SECRET)
    assert code == 1
    assert out == {"error": "Invalid path '.contextia/system/specs': it leads outside the project"}
    assert _listing(outside) == before


@pytest.mark.parametrize("client, link, target", [
    ("claude-code", ".mcp.json", "mcp.json"),  # the file itself, pointing at an existing file
    ("cursor", ".cursor", None),  # its directory, with no file there yet: one would be created outside
    ("vscode", ".vscode", None),  # its directory, with a file there: it would be rewritten
])
def test_install_refuses_a_project_config_linked_out(repo_and_outside, client, link, target):
    repo, outside = repo_and_outside
    write(outside, "mcp.json", json.dumps({"mcpServers": {SECRET: {"command": "x"}}, "servers": {}}))
    if client == "cursor":
        (outside / "mcp.json").unlink()
    os.symlink(outside / target if target else outside, repo / link)
    before = _listing(outside)
    for dry_run in ([], ["--dry-run"]):
        code, out = _cli_json(repo, "install", client, *dry_run)
        assert code == 1
        assert out["ok"] is False and out["error"]["code"] == "invalid_path", out
        assert "leads outside the repository" in out["error"]["message"]
        assert SECRET not in json.dumps(out)  # the file was not read
    assert _listing(outside) == before
    assert os.path.islink(repo / link)  # not replaced by a copy of what it points at


def test_a_link_where_lock_files_used_to_be_is_never_followed(repo_and_outside):
    """Writers lock the root directory itself (workspace.locked): no lock file is made, so a
    link in the place of one (dangling: O_CREAT would make its target) is left alone."""
    repo, outside = repo_and_outside
    run_cli("artifacts", "init", "--root", str(repo), check=True)
    for place in (".contextia/.lock", ".repoctx/project.yaml.lock", ".repoctx/proposals/.lock"):
        (repo / place).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(outside / ("made-by-" + place.replace("/", "-")), repo / place)
    before = _listing(outside)
    code, out = _cli_json(repo, "artifacts", "new", "spec", "--title", "A spec")
    assert code == 0 and out["id"], out
    code, out = _cli_json(repo, "project", "init")
    assert code == 0 and out["created"], out
    assert _listing(outside) == before


def test_agent_discover_does_not_read_a_project_config_linked_out(repo_and_outside):
    repo, outside = repo_and_outside
    write(outside, "mcp.json", json.dumps({"mcpServers": {SECRET: {"command": "x"}}}))
    os.symlink(outside / "mcp.json", repo / ".mcp.json")
    _code, out = _cli_json(repo, "agent", "discover")
    [claude] = [c for c in out["clients"] if c["client"] == "claude-code"]
    [project] = [f for f in claude["files"] if f["scope"] == "project"]
    assert project["problem"] == "leads outside the repository through a link; not read"
    assert SECRET not in json.dumps(out)


def test_sessions_never_read_a_repoctx_directory_linked_out(repo_and_outside):
    """The session database lives outside every repository: an older one a `.repoctx` linked out
    leads to is neither listed nor taken in, and nothing is made there."""
    repo, outside = repo_and_outside
    planted = Store(str(outside / "sessions.db"))  # a session database out there, which must not be read
    planted.start_session(SECRET, "2026-03-01T09:00:00Z")
    planted.close()
    os.symlink(outside, repo / ".repoctx")
    before = _listing(outside)
    code, out = _cli_json(repo, "sessions")
    assert (code, out) == (0, {"sessions": []})
    code, out = _cli_json(repo, "sessions", "show", "abcd")
    assert code == 1 and out["found"] is False and "no sessions are recorded here yet" in out["error"]
    tracker = sessions.Tracker(Workspace.open(repo))
    tracker.connected()  # a new database, which takes in no older file through the link
    tracker.disconnected()
    code, out = _cli_json(repo, "validate")
    [check] = [c for c in out["checks"] if c["name"] == "project.sessions_db"]
    assert check["status"] == "pass" and SECRET not in json.dumps(out)
    resource, fields = server.match_resource(all_resources(), "context://sessions/recent")
    assert SECRET not in resource.read(Workspace.open(repo), fields)
    assert _listing(outside) == before


# --- the core's realpath against Python's -----------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from repoctx.base import workspace  # noqa: E402

_PARTS = st.sampled_from(["a", "b", "link_in", "link_out", "loop", "dangling", "missing", "..", ".", "f"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_PARTS, min_size=0, max_size=6), trailing=st.booleans())
def test_the_core_realpath_is_pythons(tmp_path_factory, parts, trailing):
    """workspace.realpath (every confinement check) takes the core's realpath(3) when it can:
    it must say what os.path.realpath says for links in and out, loops, dangling links,
    missing components, `..` after a link and files used as directories."""
    base = tmp_path_factory.getbasetemp() / "realpath"
    if not base.exists():
        (base / "root/a/b").mkdir(parents=True)
        (base / "outside").mkdir()
        (base / "root/a/f").write_text("x")
        os.symlink("../a", base / "root/a/b/link_in")
        os.symlink(str(base / "outside"), base / "root/a/link_out")
        os.symlink("loop", base / "root/a/loop")
        os.symlink("nowhere", base / "root/a/b/dangling")
    path = str(base / "root/a" / "/".join(parts)) + ("/" if trailing and parts else "")
    assert workspace.realpath(path) == os.path.realpath(path)
