"""`python -m benches run …`: run benchmark suites on a synthetic or real repository.

Each suite returns rows of figures measured in the same run as their floors
(git, find, the Python interpreter), so the ratios stay meaningful on a noisy,
shared machine. Results go to benches/out/ as JSON and markdown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from benches import measure, synth
from benches.machine import machine

OUT = Path(__file__).parent / "out"


SOURCE_SUFFIXES = {".py", ".rs", ".ts", ".tsx", ".js", ".go", ".java", ".c", ".h", ".cc", ".cpp", ".rb"}


def is_git_root(root: Path) -> bool:
    """Whether `root` is the top of a git work tree (a tree inside another repository is not)."""
    out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True)
    return out.returncode == 0 and Path(out.stdout.strip()).resolve() == root.resolve()


def tree_files(root: Path) -> list[str]:
    """The tree's files, sorted: git's tracked files in a repository, else every file but .git's."""
    if is_git_root(root):
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True)
        return sorted(f for f in out.stdout.split("\0") if f)
    files = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        rel = os.path.relpath(directory, root)
        files += [name if rel == "." else f"{rel}/{name}" for name in filenames]
    return sorted(files)


def touch_target(root: Path, files: list[str]) -> tuple[Path | None, str]:
    """A source file lying directly in a scope (a directory with a .context.yaml), and that
    scope: the first in sorted order, nested scopes before the root, so every run of a tree
    touches the same file. (None, ".") when no source file lies in a scope."""
    for rel in sorted(files, key=lambda f: ("/" not in f, f)):
        directory = rel.rpartition("/")[0]
        if Path(rel).suffix in SOURCE_SUFFIXES and (root / directory / ".context.yaml").is_file():
            return root / rel, directory or "."
    return None, "."


@contextlib.contextmanager
def recorded_head(root: Path, scope: str):
    """The scope's context file, for the run, recording the checked-out commit as repoctx
    records it (its fingerprint and `evidence.commit_sha`), so that a touch makes the server
    ask git whether the scope's files changed (they did not: fresh by git); the file's bytes
    and times are put back after."""
    from repoctx import _core

    path = root / scope / ".context.yaml"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
    data, was = path.read_bytes(), path.stat()
    text = data.decode()
    text = re.sub(r'^fingerprint: .*$', f'fingerprint: "{_core.fingerprint(str(root / scope))}"', text, flags=re.M)
    text += f'evidence:\n  collected_at: "2026-01-01T00:00:00Z"\n  commit_sha: "{head.stdout.strip()}"\n'
    path.write_text(text)
    try:
        yield
    finally:
        path.write_bytes(data)
        os.utime(path, ns=(was.st_atime_ns, was.st_mtime_ns))


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def suite_cli(root: Path, opts: argparse.Namespace) -> dict:
    """Cold CLI commands on the whole tree, beside git's and find's floors (git's only in a
    repository: elsewhere that floor is absent and its ratio n/a)."""
    py, repeat = sys.executable, opts.repeat
    git = is_git_root(root)
    rows = [
        measure.command("repoctx status --json", [py, "-m", "repoctx", "status", "--json"], str(root), repeat),
        *([measure.command("git status --porcelain", ["git", "status", "--porcelain"], str(root), repeat)] if git else []),
        measure.command("find stat walk (1 thread)", ["find", ".", "-printf", "%s %T@\\n"], str(root), repeat),
        measure.command("repoctx --version", [py, "-m", "repoctx", "--version"], str(root), repeat),
        measure.command("python -c pass", [py, "-c", "pass"], str(root), repeat),
    ]
    by = {r["name"]: r["wall_s"] for r in rows}
    ratios = {
        "status / git status": _ratio(by["repoctx status --json"], by.get("git status --porcelain")),
        "status / find": _ratio(by["repoctx status --json"], by["find stat walk (1 thread)"]),
    }
    return {"rows": rows, "ratios": ratios, "git status floor": "measured" if git else "absent (not a git repository)"}


