"""Task context at scale: what `task_context` costs on a large tree (issue 23).

    python -m benches.bench_tasks [--files 100000] [--seed 0] [--nogit] [--repo PATH [--whole]] [--n 40]

Measures, on the synthetic tree of benches/synth.py (or an existing repository, read-only):
- the index, built in this process as a cold CLI call builds it: wall time, the growth of this
  process's RSS over the build (the memory a serving process holds for it) and the index's own
  count of its bytes, each per indexed file; then warm queries in process (no MCP), wall and
  CPU (all threads), and the CPU of one task at lengths of 250 to 64,000 characters;
- warm `task_context` round trips through the official MCP client over stdio, interleaved call
  by call with the SDK's no-op (`REPOCTX_BENCH_NOOP=1`) as in the `mcp` suite, p50/p95/p99;
- `task_context` after an edit (a line appended to one file, then taken out again: the index
  reads that file again), p50;
- a restarted server's first `task_context` (the index saved by the first server on disk) beside
  its first no-op (the server's start alone) and the first call of the SDK's own low-level server
  with one tool (benches/sdk_server.py: the interpreter and the SDK, the floor of any server's
  start), medians of `--repeat` rounds; and each server's RSS once idle after its first answer:
  the first builds the index from nothing (a saved one of an earlier run is removed first), the
  restarted one loads it;
  the RSS of a default server on an empty directory, the floor of the server's RSS;
- the saved index (`.repoctx/task-index.bin`): the time to encode it, its size per indexed file,
  and the time to build the index from it in process (decode, list every directory, put the
  files in);
- the cold CLI, `repoctx context TASK --json` as a whole process (median of `--repeat`): with no
  saved index nor history (deleted before each run; the run writes them after answering), with a fresh one,
  and with one file touched before each run (read again; too few changed to write the file again).

Tasks on a synthetic tree name its functions, modules and documentation words (`func_12`,
`Func3`, "paragraph of the documentation"); with --repo, the subjects of the last commits.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

from benches import measure, synth
from benches.mcp_rtt import _rss_mib, _server_pid, _settled_rss_mib


def synthetic_tasks(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    shapes = [
        lambda: f"func_{rng.randrange(200)} returns the wrong value in module f{rng.randrange(100000)}",
        lambda: f"Func{rng.randrange(200)} should add one more",
        lambda: f"fix the paragraph {rng.randrange(50)} of the documentation",
        lambda: f"func{rng.randrange(300)} in pkg{rng.randrange(9000)} number handling",
        lambda: "synthetic package regenerate module",
    ]
    return [rng.choice(shapes)() for _ in range(n)]


def commit_tasks(root: Path, n: int, whole: bool = False) -> list[str]:
    """The subjects of the last `n` commits, or with `whole` their whole messages."""
    out = subprocess.run(["git", "-C", str(root), "log", "--no-merges", f"-n{n}", "--format=%x1e" + ("%B" if whole else "%s")],
                         capture_output=True, text=True).stdout
    return [s.strip() for s in out.split("\x1e") if s.strip()] or ["fix the parser"]


def in_process(root: Path, tasks: list[str]) -> dict:
    from repoctx import _core
    from repoctx.base.workspace import Workspace
    from repoctx.formats.artifact import find_project_dir

    ws = Workspace.open(root)
    cfg = ws.scan_config()
    table = _core.walk(str(root), list(cfg.ignore), cfg.max_depth, cfg.min_tokens)
    scopes = [r.scope for r in table.rows]
    rss0 = _rss_mib(os.getpid())
    start = time.perf_counter()
    index = _core.TaskIndex(str(root), scopes, list(cfg.ignore), "@", find_project_dir(str(root)))
    build = time.perf_counter() - start
    from repoctx.base.index import release_free_memory

    release_free_memory()  # as a serving process does after building
    rss1 = _rss_mib(os.getpid())
    files, index_bytes, parts = index.file_count, index.heap_bytes, index.heap_parts
    first = time.perf_counter()
    index.query(tasks[0], 8000, [], [], 10, "bytes4")  # git's history and the notes are read here
    first = time.perf_counter() - first
    samples, cpu = [], []
    for t in tasks:
        start, start_cpu = time.perf_counter(), time.process_time()
        index.query(t, 8000, [], [], 10, "bytes4")
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    by_length = {}  # the tasks joined and cut to each length: CPU p50 of 5 warm questions
    joined = "\n\n".join(tasks)
    for n in (250, 1000, 4000, 16000, 64000):
        task = (joined * (1 + n // len(joined)))[:n]
        index.query(task, 8000, [], [], 10, "bytes4")
        runs = []
        for _ in range(5):
            start_cpu = time.process_time()
            index.query(task, 8000, [], [], 10, "bytes4")
            runs.append(time.process_time() - start_cpu)
        by_length[n] = statistics.median(runs)
    start = time.perf_counter()
    saved = index.save()
    save = time.perf_counter() - start
    del index
    start = time.perf_counter()
    again = _core.TaskIndex(str(root), scopes, list(cfg.ignore), "@", find_project_dir(str(root)), saved)
    load = time.perf_counter() - start
    assert again.loaded == files, (again.loaded, files, again.refused)
    return {"files": files, "build_s": build, "first_query_s": first,
            "rss_growth_bytes_per_file": (rss1 - rss0) * 2**20 / max(files, 1),
            "heap_bytes_per_file": index_bytes / max(files, 1),
            "heap_bytes_per_file_by_part": {what: n / max(files, 1) for what, n in parts},
            "query": measure.percentiles(samples), "query_cpu": measure.percentiles(cpu),
            "query_cpu_by_task_length": by_length,
            "save_s": save, "saved_bytes_per_file": len(saved) / max(files, 1), "load_s": load}


def _server_env() -> dict[str, str]:
    """A measured server's environment: the no-op tool on, and bytecode written, so a restarted
    server imports repoctx's modules compiled, as from an installed wheel (pip compiles them; with
    PYTHONDONTWRITEBYTECODE set, a source tree's were compiled again at every start, 0.1-0.2 s)."""
    env = {**os.environ, "REPOCTX_BENCH_NOOP": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


async def _mcp(root: Path, tasks: list[str], n: int, budget: int) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from repoctx.base.task_index import SAVED_FILE

    (root / SAVED_FILE).unlink(missing_ok=True)  # built from nothing, whatever an earlier run left
    params = StdioServerParameters(command=sys.executable, args=["-m", "repoctx", "serve", "--root", str(root)],
                                   env=_server_env())
    async with Client(params, mode="2026-07-28") as client:
        pid = _server_pid(root)
        start = time.perf_counter()
        first = await client.call_tool("task_context", {"task": tasks[0], "budget": budget})
        first_s = time.perf_counter() - start
        assert not first.is_error, first.content[0].text[:500]
        rss = await _settled_rss_mib(pid)
        noop, warm = [], []
        for i in range(n):
            start = time.perf_counter()
            await client.call_tool("noop", {})
            noop.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = await client.call_tool("task_context", {"task": tasks[i % len(tasks)], "budget": budget})
            warm.append(time.perf_counter() - start)
            assert not result.is_error
        # After an edit: a line appended to one of the top files, then taken out again.
        top = json.loads(first.content[0].text)["files"]
        edited = []
        if top:
            target = root / top[0]["path"]
            was = target.read_bytes()
            try:
                for i in range(min(n, 20)):
                    target.write_bytes(was + f"\n# edit {i}\n".encode() if i % 2 == 0 else was)
                    start = time.perf_counter()
                    await client.call_tool("task_context", {"task": tasks[0], "budget": budget})
                    edited.append(time.perf_counter() - start)
            finally:
                target.write_bytes(was)
        return {"first_call_s": first_s, "server_rss_mib": rss, "noop": measure.percentiles(noop),
                "task_context": measure.percentiles(warm), "after_an_edit": measure.percentiles(edited) if edited else None}


async def _empty_rss(root: Path) -> float:
    """The RSS (MiB) of a default server on an empty directory (a git one when `root` is) after a
    no-op and a failed `task_context`: the floor the measured server's RSS stands beside."""
    import tempfile

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    with tempfile.TemporaryDirectory(prefix="repoctx-bench-empty-") as empty:
        if (root / ".git").exists():
            subprocess.run(["git", "init", "-q", empty], check=True)
        params = StdioServerParameters(command=sys.executable, args=["-m", "repoctx", "serve", "--root", empty],
                                       env=_server_env())
        async with Client(params, mode="2026-07-28") as client:
            await client.call_tool("noop", {})
            await client.call_tool("task_context", {"task": "nothing here"})
            return await _settled_rss_mib(_server_pid(Path(empty)))


async def _restarted(root: Path, task: str | None, budget: int) -> tuple[float, float]:
    """A server started again (the index and history saved by the last one on disk): its first
    answer, in seconds from the call, and its RSS (MiB) once idle after it. The 2026-07-28
    client connects without a handshake, so this is the server's start (its imports) and its
    first answer; with no task, the no-op's."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "repoctx", "serve", "--root", str(root)],
                                   env=_server_env())
    async with Client(params, mode="2026-07-28") as client:
        start = time.perf_counter()
        if task is None:  # the floor: the same start, answering the no-op
            result = await client.call_tool("noop", {})
        else:
            result = await client.call_tool("task_context", {"task": task, "budget": budget})
        took = time.perf_counter() - start
        assert not result.is_error, result.content[0].text[:500]
        return took, await _settled_rss_mib(_server_pid(root))


async def _sdk_first_call() -> float:
    """The SDK's low-level server with one tool, started: its first answer, in seconds from the call."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "benches.sdk_server"],
                                   cwd=str(Path(__file__).resolve().parents[1]), env=_server_env())
    async with Client(params, mode="2026-07-28") as client:
        start = time.perf_counter()
        result = await client.call_tool("noop", {})
        took = time.perf_counter() - start
        assert not result.is_error
        return took


