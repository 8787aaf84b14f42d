"""Writes that finish or roll back, and one lock for every writer (issue 20, items 6 and 7).

- `proposals apply` of a multi-file proposal is SIGKILLed at every step it takes: a clean
  apply under strace lists its writes, fsyncs, renames, unlinks and mkdirs in order, then
  strace, from outside, kills the real CLI process as it enters the k-th of them, for every
  k (the state before that step and after all the ones before it). After each kill the next
  command (a reader, or apply run again) must leave the repository exactly as it was before
  (proposal pending) or exactly as a clean apply leaves it (proposal applied): no file of
  the proposal old while another is new, no temporary file, no journal, no stray directory.
  REPOCTX_APPLY_KILLS sets how many kills (every step of one proposal; 300 under
  REPOCTX_DEEP=1); more kills cycle through proposals of more files.
- `proposals apply` races `update_context` on the same file: an update that answered
  `updated: true` is in the file afterwards. REPOCTX_RACES sets the number of races (10; 200 deep).
- A journal the repository ships is not trusted: nothing outside context files, nothing in
  `.git`, nothing through a link out is touched.

Random kills of every writer (apply included) are in test_crash_safety.py.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from conftest import REPOCTX, how_deep, mcp_client, run_as_script, run_cli
from repoctx.base.workspace import Workspace
from repoctx.control import proposals
from sample_repo import CONTEXT, build_sample_repo

KILLS = how_deep("REPOCTX_APPLY_KILLS", 0, 300)  # 0: every step of one proposal
RACES = how_deep("REPOCTX_RACES", 10, 200)
# The syscalls that change a file or a directory (a file created by openat is empty until
# its first write: a kill at that write covers it). A regex: names a platform lacks match nothing.
STEPS = "/^(write|pwrite64|fsync|fdatasync|rename|renameat2?|unlink|unlinkat|mkdir|mkdirat|rmdir)$"


def _strace_can_kill() -> bool:
    if shutil.which("strace") is None:
        return False
    proc = subprocess.run(["strace", "-f", "-qq", "-o", os.devnull, "-e", f"trace={STEPS}",
                           "-e", f"inject={STEPS}:signal=KILL:when=1", sys.executable, "-c", "print()"],
                          capture_output=True)
    return proc.returncode == -signal.SIGKILL


def _op(op: dict) -> proposals.Operation:
    return msgspec.convert(op, proposals.Operation)


def _context(scope: str, summary: str) -> str:
    return CONTEXT.format(fingerprint="00000000", scope=scope, summary=summary)


def _repo_with_proposal(root: Path, files: int) -> str:
    """A repository of `files` context files and a pending proposal that changes each, writes
    one in two directories it makes, and removes one: the id."""
    for i in range(files):
        (root / f"m{i}").mkdir(parents=True)
        (root / f"m{i}/.context.yaml").write_text(_context(f"m{i}", f"Module {i}."))
    (root / "gone").mkdir()
    (root / "gone/.context.yaml").write_text(_context("gone", "Soon gone."))
    ops = [_op({"op": "replace", "path": f"m{i}/.context.yaml", "old": f"Module {i}.", "new": f"Module {i}, applied."})
           for i in range(files)]
    ops += [_op({"op": "write", "path": "new/deeper/.context.yaml", "content": _context("new/deeper", "New.")}),
            _op({"op": "delete", "path": "gone/.context.yaml"})]
    made = proposals.propose(Workspace.open(root), proposals.ProposeParams(title=f"{files} files", rationale="r",
                                                                           operations=ops))
    assert made.ok, made
    return made.proposal.id


def _snapshot(root: Path, pid: str) -> tuple[dict[str, bytes | None], str]:
    """(every file's bytes and every directory, but the proposal's record), and its status."""
    record = f".repoctx/proposals/{pid}.json"
    tree: dict[str, bytes | None] = {}
    for directory, dirs, files in os.walk(root):
        rel = os.path.relpath(directory, root)
        for name in dirs:
            tree[os.path.normpath(os.path.join(rel, name)) + "/"] = None
        for name in files:
            path = os.path.normpath(os.path.join(rel, name))
            if path != record:
                tree[path] = Path(directory, name).read_bytes()
    return tree, json.loads((root / record).read_bytes())["status"]


def _apply(root: Path, pid: str, strace: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    # No bytecode written: the steps must be apply's, not an import's.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([*strace, *REPOCTX, "proposals", "apply", pid, "--json", "--root", str(root)],
                          capture_output=True, text=True, timeout=120, env=env)


def _steps(root: Path, pid: str) -> list[str]:
    """Apply under strace: the name of each step's syscall, in order."""
    trace = root.parent / "trace"
    assert _apply(root, pid, ("strace", "-f", "-qq", "-o", str(trace), "-e", f"trace={STEPS}")).returncode == 0
    return [m.group(1) for line in trace.read_text().splitlines() if (m := re.match(r"\d+\s+(\w+)\(", line))]


