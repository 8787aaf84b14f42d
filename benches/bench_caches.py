"""Caches benchmark: `python -m benches.bench_caches [--docs 10000] [--calls 200]`.

Takes the first N text files of the Python standard library directory (its
site-packages included: real code, docs and data of many projects), builds a context cache from them with `repoctx cache build
--repo`, then measures warm `context_resolve` round trips through the official
MCP client. Floors and baselines run in the same process, on the same files:

- build: `cp -r` of the sources (read + write the same bytes, one thread) and a
  plain-Python build (read, sha256, JSON, write; one thread, as the reference
  engine builds);
- resolve: the SDK's no-op tool and `context_list_caches` (MCP overhead), and
  the cold path the reference takes on every call (read and verify the whole
  cache), measured in-process.

Writes benches/out/caches-<date>.json and .md and prints the markdown.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import anyio

from benches import mcp_rtt, measure

OUT = Path(__file__).parent / "out"
EXTENSIONS = (".py", ".txt", ".rst", ".md", ".toml", ".cfg", ".json", ".html", ".c", ".h", ".ini")
QUERIES = ["import os", "unicode decode error", "thread lock acquire", "socket timeout", "def test", "deprecated"]


def pick_sources(count: int, dest: Path) -> tuple[int, int]:
    """Copy the first `count` stdlib text files (sorted walk; UTF-8, no NUL, <= 1 MiB, distinct
    content and id) into `dest`. Returns (files, bytes)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    seen_ids, seen_hashes, total, n = set(), set(), 0, 0
    for dirpath, dirnames, filenames in os.walk(stdlib):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in sorted(filenames):
            if n == count:
                return n, total
            path = Path(dirpath, name)
            if not name.endswith(EXTENSIONS) or name.startswith(".") or path.is_symlink():
                continue
            data = path.read_bytes()
            rel = path.relative_to(stdlib).as_posix()
            digest = hashlib.sha256(data).digest()
            if len(data) > 1 << 20 or b"\0" in data or rel.lower() in seen_ids or digest in seen_hashes:
                continue
            try:
                data.decode()
            except UnicodeDecodeError:
                continue
            seen_ids.add(rel.lower())
            seen_hashes.add(digest)
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            n += 1
            total += len(data)
    return n, total


def python_build(src: Path, out: Path) -> None:
    """The baseline: the same work as a build, one file at a time in plain Python."""
    docs = out / "documents"
    docs.mkdir(parents=True)
    for dirpath, _, filenames in os.walk(src):
        for name in filenames:
            path = Path(dirpath, name)
            content = path.read_bytes().decode()
            version = hashlib.sha256(content.encode()).hexdigest()
            rel = path.relative_to(src).as_posix()
            doc = {"id": rel.lower(), "version": "sha256:" + version, "source": rel, "content": content, "metadata": {}}
            (docs / f"{version[:12]}.json").write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))


def timed(fn, repeat: int) -> dict:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return {"median_s": statistics.median(samples), "min_s": min(samples), "runs": repeat}


def bench_build(work: Path, src: Path, source_bytes: int, repeat: int) -> tuple[list[dict], Path]:
    root = work / "caches"
    py = sys.executable
    counter = iter(range(10**6))

    def repoctx_build():
        name = f"c{next(counter)}"
        proc = subprocess.run([py, "-m", "repoctx", "cache", "build", "--sources", str(src), "--cache", name,
                               "--repo", "--json", "--cache-root", str(root)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        repoctx_build.last = json.loads(proc.stdout)

    def in_process():
        from repoctx.base.workspace import Workspace
        from repoctx.caches import engine as caches

        ws = Workspace.open(work, cache_root=root)
        caches.build(ws, caches.BuildParams(sources=str(src), cache=f"c{next(counter)}", repo=True))

    def startup():
        subprocess.run([py, "-m", "repoctx", "cache", "list", "--cache-root", str(root)], check=True, capture_output=True)

    def cp():
        dst = work / "cp"
        subprocess.run(["cp", "-r", str(src), str(dst)], check=True)
        subprocess.run(["sync", "-f", str(dst)], check=True)  # as durable as the build
        shutil.rmtree(dst)

    def plain():
        dst = work / "plain"
        python_build(src, dst)
        subprocess.run(["sync", "-f", str(dst)], check=True)
        shutil.rmtree(dst)

    rows = []
    for name, fn in [("repoctx cache build --repo", repoctx_build), ("cp -r + sync", cp),
                     ("plain-Python build (1 thread) + sync", plain), ("the same build in process", in_process),
                     ("CLI start alone (repoctx cache list)", startup)]:
        fn()  # warm the page cache and the interpreter
        r = timed(fn, repeat)
        rows.append({"name": name, **r, "mb_per_s": source_bytes / r["median_s"] / 1e6})
        for entry in os.listdir(root) if root.exists() else ():  # one build's files at a time
            if entry != "c0":
                shutil.rmtree(root / entry)
    built = repoctx_build.last
    rows[0]["document_count"] = built["document_count"]
    return rows, root / "c0"


async def _mcp(root: Path, cache: str, calls: int) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "repoctx", "serve", "--cache-root", str(root), "--profile", "caches"],
        env={**os.environ, "REPOCTX_BENCH_NOOP": "1"},
    )

    async def series(name: str, args_of) -> dict:
        samples = []
        for i in range(calls):
            start = time.perf_counter()
            result = await client.call_tool(name, args_of(i))
            samples.append(time.perf_counter() - start)
            assert not result.is_error, result.content[0].text
        return {"name": name, **measure.percentiles(samples)}

    async with Client(params, mode="2026-07-28") as client:
        await client.call_tool("noop", {})
        pid = mcp_rtt._server_pid(root)
        rss_before = mcp_rtt._rss_mib(pid)
        start = time.perf_counter()
        first = await client.call_tool("context_resolve", {"cache": cache, "query": "import os", "budget": 4000})
        cold = time.perf_counter() - start
        assert not first.is_error, first.content[0].text
        view_mib = mcp_rtt._rss_mib(pid) - rss_before
        rows = [
            await series("noop", lambda i: {}),
            await series("context_list_caches", lambda i: {}),
            await series("context_resolve", lambda i: {"cache": cache, "query": QUERIES[i % len(QUERIES)], "budget": 4000}),
        ]
    return {"first_call_s": cold, "view_rss_mib": view_mib, "rows": rows}