def suite_mcp(root: Path, opts: argparse.Namespace) -> dict:
    """Warm round trips through the official client, beside the SDK's no-op floor."""
    from benches import mcp_rtt

    files = tree_files(root)
    touch, scope = touch_target(root, files)
    # In our own git trees the touched scope records the commit, so after a touch git is asked.
    asks_git = touch is not None and not opts.repo and is_git_root(root)
    with recorded_head(root, scope) if asks_git else contextlib.nullcontext():
        result = mcp_rtt.run(
            root,
            [("check_freshness", "check_freshness", {"scope": scope}),
             ("query_context", "query_context", {"scope": scope}),
             ("list_contexts (page of 100)", "list_contexts", {"limit": 100}),
             ("ctxt_capabilities", "ctxt_capabilities", {})],
            [("list_contexts", "list_contexts", {})],
            n=max(20, opts.repeat * 10),
            touch=touch,
            scope=scope,
            grow=not opts.repo,  # new directories only in our own trees: --repo is read-only
            read_only=bool(opts.repo),  # and its server writes nothing (the saved task index)
        )
    result["touched"] = str(touch.relative_to(root)) if touch else None
    by = {r["name"]: r for r in result["rows"]}
    index = result["rss_after_scan_mib"] - result["rss_before_scan_mib"]
    full = result["rss_after_full_listing_mib"] - result["rss_before_scan_mib"]
    result["ratios"] = {
        "check_freshness / noop (p50)": by["check_freshness"]["p50"] / by["noop"]["p50"],
        "check_freshness after a touch / noop (p50)":
            result["check_freshness_after_touch"]["p50"] / result["noop_beside_check_freshness_after_touch"]["p50"]
            if touch else None,
        "list_contexts / no-op replaying its reply (p50)":
            by["list_contexts"]["p50"] / by["no-op replaying list_contexts"]["p50"],
        "index bytes per file": _ratio(index * 2**20, len(files)),
        "server bytes per file after a full listing": _ratio(full * 2**20, len(files)),
    }
    return result


INDEX_RSS = """
import os, sys
from repoctx import _core
def rss():
    return next(int(l.split()[1]) for l in open(f"/proc/{os.getpid()}/status") if l.startswith("VmRSS")) * 1024
before = rss()
index = _core.LiveIndex(sys.argv[1], [], 10, 4096, True)
rows = index.table().rows
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
            "same_size_noop_p50_s": warm["rows"][2]["p50"],  # the no-op replaying the listing's reply
            "index_bytes_per_file": index_bytes(root) / files,
        })
    return {"rows": rows}


def suite_tokens(root: Path, opts: argparse.Namespace) -> dict:
    """Token counting cost per MB on real text: the Python library's own sources."""
    import sysconfig
    import time

    from repoctx import _core
    from repoctx.base.tokens import bytes4

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
        for _ in range(opts.repeat):
            start = time.perf_counter()
            total = sum(fn())
            times.append(time.perf_counter() - start)
        best = min(times)
        rows.append({"name": name, "mb": mb, "tokens": total, "s": best, "ms_per_mb": best * 1000 / mb})
    return {"rows": rows}


def suite_caches(root: Path, opts: argparse.Namespace) -> dict:
    """Cache build MB/s and warm context_resolve through MCP on 10,000 documents of the
    standard library (the tree is not used; standalone: python -m benches.bench_caches)."""
    from benches import bench_caches

    return bench_caches.suite(root, opts.repeat)


def suite_scopes(root: Path, opts: argparse.Namespace) -> dict:
    """`repoctx init` and `regen` on a hard-linked copy made beside the tree, with their floors
    (standalone: python -m benches.bench_scopes)."""
    from benches import bench_scopes

    return bench_scopes.suite(root, opts.repeat)


def suite_artifacts(root: Path, opts: argparse.Namespace) -> dict:
    """Warm artifact tools over MCP on a synthetic tree of --files files with a Contextia project
    added (its own tree, not --repo; standalone: python -m benches.bench_artifacts)."""
    from benches import bench_artifacts

    report = bench_artifacts.run(opts.files, opts.seed, max(20, opts.repeat * 10), opts.repeat)
    figures = ("tree", "annotations", "first_glob_call_s", "fresh_scan_s", "mcp_check_annotations_s")
    return {"rows": report["rows"], "ratios": report["ratios"], **{k: report[k] for k in figures}}