def _kill_at(steps: list[str], k: int) -> tuple[str, ...]:
    """strace killing the process as it enters step k (strace counts each syscall on its own)."""
    name = steps[k - 1]
    return ("strace", "-f", "-qq", "-o", os.devnull, "-e", f"trace={name}",
            "-e", f"inject={name}:signal=KILL:when={steps[:k].count(name)}")


@pytest.mark.skipif(not _strace_can_kill(), reason="needs strace able to inject SIGKILL (ptrace allowed)")
def test_apply_killed_at_every_step_finishes_or_rolls_back(tmp_path):
    kills, outcomes, files = 0, {"rolled back": 0, "rolled forward": 0}, 3
    while True:
        base = tmp_path / f"base-{files}"
        pid = _repo_with_proposal(base, files)
        before = _snapshot(base, pid)
        clean = tmp_path / f"clean-{files}"
        shutil.copytree(base, clean, symlinks=True)
        steps = _steps(clean, pid)
        after = _snapshot(clean, pid)
        assert after[1] == "applied" and after[0] != before[0]
        for step in range(1, len(steps) + 1):
            repo = tmp_path / f"k-{files}-{step}"
            shutil.copytree(base, repo, symlinks=True)
            killed = _apply(repo, pid, _kill_at(steps, step))
            assert killed.returncode == -signal.SIGKILL, (step, steps[step - 1], killed.stdout, killed.stderr[-2000:])
            kills += 1
            # The next command: a reader (settles first), or apply run again.
            rerun = step % 2 == 0
            if rerun:
                proc = _apply(repo, pid)
                again = json.loads(proc.stdout or "{}")
                assert again.get("ok") or again.get("error", {}).get("code") == "already_applied", proc.stderr[-2000:]
            else:
                assert run_cli("proposals", "list", "--json", "--root", str(repo)).returncode == 0
            state = _snapshot(repo, pid)
            assert state in (before, after), (files, step, sorted(set(state[0]) ^ set(before[0])))
            assert state == after or not rerun
            outcomes["rolled back" if state == before else "rolled forward"] += 1
            shutil.rmtree(repo)
        shutil.rmtree(base)
        shutil.rmtree(clean)
        if kills >= KILLS:
            break
        files += 1
    print(f"\napply killed at every step: {kills} kills (proposals of 3..{files} files plus one made and one "
          f"removed), {outcomes['rolled back']} rolled back, {outcomes['rolled forward']} rolled forward, "
          "0 half-applied, 0 temporary files left")
    assert outcomes["rolled back"] and outcomes["rolled forward"]


# --- apply racing update_context ------------------------------------------------


def _race(root: str, trials: int) -> dict[str, int]:
    """`trials` races in forked pairs released at once: apply of a proposal changing
    src/core/.context.yaml (and docs/.context.yaml) against update_context of src/core."""
    from repoctx.registry.catalog import all_commands
    from repoctx.views import server

    ws = Workspace.open(root)
    update = next(c for c in all_commands() if c.tool == "update_context")
    core = os.path.join(root, "src/core/.context.yaml")
    seen = {"update first (apply refused)": 0, "apply first (both kept)": 0, "lost updates": 0, "lost applies": 0}
    for i in range(trials):
        with open(core, encoding="utf-8") as fh:
            summary = next(line for line in fh if line.startswith("summary:"))
        made = proposals.propose(ws, proposals.ProposeParams(title=f"race {i}", rationale="r", operations=[
            _op({"op": "replace", "path": "src/core/.context.yaml", "old": summary, "new": f'summary: "applied {i}"\n'}),
            _op({"op": "write", "path": "docs/.context.yaml", "content": _context("docs", f"Docs {i}.")})]))
        assert made.ok, made
        go_r, go_w = os.pipe()
        jitter = random.Random(i).uniform(0, 0.02)
        children = []
        for role in ("apply", "update"):
            pid = os.fork()
            if pid == 0:
                code = 2
                try:
                    os.close(go_w)
                    os.read(go_r, 1)
                    if role == "apply":
                        time.sleep(jitter)  # either may take the lock first
                        ok = proposals.apply(ws, proposals.ApplyParams(made.proposal.id)).ok
                    else:
                        result = server.call(ws, update, {"scope": "src/core", "fields": {"todos": [f"update {i}"]}})
                        ok = result.structured_content["updated"]
                    code = 0 if ok else 1
                finally:
                    os._exit(code)
            children.append(pid)
        os.close(go_r)
        os.write(go_w, b"go")
        os.close(go_w)
        applied, updated = (os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 for pid in children)
        assert updated, f"race {i}: update_context failed"
        with open(core, encoding="utf-8") as fh:
            text = fh.read()
        if f"update {i}" not in text:
            seen["lost updates"] += 1
        elif applied and f"applied {i}" not in text:  # an acknowledged apply overwritten
            seen["lost applies"] += 1
        elif applied:  # the update came second and kept the applied summary
            seen["apply first (both kept)"] += 1
        else:
            assert f"applied {i}" not in text
            seen["update first (apply refused)"] += 1
    return seen


