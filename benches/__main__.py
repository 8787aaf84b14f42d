"""`python -m benches run …`: run benchmark suites on a synthetic or real repository.

Each suite returns rows of figures measured in the same run as their floors
(git, find, the Python interpreter), so the ratios stay meaningful on a noisy,
shared machine. Results go to benches/out/ as JSON and markdown.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from benches import measure, synth

OUT = Path(__file__).parent / "out"


def suite_cli(root: Path, repeat: int) -> dict:
    """Cold CLI commands on the whole tree, beside git's and find's floors."""
    py = sys.executable
    rows = [
        measure.command("repoctx status --json", [py, "-m", "repoctx", "status", "--json"], str(root), repeat),
        measure.command("git status --porcelain", ["git", "status", "--porcelain"], str(root), repeat),
        measure.command("find stat walk (1 thread)", ["find", ".", "-printf", "%s %T@\\n"], str(root), repeat),
        measure.command("repoctx --version", [py, "-m", "repoctx", "--version"], str(root), repeat),
        measure.command("python -c pass", [py, "-c", "pass"], str(root), repeat),
    ]
    by = {r["name"]: r for r in rows}
    ratios = {
        "status / git status": by["repoctx status --json"]["wall_s"] / by["git status --porcelain"]["wall_s"],
        "status / find": by["repoctx status --json"]["wall_s"] / by["find stat walk (1 thread)"]["wall_s"],
    }
    return {"rows": rows, "ratios": ratios}


def suite_mcp(root: Path, repeat: int) -> dict:
    """Warm round trips through the official client, beside the SDK's no-op floor."""
    from benches import mcp_rtt

    touch = next((e for e in os.scandir(root) if e.is_file() and e.name.startswith("f")), None)
    result = mcp_rtt.run(
        root,
        [("check_freshness", "check_freshness", {"scope": "."}),
         ("list_contexts (page of 100)", "list_contexts", {"limit": 100})],
        [("list_contexts", "list_contexts", {})],
        n=max(20, repeat * 10),
        touch=Path(touch.path) if touch else None,
        scope=".",
    )
    by = {r["name"]: r for r in result["rows"]}
    files = int(subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.count("\n"))
    result["ratios"] = {
        "check_freshness / noop (p50)": by["check_freshness"]["p50"] / by["noop"]["p50"],
        "index bytes per file": (result["rss_after_scan_mib"] - result["rss_before_scan_mib"]) * 2**20 / files,
        "server bytes per file after a full listing": (result["rss_after_full_listing_mib"] - result["rss_before_scan_mib"]) * 2**20 / files,
    }
    return result


INDEX_RSS = """
import os, sys
from repoctx import _core
def rss():
    return next(int(l.split()[1]) for l in open(f"/proc/{os.getpid()}/status") if l.startswith("VmRSS")) * 1024
before = rss()
index = _core.LiveIndex(sys.argv[1], [], 10, 4096, True)
rows = index.table()[0]
print(rss() - before, len(rows))
"""


