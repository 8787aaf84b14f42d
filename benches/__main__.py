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
        [("check_freshness", {"scope": "."}), ("list_contexts", {})],
        n=max(20, repeat * 10),
        touch=Path(touch.path) if touch else None,
        scope=".",
    )
    by = {r["name"]: r for r in result["rows"]}
    files = int(subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.count("\n"))
    result["ratios"] = {
        "check_freshness / noop (p50)": by["check_freshness"]["p50"] / by["noop"]["p50"],
        "index bytes per file": (result["rss_after_scan_mib"] - result["rss_before_scan_mib"]) * 2**20 / files,
    }
    return result


SUITES = {"cli": suite_cli, "mcp": suite_mcp}


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


def markdown(report: dict) -> str:
    lines = [f"# repoctx benchmarks — {report['machine']['date']}", "",
             f"Tree: `{report['tree']}` ({report['files']} files). Machine: {report['machine']['cpus']} CPUs, "
             f"{report['machine']['platform']}, Python {report['machine']['python']}.", ""]
    for name, result in report["suites"].items():
        lines += [f"## {name}", ""]
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
    for name in args.suite or sorted(SUITES):
        print(f"suite {name}…", file=sys.stderr)
        report["suites"][name] = SUITES[name](root, args.repeat)
    OUT.mkdir(exist_ok=True)
    stamp = report["machine"]["date"].replace(":", "").replace("+0000", "Z")
    (OUT / f"{stamp}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (OUT / f"{stamp}.md").write_text(text + "\n")
    print(text)
    if args.compare:
        print(compare(report, args.compare))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
