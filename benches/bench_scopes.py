"""Scopes write benchmark: `python -m benches.bench_scopes [--files 100000] [--tree PATH] [--repeat 3]`.

Times whole `repoctx init` and `repoctx regen` processes (wall, CPU, peak RSS) on
the harness's synthetic monorepo, or on any tree given with --tree, beside the
floors measured in the same run (`git status`, a one-thread `find` stat walk,
`repoctx status`). Each init runs on a fresh hard-linked copy of the tree
(`cp -al`: repoctx replaces files by rename, so the original is never touched; git's
index of the copy is refreshed before timing, as a working copy's is):

- init with no context files: every eligible scope written (the issue's bar:
  ≤ 5 s wall and ≤ 500 MiB peak on ~100,000 files);
- init as generated: about half the directories already have a context file;
- regen with nothing changed: every scope's sources read, nothing rewritten.

Writes benches/out/scopes-<date>.json and .md and prints the markdown.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from benches import measure, synth

OUT = Path(__file__).parent / "out"


def _scratch(tree: Path, keep_contexts: bool) -> Path:
    scratch = tree.parent / f"{tree.name}-scopes-scratch"
    if scratch.exists():
        shutil.rmtree(scratch)
    subprocess.run(["cp", "-al", str(tree), str(scratch)], check=True)
    if not keep_contexts:
        for dirpath, dirnames, filenames in os.walk(scratch):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            if ".context.yaml" in filenames:
                os.unlink(os.path.join(dirpath, ".context.yaml"))
    # A hard link changes every inode's ctime, so git's index is stale in the copy; a working
    # copy's index is not, so refresh it first (outside the timing).
    if (scratch / ".git").exists():
        subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=scratch, capture_output=True)
    return scratch


def _median(name: str, argv: list[str], runs: list[dict]) -> dict:
    return {
        "name": name,
        "argv": argv,
        "runs": len(runs),
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "wall_min_s": min(r["wall_s"] for r in runs),
        "cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "exit_codes": sorted({r["exit"] for r in runs}),
    }


def suite(tree: Path, repeat: int) -> dict:
    py = sys.executable
    init = [py, "-m", "repoctx", "init", "--quiet"]
    regen = [py, "-m", "repoctx", "regen", "--quiet"]
    rows = []
    for name, keep in [("repoctx init (no context files)", False), ("repoctx init (as generated)", True)]:
        runs = []
        for _ in range(repeat):
            scratch = _scratch(tree, keep)
            runs.append(measure.run_once(init, str(scratch)))
        rows.append(_median(name, init, runs))
    scratch = _scratch(tree, keep_contexts=False)
    measure.run_once(init, str(scratch))
    rows.append(measure.command("repoctx regen (nothing changed)", regen, str(scratch), repeat))
    rows.append(measure.command("repoctx status --json", [py, "-m", "repoctx", "status", "--json"], str(scratch), repeat))
    rows.append(measure.command("git status --porcelain", ["git", "status", "--porcelain"], str(scratch), repeat))
    rows.append(measure.command("find stat walk (1 thread)", ["find", ".", "-printf", "%s %T@\\n"], str(scratch), repeat))
    contexts = sum(1 for _ in scratch.rglob(".context.yaml"))
    shutil.rmtree(scratch)
    by = {r["name"]: r for r in rows}
    full = by["repoctx init (no context files)"]
    ratios = {
        "init / git status": full["wall_s"] / by["git status --porcelain"]["wall_s"],
        "init / find": full["wall_s"] / by["find stat walk (1 thread)"]["wall_s"],
        "init / status": full["wall_s"] / by["repoctx status --json"]["wall_s"],
    }
    return {"rows": rows, "ratios": ratios, "context_files": contexts}


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = [f"# scopes write benchmark — {m['date']}", "",
             f"Tree: `{report['tree']}` ({report['files']} files, {report['suite']['context_files']} context files "
             f"after init). {m['cpus']} CPUs, load average {m['load']} at start.", "",
             "| command | wall (median) | wall (min) | CPU | peak RSS |", "|---|---|---|---|---|"]
    for r in report["suite"]["rows"]:
        lines.append(f"| {r['name']} | {r['wall_s']:.2f} s | {r['wall_min_s']:.2f} s | {r['cpu_s']:.2f} s "
                     f"| {r['peak_rss_mib']:.0f} MiB |")
    lines += ["", "| ratio | value |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} |" for k, v in report["suite"]["ratios"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.bench_scopes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--tree", help="an existing tree instead of the synthetic one")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    tree = Path(args.tree).resolve() if args.tree else synth.tree(args.files)
    files = 0
    for _, dirnames, filenames in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        files += len(filenames)
    report = {
        "machine": {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                    "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "tree": str(tree),
        "files": files,
        "suite": suite(tree, args.repeat),
    }
    OUT.mkdir(exist_ok=True)
    stamp = report["machine"]["date"].replace(":", "").replace("+0000", "Z")
    (OUT / f"scopes-{stamp}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (OUT / f"scopes-{stamp}.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