def test_apply_racing_update_context_loses_no_acknowledged_update(tmp_path):
    root = build_sample_repo(tmp_path / "repo")
    # The races run in a fresh single-threaded process: a child forked from this one (whose
    # thread pools exist in the parent only) could hang in its first parallel call.
    proc = run_as_script(__file__, "race", str(root), str(RACES), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.splitlines()[-1])
    print(f"\napply racing update_context: {RACES} races, {seen}")
    assert seen["lost updates"] == seen["lost applies"] == 0
    assert sum(seen.values()) == RACES


# --- a journal nobody wrote ---------------------------------------------------------


def _write(root: Path, rel: str, data: bytes | str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def test_a_journal_the_repository_ships_touches_nothing_but_context_files(tmp_path):
    root, outside = tmp_path / "repo", tmp_path / "outside"
    build_sample_repo(root)
    _write(outside, ".context.yaml", "outside\n")
    os.symlink(outside, root / "out")
    (root / ".git").mkdir()
    _write(root, ".git/config", "[core]\n")
    _write(root, ".venv/bin/activate", "# the person's own\n")
    files = [(".venv/bin/activate", True), (".git/config", True), ("out/.context.yaml", True),
             ("../outside/.context.yaml", True), ("src/core/engine.py", False), ("docs/.context.yaml", True)]
    for n, (rel, _written) in enumerate(files):  # what a planted journal would have renamed
        _write(tmp_path, os.path.normpath(os.path.join("repo", os.path.dirname(rel), f".repoctx-txn-{n}.tmp")),
               "planted\n")
    journal = {"files": files, "dirs": [".venv", ".venv/bin"]}
    _write(root, ".repoctx/journal", b"C\n" + json.dumps(journal).encode() + b"\n")
    untouched = {rel: (root / rel).read_bytes() for rel in (".venv/bin/activate", ".git/config", "src/core/engine.py")}
    outside_before = {p.name: p.read_bytes() for p in outside.iterdir()}

    assert run_cli("proposals", "list", "--json", "--root", str(root)).returncode == 0
    assert not (root / ".repoctx/journal").exists()
    assert {rel: (root / rel).read_bytes() for rel in untouched} == untouched
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == outside_before
    # The one entry a transaction could have written is rolled forward: a context file
    # inside the root, which the repository could hold anyway.
    assert (root / "docs/.context.yaml").read_text() == "planted\n"


@pytest.mark.parametrize("journal", [b"", b"C", b"C\n{not json", b"P\n" + b"x" * (2 << 20), "link"])
def test_a_journal_that_cannot_be_read_is_dropped(tmp_path, journal):
    root, outside = tmp_path / "repo", tmp_path / "outside"
    build_sample_repo(root)
    _write(outside, "secret", "secret\n")
    if journal == "link":
        os.symlink(outside / "secret", root / ".repoctx/journal")
    else:
        _write(root, ".repoctx/journal", journal)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "journal"}
    proc = run_cli("proposals", "list", "--json", "--root", str(root))
    assert proc.returncode == 0 and "secret" not in proc.stdout
    assert not os.path.lexists(root / ".repoctx/journal")
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert (outside / "secret").read_text() == "secret\n"


# --- a running server sees the apply whole -----------------------------------------


KILL_AT_FIRST_RENAME = """
import os, signal, sys
from repoctx.control import proposals
from repoctx.base.workspace import Workspace
os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # dies at the commit's first rename
proposals.apply(Workspace.open(sys.argv[1]), proposals.ApplyParams(sys.argv[2]))
"""


@pytest.mark.anyio
async def test_a_server_answers_with_the_apply_finished_after_its_writer_died(tmp_path):
    root = build_sample_repo(tmp_path / "repo")
    made = proposals.propose(Workspace.open(root), proposals.ProposeParams(title="t", rationale="r", operations=[
        _op({"op": "replace", "path": "src/core/.context.yaml", "old": "Core engine.", "new": "Core, applied."}),
        _op({"op": "replace", "path": ".context.yaml", "old": "The sample repository.", "new": "Root, applied."})]))
    async with mcp_client("--root", str(root)) as client:
        first = await client.call_tool("query_context", {"scope": "src/core"})
        assert "Core engine." in first.content[0].text
        proc = subprocess.run([sys.executable, "-c", KILL_AT_FIRST_RENAME, str(root), made.proposal.id])
        assert proc.returncode == -signal.SIGKILL
        assert (root / ".repoctx/journal").read_bytes()[:1] == b"C"  # committed, nothing renamed yet
        assert "Core engine." in (root / "src/core/.context.yaml").read_text()
        core = await client.call_tool("query_context", {"scope": "src/core"})
        top = await client.call_tool("query_context", {"scope": "."})
        assert "Core, applied." in core.content[0].text and "Root, applied." in top.content[0].text
    assert not (root / ".repoctx/journal").exists()
    assert not list(root.rglob(".repoctx-*.tmp"))
    assert json.loads((root / f".repoctx/proposals/{made.proposal.id}.json").read_text())["status"] == "applied"


if __name__ == "__main__":  # the races, run in a fresh process by the test above
    print(json.dumps(_race(sys.argv[2], int(sys.argv[3]))))