SUITES = {"cli": suite_cli, "mcp": suite_mcp, "tokens": suite_tokens, "caches": suite_caches,
          "scopes": suite_scopes, "artifacts": suite_artifacts}


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
                       ("warm_list_contexts_p50_s", "warm list_contexts p50 (MCP)"),
                       ("same_size_noop_p50_s", "no-op replaying that reply p50 (MCP)"),
                       ("noop_p50_s", "no-op tool p50 (MCP)")]:
        ax1.plot(files, [r[key] for r in rows], marker="o", label=label)
    ax1.set(xscale="log", yscale="log", xlabel="files in the tree", ylabel="seconds", title="Time against tree size")
    ax1.legend(fontsize=8)
    ax2.plot(files, [r["index_bytes_per_file"] for r in rows], marker="o", color="tab:purple")
    ax2.set(xscale="log", xlabel="files in the tree", ylabel="bytes per file", title="Live index memory per file")
    ax2.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}", file=sys.stderr)


def _fmt(value, spec: str) -> str:
    if value is None:
        return "n/a"
    return format(value, spec) if isinstance(value, float) else str(value)


def markdown(report: dict) -> str:
    lines = [f"# repoctx benchmarks — {report['machine']['date']}", "",
             f"Tree: `{report['tree']}` ({report['files']} files). Machine: {report['machine']['cpus']} CPUs, "
             f"{report['machine']['platform']}, Python {report['machine']['python']}, core build "
             f"{report['machine'].get('core_build', 'unknown')}.", ""]
    for name, result in report["suites"].items():
        lines += [f"## {name}", ""]
        if name == "tokens":
            lines += ["| tokenizer | text | tokens | time | cost per MB |", "|---|---|---|---|---|"]
            lines += [f"| {r['name']} | {r['mb']:.1f} MB | {r['tokens']} | {r['s'] * 1000:.0f} ms | {r['ms_per_mb']:.1f} ms/MB |"
                      for r in result["rows"]]
            lines.append("")
            continue
        if name == "scaling":
            lines += ["| files | cold status | find floor | warm list_contexts p50 | no-op replaying it p50 "
                      "| no-op p50 | index bytes/file |", "|---|---|---|---|---|---|---|"]
            lines += [f"| {r['files']} | {r['cold_status_s'] * 1000:.0f} ms | {r['find_s'] * 1000:.0f} ms | "
                      f"{r['warm_list_contexts_p50_s'] * 1000:.1f} ms | {r['same_size_noop_p50_s'] * 1000:.1f} ms | "
                      f"{r['noop_p50_s'] * 1000:.2f} ms | {r['index_bytes_per_file']:.0f} |" for r in result["rows"]]
            lines.append("")
            continue
        extra = {k: v for k, v in result.items() if k not in ("rows", "ratios")}
        if result["rows"] and "p50" in result["rows"][0]:
            lines += ["| tool (warm, over MCP) | p50 | p95 | p99 | n |", "|---|---|---|---|---|"]
            lines += [f"| {r['name']} | {r['p50'] * 1000:.2f} ms | {r['p95'] * 1000:.2f} ms | {r['p99'] * 1000:.2f} ms | {r['n']} |"
                      for r in result["rows"]]
            for key, label in (("noop_beside_check_freshness_after_touch", "noop (beside the next row)"),
                               ("check_freshness_after_touch", "check_freshness after a touch"),
                               ("list_contexts_after_touch", "list_contexts after a touch"),
                               ("list_contexts_after_a_new_directory", "list_contexts after a new directory")):
                if key in extra:
                    t = extra.pop(key)
                    lines.append(f"| {label} | {t['p50'] * 1000:.2f} ms | {t['p95'] * 1000:.2f} ms "
                                 f"| {t['p99'] * 1000:.2f} ms | {t['n']} |")
        else:
            lines += ["| command | wall (median) | CPU | peak RSS |", "|---|---|---|---|"]
            for r in result["rows"]:
                lines.append(f"| {r['name']} | {r['wall_s'] * 1000:.1f} ms | {r['cpu_s'] * 1000:.1f} ms | {r['peak_rss_mib']:.0f} MiB |")
        if extra:
            lines += ["", "| figure | value |", "|---|---|"] + [f"| {k} | {_fmt(v, '.3g')} |" for k, v in extra.items()]
        if result.get("ratios"):
            lines += ["", "| ratio | value |", "|---|---|"]
            lines += [f"| {k} | {_fmt(v, '.2f')} |" for k, v in result["ratios"].items()]
        lines.append("")
    return "\n".join(lines)