def index_bytes(root: Path) -> int:
    """RSS growth of a fresh process that builds the live index (Rust table and its Python rows)."""
    out = subprocess.run([sys.executable, "-c", INDEX_RSS, str(root)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def suite_scaling(sizes: list[int], repeat: int) -> dict:
    """Cold scan, warm list_contexts and index memory at growing tree sizes (no git repository)."""
    from benches import mcp_rtt

    rows = []
    for files in sizes:
        print(f"  {files} files…", file=sys.stderr)
        root = synth.tree(files, git=False)
        cold = measure.command("repoctx status --json", [sys.executable, "-m", "repoctx", "status", "--json"], str(root), repeat)
        floor = measure.command("find stat walk (1 thread)", ["find", ".", "-printf", "%s %T@\\n"], str(root), repeat)
        warm = mcp_rtt.run(root, [], [("list_contexts", "list_contexts", {})], n=max(10, repeat * 4))
        rows.append({
            "files": files,
            "cold_status_s": cold["wall_s"],
            "find_s": floor["wall_s"],
            "warm_list_contexts_p50_s": warm["rows"][1]["p50"],
            "noop_p50_s": warm["rows"][0]["p50"],
            "index_bytes_per_file": index_bytes(root) / files,
        })
    return {"rows": rows}


def suite_tokens(root: Path, repeat: int) -> dict:
    """Token counting cost per MB on real text: the Python library's own sources."""
    import sysconfig
    import time

    from repoctx import _core
    from repoctx.tokens import bytes4

    texts, size = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        texts.append(text)
        size += len(text.encode())
        if size > 16 * 2**20:
            break
    mb = size / 2**20
    rows = []
    for name, fn in [("bytes4", lambda: [bytes4(t) for t in texts]),
                     ("o200k", lambda: _core.count_tokens("o200k", texts)),
                     ("cl100k", lambda: _core.count_tokens("cl100k", texts))]:
        fn()  # first use builds the encoding's tables
        times, total = [], 0
        for _ in range(repeat):
            start = time.perf_counter()
            total = sum(fn())
            times.append(time.perf_counter() - start)
        best = min(times)
        rows.append({"name": name, "mb": mb, "tokens": total, "s": best, "ms_per_mb": best * 1000 / mb})
    return {"rows": rows}


def suite_caches(root: Path, repeat: int) -> dict:
    """Cache build MB/s and warm context_resolve through MCP on 10,000 documents of the
    standard library (the tree is not used; standalone: python -m benches.bench_caches)."""
    from benches import bench_caches

    return bench_caches.suite(root, repeat)


SUITES = {"cli": suite_cli, "mcp": suite_mcp, "tokens": suite_tokens, "caches": suite_caches}


def machine() -> dict:
    def out(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError:
            return ""

    from repoctx import __version__

    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "repoctx": __version__,
        "commit": out("git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"),
        "git": out("git", "--version"),
    }


def plot(rows: list[dict], path: Path) -> None:
    """Time and memory against tree size, on log-log axes (needs matplotlib: pip install .[bench])."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -e '.[bench]')", file=sys.stderr)
        return
    files = [r["files"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key, label in [("cold_status_s", "cold `repoctx status --json`"), ("find_s", "find stat walk (floor)"),
                       ("warm_list_contexts_p50_s", "warm list_contexts p50 (MCP)"), ("noop_p50_s", "no-op tool p50 (MCP)")]:
        ax1.plot(files, [r[key] for r in rows], marker="o", label=label)
    ax1.set(xscale="log", yscale="log", xlabel="files in the tree", ylabel="seconds", title="Time against tree size")
    ax1.legend(fontsize=8)
    ax2.plot(files, [r["index_bytes_per_file"] for r in rows], marker="o", color="tab:purple")
    ax2.set(xscale="log", xlabel="files in the tree", ylabel="bytes per file", title="Live index memory per file")
    ax2.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}", file=sys.stderr)


def markdown(report: dict) -> str:
    lines = [f"# repoctx benchmarks — {report['machine']['date']}", "",
             f"Tree: `{report['tree']}` ({report['files']} files). Machine: {report['machine']['cpus']} CPUs, "
             f"{report['machine']['platform']}, Python {report['machine']['python']}.", ""]
    for name, result in report["suites"].items():
        lines += [f"## {name}", ""]
        if name == "tokens":
            lines += ["| tokenizer | text | tokens | time | cost per MB |", "|---|---|---|---|---|"]
            lines += [f"| {r['name']} | {r['mb']:.1f} MB | {r['tokens']} | {r['s'] * 1000:.0f} ms | {r['ms_per_mb']:.1f} ms/MB |"
                      for r in result["rows"]]
            lines.append("")
            continue
        if name == "scaling":
            lines += ["| files | cold status | find floor | warm list_contexts p50 | no-op p50 | index bytes/file |",
                      "|---|---|---|---|---|---|"]
            lines += [f"| {r['files']} | {r['cold_status_s'] * 1000:.0f} ms | {r['find_s'] * 1000:.0f} ms | "
                      f"{r['warm_list_contexts_p50_s'] * 1000:.1f} ms | {r['noop_p50_s'] * 1000:.2f} ms | "
                      f"{r['index_bytes_per_file']:.0f} |" for r in result["rows"]]
            lines.append("")
            continue
        if result["rows"] and "p50" in result["rows"][0]:
            lines += ["| tool (warm, over MCP) | p50 | p95 | p99 | n |", "|---|---|---|---|---|"]
            lines += [f"| {r['name']} | {r['p50'] * 1000:.2f} ms | {r['p95'] * 1000:.2f} ms | {r['p99'] * 1000:.2f} ms | {r['n']} |"
                      for r in result["rows"]]
            extra = {k: v for k, v in result.items() if k not in ("rows", "ratios")}
            if "list_contexts_after_touch" in extra:
                t = extra.pop("list_contexts_after_touch")
                lines.append(f"| list_contexts after a touch | {t['p50'] * 1000:.2f} ms | {t['p95'] * 1000:.2f} ms | {t['p99'] * 1000:.2f} ms | {t['n']} |")
            lines += ["", "| figure | value |", "|---|---|"] + [f"| {k} | {v:.3g} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in extra.items()]
        else:
            lines += ["| command | wall (median) | CPU | peak RSS |", "|---|---|---|---|"]
            for r in result["rows"]:
                lines.append(f"| {r['name']} | {r['wall_s'] * 1000:.1f} ms | {r['cpu_s'] * 1000:.1f} ms | {r['peak_rss_mib']:.0f} MiB |")
        if result.get("ratios"):
            lines += ["", "| ratio | value |", "|---|---|"]
            lines += [f"| {k} | {v:.2f} |" for k, v in result["ratios"].items()]
        lines.append("")
    return "\n".join(lines)


def compare(report: dict, earlier_path: str) -> str:
    earlier = json.loads(Path(earlier_path).read_text())
    lines = ["| suite | command | before | after | after/before |", "|---|---|---|---|---|"]
    for suite, result in report["suites"].items():
        old_rows = {r["name"]: r for r in earlier.get("suites", {}).get(suite, {}).get("rows", [])}
        for r in result["rows"]:
            key = "wall_s" if "wall_s" in r else "p50"
            if r["name"] in old_rows and key in old_rows[r["name"]]:
                before, after = old_rows[r["name"]][key], r[key]
                lines.append(f"| {suite} | {r['name']} | {before * 1000:.2f} ms | {after * 1000:.2f} ms | {after / before:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run suites and write benches/out/<date>.json and .md")
    run.add_argument("--files", type=int, default=100_000, help="size of the synthetic tree (default 100000)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--repo", help="benchmark this existing repository instead of a synthetic tree")
    run.add_argument("--suite", action="append", choices=sorted(SUITES), help="suites to run (default: all)")
    run.add_argument("--repeat", type=int, default=5, help="measured runs per command (median reported)")
    run.add_argument("--compare", metavar="FILE", help="an earlier JSON report to print ratios against")
    run.add_argument("--scaling", metavar="N,N,…", help="also run the scaling suite at these sizes, e.g. 10000,100000,1000000")
    args = parser.parse_args(argv)

    if shutil.which("git") is None:
        parser.error("git is needed for the floors")
    if args.repo:
        root = Path(args.repo).resolve()
    else:
        print(f"preparing the synthetic tree of {args.files} files (cached under benches/trees/)…", file=sys.stderr)
        root = synth.tree(args.files, args.seed)
    files = int(subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.count("\n"))
    report = {"machine": machine(), "tree": str(root), "files": files, "suites": {}}
    for name in args.suite or ([] if args.scaling else sorted(SUITES)):
        print(f"suite {name}…", file=sys.stderr)
        report["suites"][name] = SUITES[name](root, args.repeat)
    if args.scaling:
        print("suite scaling…", file=sys.stderr)
        report["suites"]["scaling"] = suite_scaling([int(n) for n in args.scaling.split(",")], args.repeat)
    OUT.mkdir(exist_ok=True)
    stamp = report["machine"]["date"].replace(":", "").replace("+0000", "Z")
    (OUT / f"{stamp}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (OUT / f"{stamp}.md").write_text(text + "\n")
    if "scaling" in report["suites"]:
        plot(report["suites"]["scaling"]["rows"], OUT / f"{stamp}.png")
    print(text)
    if args.compare:
        print(compare(report, args.compare))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
