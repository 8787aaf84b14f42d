"""Artifacts and project benchmark: `python -m benches.bench_artifacts [--files 100000] [--calls 200]`.

Generates (once, cached under benches/trees/) a synthetic monorepo with the
harness's generator, then adds a Contextia project: 200 specs whose `paths`
cover packages, 100 decisions, 20 norms, 50 active tasks, and 1,000 annotations
in 500 Python, Rust, TypeScript and Go files; and a `.repoctx/project.yaml`
derived by `repoctx project init`. Measures warm round trips through the
official MCP client against one `repoctx serve`, beside the SDK's no-op tool in
the same server and run:

- `mcp_trace` of an annotated file, `mcp_find_by_path` of a file, of a
  directory glob (`dir/*`) and of a top-level package glob (`pkgN/**`, which in
  the generated tree spans a large part of it and lists hundreds of artifacts);
  globs go through the annotation index the server keeps;
- `mcp_context` (a task's bundle at the default budget), `mcp_search`, and the
  project surface's `context://project/overview` and `context://module/{name}`;
- the cost that index saves on every call: a fresh scan of the tree
  (`SourceIndex`, in-process), and `mcp_check`, which always scans afresh.

Writes benches/out/artifacts-<date>.json and .md and prints the markdown.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

from benches import measure, synth

OUT = Path(__file__).parent / "out"
TREES = Path(__file__).parent / "trees"
COMMENT = {".py": "#", ".rs": "//", ".ts": "//", ".go": "//"}


def _artifact(kind_dir: str, artifact_id: str, title: str, status: str, extra: str, body: str) -> tuple[str, str]:
    text = f"---\nid: {artifact_id}\ntitle: {title}\nstatus: {status}\n{extra}---\n\n{body}\n"
    return f".contextia/{kind_dir}/{artifact_id}.md", text


def add_project(root: Path, annotations: int = 1000, seed: int = 0) -> list[str]:
    """Write the Contextia project and annotate sources; returns the annotated files."""
    rng = random.Random(seed)
    sources = sorted(str(p.relative_to(root)) for p in root.rglob("f*.*") if p.suffix in COMMENT)
    chosen = sorted(rng.sample(sources, min(annotations // 2, len(sources))))  # small trees have fewer
    files = [(".contextia/config.yaml", "project: synthetic\n"),
             (".contextia/system/identity.md", "# Synthetic monorepo\n\nGenerated for benchmarks.\n")]
    for i in range(1, 201):
        covered = rng.choice([c for c in chosen if "/" in c])
        paths = f"paths: [{covered.rsplit('/', 1)[0]}/**, {rng.choice(chosen)}]\n"
        files.append(_artifact("system/specs", f"SPEC-{i:03d}", f"Spec {i}", "approved", paths, f"Spec {i} body."))
    for i in range(1, 101):
        files.append(_artifact("system/rationale", f"DEC-{i:03d}", f"Decision {i}", "accepted", "", "Because."))
    for i in range(1, 21):
        files.append(_artifact("system/norms", f"NORM-{i:03d}", f"Norm {i}", "active", "", "Always."))
    for i in range(1, 51):
        links = ", ".join(f"SPEC-{rng.randint(1, 200):03d}" for _ in range(3))
        files.append(_artifact("work/tasks", f"TASK-{i:03d}", f"Task {i}", "in_progress",
                               f"kind: feature\nlinks: [{links}]\n", "## Objective\n\nDo it."))
    for rel, text in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for rel in chosen:
        path = root / rel
        mark = COMMENT[path.suffix]
        second = rng.choice([f"@decision DEC-{rng.randint(1, 100):03d}", f"@norm NORM-{rng.randint(1, 20):03d}"])
        head = f"{mark} @spec SPEC-{rng.randint(1, 200):03d}\n{mark} {second}\n"
        path.write_text(head + path.read_text())
    return chosen


def tree(files: int, seed: int) -> tuple[Path, list[str]]:
    root = TREES / f"artifacts-{files}-{seed}"
    done = root / ".contextia" / ".bench-complete"
    if not done.exists():
        if root.exists():
            import shutil

            shutil.rmtree(root)
        print(f"generating {root} …", file=sys.stderr)
        synth.generate(root, files, seed, git=False)
        chosen = add_project(root, seed=seed)
        done.write_text("\n".join(chosen) + "\n")
    if not (root / ".repoctx" / "project.yaml").exists():
        subprocess.run([sys.executable, "-m", "repoctx", "project", "init"], cwd=root, check=True,
                       stdout=subprocess.DEVNULL)
    return root, done.read_text().split()


async def _sampled(request, inputs: list, n: int) -> dict:
    """Percentiles of `n` awaited `request(input)`, cycling through `inputs` after a warm-up
    on the first five."""
    for item in inputs[:5]:
        await request(item)
    samples = []
    for i in range(n):
        start = time.perf_counter()
        await request(inputs[i % len(inputs)])
        samples.append(time.perf_counter() - start)
    return measure.percentiles(samples)


async def _timed(client, name: str, args_list: list[dict], n: int) -> dict:
    async def call(args: dict) -> None:
        result = await client.call_tool(name, args)
        assert not result.is_error, result.content[0].text

    return {"name": name, "args": args_list[0], **await _sampled(call, args_list, n)}


async def _timed_read(client, uris: list[str], n: int) -> dict:
    # An error would raise.
    return {"name": f"read {uris[0]}", **await _sampled(client.read_resource, uris, n)}


async def _mcp(root: Path, annotated: list[str], n: int) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "repoctx", "serve", "--root", str(root), "--profile", "all"],
        env={**os.environ, "REPOCTX_BENCH_NOOP": "1"},
    )
    files = [f for f in annotated if "/" in f][:: max(1, len(annotated) // 20)][:20]
    packages = sorted({f.split("/")[0] for f in files})[:5]
    async with Client(params, mode="2026-07-28") as client:
        start = time.perf_counter()
        await client.call_tool("mcp_find_by_path", {"file_path": f"{packages[0]}/**"})
        first_glob = time.perf_counter() - start
        rows = [
            await _timed(client, "noop", [{}], n),
            await _timed(client, "mcp_trace", [{"path": f} for f in files], n),
            await _timed(client, "mcp_find_by_path", [{"file_path": f} for f in files], n),
            await _timed(client, "mcp_find_by_path", [{"file_path": f.rsplit("/", 1)[0] + "/*"} for f in files], n),
            await _timed(client, "mcp_find_by_path", [{"file_path": f"{p}/**"} for p in packages], n),
        ]
        rows[2]["name"] = "mcp_find_by_path (file)"
        rows[3]["name"] = "mcp_find_by_path (directory glob dir/*)"
        rows[4]["name"] = "mcp_find_by_path (top-level package glob pkg/**)"
        rows += [
            await _timed(client, "mcp_context", [{"task_id": f"TASK-{i:03d}"} for i in range(1, 51)], n),
            await _timed(client, "mcp_search", [{"query": f"spec {i}"} for i in range(1, 21)], n),
            await _timed_read(client, ["context://project/overview"], n),
            await _timed_read(client, [f"context://module/{p}" for p in packages], n),
        ]
        rows[4]["artifacts_listed"] = [len((await client.call_tool("mcp_find_by_path", {"file_path": f"{p}/**"}))
                                           .structured_content["artifacts"]) for p in packages]
        start = time.perf_counter()
        check = await client.call_tool("mcp_check", {"baseline": "annotations"})
        check_s = time.perf_counter() - start
    return {"rows": rows, "first_glob_call_s": first_glob, "mcp_check_annotations_s": check_s,
            "check_summary": check.content[0].text.splitlines()[1:4]}


def fresh_scan(root: Path, repeat: int) -> float:
    """Median time of a full annotation scan of the tree: what each call would cost without the kept index."""
    from repoctx import _core

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        _core.SourceIndex(str(root), "@", ["."])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(files: int, seed: int, calls: int, repeat: int) -> dict:
    root, annotated = tree(files, seed)
    mcp = anyio.run(_mcp, root, annotated, calls)
    by = {r["name"]: r for r in mcp["rows"]}
    noop = by["noop"]["p50"]
    from repoctx import _core

    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "tree": str(root), "files": files, "annotations": 2 * len(annotated), "cpus": os.cpu_count(),
        "core_build": _core.build_info().profile, "load_avg": os.getloadavg(),
        "fresh_scan_s": fresh_scan(root, repeat), **mcp,
        "ratios": {f"{name} / noop (p50)": r["p50"] / noop for name, r in by.items() if name != "noop"},
    }


def markdown(report: dict) -> str:
    lines = [f"# Artifacts benchmark — {report['date']}", "",
             f"Tree: `{report['tree']}` ({report['files']} files, {report['annotations']} annotations), "
             f"{report['cpus']} CPUs (load average {report['load_avg'][0]:.1f} at the end), core built for "
             f"{report['core_build']}. Warm `repoctx serve`, official MCP client, calls in sequence.", "",
             "| call | p50 | p95 | p99 | p50 / noop |", "|---|---|---|---|---|"]
    noop = report["rows"][0]["p50"]
    for r in report["rows"]:
        lines.append(f"| {r['name']} | {r['p50'] * 1000:.2f} ms | {r['p95'] * 1000:.2f} ms | "
                     f"{r['p99'] * 1000:.2f} ms | {r['p50'] / noop:.2f} |")
    lines += ["", f"- first glob call (builds the annotation index): {report['first_glob_call_s'] * 1000:.0f} ms",
              f"- a fresh scan of the tree, in-process (the per-call cost without the kept index): "
              f"{report['fresh_scan_s'] * 1000:.0f} ms",
              f"- `mcp_check(baseline=\"annotations\")` (always scans afresh): "
              f"{report['mcp_check_annotations_s'] * 1000:.0f} ms"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.bench_artifacts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000, help="files in the synthetic tree (default 100000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calls", type=int, default=200, help="MCP calls per measured tool (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh scans to time (median; default 3)")
    args = parser.parse_args(argv)
    report = run(args.files, args.seed, args.calls, args.repeat)
    OUT.mkdir(exist_ok=True)
    stamp = report["date"].replace(":", "").replace("+00:00", "Z")
    (OUT / f"artifacts-{stamp}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (OUT / f"artifacts-{stamp}.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