# What a row is compared on: its median figures, whichever of them it has.
METRICS = ("wall_s", "p50", "s", "cold_status_s", "warm_list_contexts_p50_s", "same_size_noop_p50_s",
           "index_bytes_per_file")


def _row_id(row: dict) -> str | None:
    if "name" in row:
        return row["name"]
    return f"{row['files']} files" if "files" in row else None


def _rows(report: dict) -> dict[tuple[str, str], dict]:
    rows = {}
    for suite, result in report.get("suites", {}).items():
        for row in result.get("rows", []):
            if _row_id(row) is not None:
                rows[(suite, _row_id(row))] = row
    return rows


def compare(report: dict, earlier: dict) -> str:
    """A table of after/before for every row and figure both reports have; rows only one
    report has are counted below it, not compared."""
    before_rows, after_rows = _rows(earlier), _rows(report)

    def about(r: dict) -> str:
        return f"{r.get('files', '?')} files, commit {r.get('machine', {}).get('commit', '?')}"

    lines = [f"Before: {about(earlier)}. After: {about(report)}.", "",
             "| suite | row | figure | before | after | after/before |", "|---|---|---|---|---|---|"]
    for key, after in after_rows.items():
        before = before_rows.get(key)
        for metric in METRICS if before else ():
            a, b = after.get(metric), before.get(metric)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                lines.append(f"| {key[0]} | {key[1]} | {metric} | {b:.4g} | {a:.4g} | {_fmt(_ratio(a, b), '.2f')} |")
    only_after = [f"{s}: {r}" for s, r in after_rows if (s, r) not in before_rows]
    only_before = [f"{s}: {r}" for s, r in before_rows if (s, r) not in after_rows]
    if only_after:
        lines += ["", "Only in this run: " + "; ".join(only_after)]
    if only_before:
        lines += ["", "Only in the earlier run: " + "; ".join(only_before)]
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
    run.add_argument("--out", type=Path, default=OUT, help="directory for the reports (default benches/out/)")
    cmp = sub.add_parser("compare", help="print after/before ratios of two JSON reports")
    cmp.add_argument("earlier", type=Path)
    cmp.add_argument("later", type=Path)
    sub.add_parser("quality", add_help=False,
                   help="rankers' recall and line coverage on a repository's history (python -m benches quality -h)")
    sub.add_parser("quality-bar", add_help=False,
                   help="issue 29's bar over quality reports, with each margin's standard error "
                        "(python -m benches quality-bar -h)")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["quality"]:  # its own parser (benches/quality.py)
        from benches import quality

        return quality.main(argv[1:])
    if argv[:1] == ["quality-bar"]:  # its own parser (benches/quality_bar.py)
        from benches import quality_bar

        return quality_bar.main(argv[1:])
    args = parser.parse_args(argv)

    if args.cmd == "compare":
        print(compare(json.loads(args.later.read_text()), json.loads(args.earlier.read_text())))
        return 0
    if shutil.which("git") is None:
        parser.error("git is needed for the floors")
    if args.repo:
        root = Path(args.repo).resolve()
        if not root.is_dir():
            parser.error(f"--repo {args.repo}: not a directory")
    else:
        print(f"preparing the synthetic tree of {args.files} files (cached under benches/trees/)…", file=sys.stderr)
        root = synth.tree(args.files, args.seed)
    report = {"machine": machine(), "tree": str(root), "files": len(tree_files(root)), "suites": {}}
    for name in args.suite or ([] if args.scaling else sorted(SUITES)):
        print(f"suite {name}…", file=sys.stderr)
        report["suites"][name] = SUITES[name](root, args)
    if args.scaling:
        print("suite scaling…", file=sys.stderr)
        report["suites"]["scaling"] = suite_scaling([int(n) for n in args.scaling.split(",")], args.repeat)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = report["machine"]["date"].replace(":", "").replace("+0000", "Z")
    (args.out / f"{stamp}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (args.out / f"{stamp}.md").write_text(text + "\n")
    if "scaling" in report["suites"]:
        plot(report["suites"]["scaling"]["rows"], args.out / f"{stamp}.png")
    print(text)
    if args.compare:
        print(compare(report, json.loads(Path(args.compare).read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
