"""`python -m benches.quality_big REPORT …`: in the ranked files too large for the bundle (over its
budget whole), where the changed lines the bundle did not show sit: in a definition it shows a
piece of, in a definition it shows nothing of, or outside every definition; for the file ranked
first and for those ranked 2–10. REPORT is a quality report's .json or a directory holding them
(the newest, as benches/quality_where.py); the files are read from the report's repository at
each task's parent. Shares are points of coverage (each task's changed lines share 1, averaged
over the tasks with changed lines): the most a better choice of regions inside those files could
add to coverage at the report's smallest budget.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benches.quality_where import load
from repoctx import _core

PLACES = ("held", "shown", "in a definition partly shown", "in a definition not shown", "outside definitions")
RANKS = ("1", "2-10")


def leaves(path: str, text: str) -> list[tuple[int, int]]:
    """The line ranges of the innermost definitions the outline gives (members, else the definition)."""
    out = []
    for d in json.loads(_core.outline(path, text)):
        out += [(m["start"], m["end"]) for m in d["members"]] or [(d["start"], d["end"])]
    return out


def place(line: int, shown: list[tuple[int, int]], defs: list[tuple[int, int]]) -> str:
    """Where a changed line of a large file sits against the pieces of it shown."""
    if any(s <= line <= e for s, e in shown):
        return "shown"
    around = [(s, e) for s, e in defs if s <= line <= e]
    if not around:
        return "outside definitions"
    s, e = min(around, key=lambda d: d[1] - d[0])
    return ("in a definition partly shown" if any(a <= e and s <= b for a, b in shown)
            else "in a definition not shown")


def blob(repo: str, rev: str, path: str) -> str:
    done = subprocess.run(["git", "-C", repo, "cat-file", "blob", f"{rev}:{path}"], capture_output=True)
    return done.stdout.decode("utf-8", "replace")


def summary(report: dict, ranker: str, tokens=lambda t: -(-len(t.encode()) // 4)) -> dict:
    """Per rank, the mean share of each task's changed lines in each place (large files only)."""
    budget = min(report["budgets"])
    sums = {r: dict.fromkeys(PLACES, 0.0) for r in RANKS}
    n = 0
    for c in report["commits"]:
        answer = c["rankers"].get(ranker)
        total = sum(e - s + 1 for ranges in c["gold"].values() for s, e in ranges)
        if answer is None or not total:
            continue
        n += 1
        for rank, path in enumerate(answer["top10"]):
            if path not in c["gold"]:
                continue
            text = blob(report["repo"], c["parent"], path)
            if tokens(text) <= budget:
                continue
            shown = [(s, e) for p, s, e in answer["shown"] if p == path]
            defs = leaves(path, text)
            row = sums[RANKS[0] if rank == 0 else RANKS[1]]
            for s, e in c["gold"][path]:
                for line in range(s, e + 1):
                    row["held"] += 1 / total
                    row[place(line, shown, defs)] += 1 / total
    return {"tasks": n, "ranks": {r: {k: v / max(n, 1) for k, v in row.items()} for r, row in sums.items()}}


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    print("| repository | tasks | rank | " + " | ".join(PLACES) + " |")
    print("|---|---|---|" + "---|" * len(PLACES))
    for path in paths:
        report = load(path)
        s = summary(report, "task_context")
        for rank, row in s["ranks"].items():
            print(f"| {Path(report['repo']).name} | {s['tasks']} | {rank} | "
                  + " | ".join(f"{v:.3f}" for v in row.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