def bench_resolve(cache_dir: Path, calls: int, repeat: int) -> dict:
    from repoctx.caches import engine as caches

    # A view is kept once its files are a second old; the build just ended.
    time.sleep(max(0.0, caches.SETTLE_NS / 1e9 + 0.2 - (time.time() - cache_dir.stat().st_ctime)))
    result = anyio.run(_mcp, cache_dir.parent, cache_dir.name, calls)
    view = caches.load_view(str(cache_dir), ".")
    cold = timed(lambda: caches.load_view(str(cache_dir), "."), repeat)
    warm = timed(lambda: (view.fresh(), view.resolve("unicode decode error", 4000)), max(repeat, 20))
    result["in_process"] = {
        "verify_and_load (the reference's per-call work)": cold,
        "fresh check + score + select": warm,
    }
    return result


def markdown(report: dict) -> str:
    b, r = report["build"], report["resolve"]
    lines = [f"# repoctx caches benchmark — {report['date']}", "",
             f"{report['documents']} documents, {report['source_bytes'] / 1e6:.1f} MB of Python {sys.version.split()[0]} "
             f"standard-library text; {os.cpu_count()} CPUs; core built {report['core_profile']}.", "",
             "## Build", "", "| command | median | MB/s |", "|---|---|---|"]
    lines += [f"| {row['name']} | {row['median_s'] * 1000:.0f} ms | "
              f"{row['mb_per_s']:.1f} |" if "start" not in row["name"] else
              f"| {row['name']} | {row['median_s'] * 1000:.0f} ms | – |" for row in b]
    lines += ["", "## Warm round trips through MCP (official client, stdio)", "",
              f"First context_resolve (verifies and loads the cache): {r['first_call_s'] * 1000:.0f} ms; "
              f"the server's memory grows by {r['view_rss_mib']:.0f} MiB for it.", "",
              "| tool | p50 | p95 | calls |", "|---|---|---|---|"]
    lines += [f"| {row['name']} | {row['p50'] * 1000:.2f} ms | {row['p95'] * 1000:.2f} ms | {row['n']} |" for row in r["rows"]]
    lines += ["", "| in process | median |", "|---|---|"]
    lines += [f"| {k} | {v['median_s'] * 1000:.2f} ms |" for k, v in r["in_process"].items()]
    lines += ["", "| ratio | value |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} |" for k, v in report["ratios"].items()]
    return "\n".join(lines)


def run(docs: int, calls: int, repeat: int) -> dict:
    from repoctx import _core

    with tempfile.TemporaryDirectory(prefix="repoctx-bench-caches-") as tmp:
        work = Path(tmp)
        src = work / "src"
        n, source_bytes = pick_sources(docs, src)
        print(f"{n} files, {source_bytes / 1e6:.1f} MB; building…", file=sys.stderr)
        build_rows, cache_dir = bench_build(work, src, source_bytes, repeat)
        print("resolving…", file=sys.stderr)
        resolve = bench_resolve(cache_dir, calls, repeat)
    by = {row["name"]: row for row in resolve["rows"]}
    report = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "documents": build_rows[0]["document_count"],
        "source_bytes": source_bytes,
        "core_profile": _core.build_info().profile,
        "build": build_rows,
        "resolve": resolve,
        "ratios": {
            "build MB/s / cp MB/s": build_rows[0]["mb_per_s"] / build_rows[1]["mb_per_s"],
            "build MB/s / plain-Python MB/s": build_rows[0]["mb_per_s"] / build_rows[2]["mb_per_s"],
            "CLI start / CLI build": build_rows[4]["median_s"] / build_rows[0]["median_s"],
            "context_resolve p50 / noop p50": by["context_resolve"]["p50"] / by["noop"]["p50"],
            "verify-and-load / warm context_resolve p50": resolve["in_process"][
                "verify_and_load (the reference's per-call work)"]["median_s"] / by["context_resolve"]["p50"],
        },
    }
    return report


def suite(root: Path, repeat: int) -> dict:
    """The harness's form (`python -m benches run --suite caches`); the tree is not used:
    the documents come from the standard library."""
    report = run(10_000, max(50, repeat * 20), repeat)
    result: dict = {"rows": report["resolve"]["rows"], "ratios": report["ratios"]}
    result["documents"] = report["documents"]
    result["source MB"] = report["source_bytes"] / 1e6
    for row in report["build"]:
        result[f"{row['name']}: median s"] = row["median_s"]
    result["first context_resolve (verify and load): s"] = report["resolve"]["first_call_s"]
    result["server memory for the view: MiB"] = report["resolve"]["view_rss_mib"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.bench_caches", description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10_000, help="documents in the cache (default 10000)")
    parser.add_argument("--calls", type=int, default=200, help="MCP calls per tool (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per build measurement (median; default 3)")
    args = parser.parse_args(argv)
    report = run(args.docs, args.calls, args.repeat)
    OUT.mkdir(exist_ok=True)
    stamp = report["date"].replace(":", "").replace("+0000", "Z")
    (OUT / f"caches-{stamp}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (OUT / f"caches-{stamp}.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