def restarts(root: Path, task: str, budget: int, repeat: int) -> dict:
    """`repeat` rounds of a restarted server's first `task_context`, its first no-op and the SDK's
    own server's first call, one after the other, so each round's three meet the same load: the
    medians, each round's three, and the restarted server's RSS."""
    rounds = []
    for _ in range(repeat):
        call, rss = anyio.run(_restarted, root, task, budget)
        rounds.append((call, anyio.run(_restarted, root, None, budget)[0], anyio.run(_sdk_first_call), rss))
    median = lambda i: statistics.median(r[i] for r in rounds)  # noqa: E731
    return {"restarted_first_call_s": median(0), "restarted_first_noop_s": median(1),
            "sdk_server_first_call_s": median(2), "restarted_server_rss_mib": median(3),
            "restart_rounds": [{"first_call_s": r[0], "first_noop_s": r[1], "sdk_first_call_s": r[2]} for r in rounds]}


def cold_cli(root: Path, task: str, repeat: int) -> dict:
    """The cold CLI with no saved index (nor history), with fresh ones, and after one file was touched."""
    from repoctx.base.task_index import HISTORY_FILE, SAVED_FILE

    argv = [sys.executable, "-m", "repoctx", "context", task, "--json"]
    saved, history = root / SAVED_FILE, root / HISTORY_FILE

    def runs(before) -> dict:
        walls = []
        for _ in range(repeat):
            before()
            walls.append(measure.run_once(argv, str(root))["wall_s"])
        return {"wall_s": statistics.median(walls), "wall_min_s": min(walls), "runs": repeat}

    out = {"no_saved_index": runs(lambda: (saved.unlink(missing_ok=True), history.unlink(missing_ok=True)))}
    out["saved_index"] = runs(lambda: None)
    out["saved_index_bytes"] = saved.stat().st_size
    top = json.loads(subprocess.run(argv, cwd=root, capture_output=True, text=True, check=True).stdout)["files"]
    touched = root / (top[0]["path"] if top else "")
    was = touched.stat()
    try:
        out["one_file_touched"] = runs(lambda: os.utime(touched))
    finally:
        os.utime(touched, ns=(was.st_atime_ns, was.st_mtime_ns))
        # The tree left settled: a file changed (its ctime too) within 2 s of a listing is read
        # again by the next process, not taken from the saved index (RACY_NS in rust/tree/os.rs),
        # and a run started at once would find one file fewer loaded than listed.
        time.sleep(2.1)
    return out


@contextlib.contextmanager
def left_as_found(root: Path):
    """An existing repository's `.repoctx/` as it was before the run (the runs save a task index
    and git's history)."""
    from repoctx.base.task_index import HISTORY_FILE, SAVED_FILE

    state = root / ".repoctx"
    files = [root / SAVED_FILE, root / HISTORY_FILE]
    had_state, had = state.exists(), [f.read_bytes() if f.is_file() else None for f in files]
    try:
        yield
    finally:
        if not had_state:
            shutil.rmtree(state, ignore_errors=True)
        for f, was in zip(files, had):
            if was is None:
                f.unlink(missing_ok=True)
            else:
                f.write_bytes(was)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.bench_tasks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--nogit", action="store_true", help="a synthetic tree without a git repository")
    parser.add_argument("--repo", type=Path, help="an existing repository instead (read-only but for the edit and the "
                        "saved task index, both undone)")
    parser.add_argument("--n", type=int, default=40, help="measured warm calls")
    parser.add_argument("--whole", action="store_true", help="with --repo: whole commit messages as tasks, not subjects")
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--repeat", type=int, default=3, help="cold CLI runs, and rounds of restarted servers")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args = parser.parse_args(argv)
    root = args.repo.resolve() if args.repo else synth.tree(args.files, args.seed, git=not args.nogit)
    tasks = commit_tasks(root, args.n, args.whole) if args.repo else synthetic_tasks(args.n, args.seed)
    report = {"tree": str(root),
              "date": time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime())}
    with left_as_found(root) if args.repo else contextlib.nullcontext():
        print("in process…", file=sys.stderr)
        report["in_process"] = in_process(root, tasks)
        print("over MCP…", file=sys.stderr)
        report["mcp"] = anyio.run(_mcp, root, tasks, args.n, args.budget)
        report["mcp"].update(restarts(root, tasks[-1], args.budget, args.repeat))
        report["mcp"]["empty_server_rss_mib"] = anyio.run(_empty_rss, root)
        print("cold CLI…", file=sys.stderr)
        report["cold_cli"] = cold_cli(root, tasks[0], args.repeat)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"tasks-{report['date']}.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    ip, m = report["in_process"], report["mcp"]
    ms = lambda d: f"p50 {d['p50'] * 1000:.1f} ms, p95 {d['p95'] * 1000:.1f} ms"  # noqa: E731
    print(f"{ip['files']:,} files indexed in {ip['build_s']:.2f} s; {ip['rss_growth_bytes_per_file']:.0f} bytes/file of RSS "
          f"({ip['heap_bytes_per_file']:.0f} by the index's own count); in process {ms(ip['query'])}, "
          f"CPU p50 {ip['query_cpu']['p50'] * 1000:.1f} ms")
    print("bytes per file by part: " + ", ".join(f"{what} {n:.0f}" for what, n in ip["heap_bytes_per_file_by_part"].items()))
    print("CPU p50 by the task's length: " + ", ".join(
        f"{n:,} chars {s * 1000:.1f} ms" for n, s in ip["query_cpu_by_task_length"].items()))
    print(f"MCP: task_context {ms(m['task_context'])} beside the no-op {ms(m['noop'])}; first call {m['first_call_s']:.2f} s; "
          f"server RSS {m['server_rss_mib']:.0f} MiB built from nothing, {m['restarted_server_rss_mib']:.0f} MiB "
          f"restarted from the saved index (an empty one's {m['empty_server_rss_mib']:.0f})" + (f"; after an edit {ms(m['after_an_edit'])}" if m["after_an_edit"] else "")
          + f"; a restarted server's first call {m['restarted_first_call_s']:.2f} s (its first no-op "
          f"{m['restarted_first_noop_s']:.2f} s; the SDK's own server's first call {m['sdk_server_first_call_s']:.2f} s; "
          f"medians of {len(m['restart_rounds'])} rounds; the first call, over the SDK's, round by round: "
          + ", ".join(f"{r['first_call_s']:.2f} s ({r['first_call_s'] / r['sdk_first_call_s']:.2f} ×)"
                      for r in m["restart_rounds"]) + ")")
    print(f"saved index: {ip['saved_bytes_per_file']:.0f} bytes/file, encoded in {ip['save_s'] * 1000:.0f} ms, "
          f"the index built from it in {ip['load_s']:.2f} s")
    c = report["cold_cli"]
    print(f"cold CLI: {c['no_saved_index']['wall_s']:.2f} s with no saved index, {c['saved_index']['wall_s']:.2f} s from it, "
          f"{c['one_file_touched']['wall_s']:.2f} s from it after a file was touched")
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
