"""`python -m benches quality-bar REPORT…`: issue 29's bar read off quality reports, with the
noise of a half's few tasks.

The bar, on each repository's held-out half: task_context's recall@10 at least BM25's + 0.10,
its MRR at least BM25's, its coverage@8k at least 0.5. A half holds 40-170 tasks, so one task
more or less found moves a figure by up to 0.025; each margin is given with its standard error
(the spread of the margin over the half's tasks drawn again with replacement, a fixed seed, so
the same reports print the same table). A miss within one standard error is told apart from one
further off, and a recall line over 1 (BM25 already finds more than 90 %) is told unreachable.

A REPORT is a `*-quality.json` of `python -m benches quality`, or a directory searched for them
one level down (DIR/NAME/…-quality.json, as a run over many repositories writes them); when a
repository has several, the newest counts. `--against` names an earlier run of the same
repositories: each one's change, summed over those in both, with how many halves rose and fell.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

RECALL_OVER = 0.10
COVERAGE_AT_LEAST = 0.5
BUDGET = "8000"
RESAMPLES = 2000
SEED = 29
CRITERIA = ("recall@10", "mrr", f"coverage@{int(BUDGET) // 1000}k")


def _margins(diffs: list[tuple[float, float, float | None]]) -> tuple[float | None, ...]:
    """The three margins over tasks' (recall@10 − BM25's, rr − BM25's, coverage): recall over
    BM25's + 0.10, MRR over BM25's, coverage over 0.5 (None: no task with gold lines)."""
    covered = [c for _, _, c in diffs if c is not None]
    return (sum(d[0] for d in diffs) / len(diffs) - RECALL_OVER, sum(d[1] for d in diffs) / len(diffs),
            sum(covered) / len(covered) - COVERAGE_AT_LEAST if covered else None)


def bar(commits: list[dict]) -> dict | None:
    """Each criterion of the bar on a report's tasks: task_context's figure, the line it must
    reach, the margin, its standard error and the verdict. None when either ranker is missing."""
    rows = [(c["rankers"]["task_context"], c["rankers"]["bm25"]) for c in commits
            if "task_context" in c["rankers"] and "bm25" in c["rankers"]]
    if not rows:
        return None
    diffs = [(t["recall@10"] - b["recall@10"], t["rr"] - b["rr"], t["coverage"].get(BUDGET)) for t, b in rows]
    margins = _margins(diffs)
    draw = random.Random(SEED)
    spread: list[list[float]] = [[], [], []]
    for _ in range(RESAMPLES):
        again = _margins(draw.choices(diffs, k=len(diffs)))
        for i, m in enumerate(again):
            if m is not None:
                spread[i].append(m)
    bm25_recall = statistics.fmean(b["recall@10"] for _, b in rows)
    lines = (bm25_recall + RECALL_OVER, statistics.fmean(b["rr"] for _, b in rows), COVERAGE_AT_LEAST)
    out = {}
    for name, margin, line, drawn in zip(CRITERIA, margins, lines, spread):
        if margin is None:
            out[name] = None
            continue
        se = statistics.pstdev(drawn) if len(drawn) > 1 else 0.0
        if margin >= -1e-9:
            verdict = "met"
        elif name == "recall@10" and line > 1:
            verdict = "unreachable"
        else:
            verdict = "missed within one standard error" if margin + se >= 0 else "missed"
        out[name] = {"value": line + margin, "line": line, "margin": margin, "se": se, "verdict": verdict}
    return {"tasks": len(rows), "criteria": out,
            "met": all(c is not None and c["verdict"] == "met" for c in out.values())}


def sentence(b: dict) -> str:
    """The bar on one line, for a report's markdown."""
    parts = []
    for name, c in b["criteria"].items():
        if c is None:
            parts.append(f"{name} n/a (no bundle at {BUDGET} tokens)")
            continue
        parts.append(f"{name} {c['value']:.3f} against {c['line']:.3f}, {c['margin']:+.3f} ± {c['se']:.3f}: "
                     f"{c['verdict']}")
    return f"The bar (issue 29), {'met' if b['met'] else 'not met'}: " + "; ".join(parts) + "."


# --- many reports ----------------------------------------------------------------


def load(paths: list[Path]) -> dict[str, dict]:
    """The newest report of each repository under `paths`, by the repository's directory name."""
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found += sorted(p.glob("*-quality.json")) + sorted(p.glob("*/*-quality.json"))
        elif p.is_file():
            found.append(p)
        else:
            raise SystemExit(f"{p}: no such report or directory")
    reports: dict[str, dict] = {}
    for f in found:
        try:
            report = json.loads(f.read_text())
            name, date = Path(report["repo"]).name, report["machine"]["date"]
            if not {"commits", "half", "tasks", "rankers"} <= report.keys():
                raise KeyError("commits, half, tasks or rankers")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{f}: not a quality report ({exc})") from None
        if name not in reports or date >= reports[name]["machine"]["date"]:
            reports[name] = report
    return dict(sorted(reports.items()))


def _figures(report: dict) -> tuple[float, float, float | None]:
    s = report["rankers"]["task_context"]
    return s["recall@10"], s["mrr"], s["coverage"].get(BUDGET)


def table(reports: dict[str, dict], against: dict[str, dict] | None = None) -> str:
    """The bar per repository, the count met, and with `against` each one's change."""
    lines = ["| repository | half | tasks | recall@10 (margin ± se) | MRR (margin ± se) | coverage@8k (margin ± se) "
             "| verdict |" + (" Δ recall@10 | Δ MRR | Δ coverage@8k |" if against else ""),
             "|---|---|---|---|---|---|---|" + ("---|---|---|" if against else "")]
    met = near = unreachable = 0
    sums, up, down = [0.0, 0.0, 0.0], [0, 0, 0], [0, 0, 0]
    compared = 0
    for name, report in reports.items():
        b = bar(report["commits"])
        if b is None:
            lines.append(f"| {name} | {report['half']} | {report['tasks']} | n/a | n/a | n/a | needs task_context and bm25 |")
            continue
        missed = {k: c for k, c in b["criteria"].items() if c is not None and c["verdict"] != "met"}
        met += b["met"]
        unreachable += any(c["verdict"] == "unreachable" for c in missed.values())
        near += bool(missed) and all(c["verdict"] == "missed within one standard error" for c in missed.values())
        verdict = "met" if b["met"] else "; ".join(f"{k} {c['verdict']}" for k, c in missed.items())
        cells = [f"{c['value']:.3f} ({c['margin']:+.3f} ± {c['se']:.3f})" if c else "n/a" for c in b["criteria"].values()]
        row = f"| {name} | {report['half']} | {b['tasks']} | " + " | ".join(cells) + f" | {verdict} |"
        if against is not None and name in against and "task_context" in against[name]["rankers"]:
            compared += 1
            deltas = []
            for i, (now, was) in enumerate(zip(_figures(report), _figures(against[name]))):
                if now is None or was is None:
                    deltas.append("n/a")
                    continue
                d = now - was
                sums[i] += d
                up[i] += d > 1e-9
                down[i] += d < -1e-9
                deltas.append(f"{d:+.3f}")
            row += " " + " | ".join(deltas) + " |"
        elif against is not None:
            row += " – | – | – |"
        lines.append(row)
    total = len(reports)
    lines += ["", f"Met on {met} of {total}." + (
        f" Of the {total - met} that miss, {near} miss only within one standard error, and {unreachable} cannot "
        f"meet recall@10 as written (BM25's is over {1 - RECALL_OVER:.2f})." if met < total else "")]
    if against is not None:
        lines.append(f"Against the earlier run, over the {compared} repositories in both: "
                     + "; ".join(f"{n} {s:+.3f} summed ({u} up, {d} down)"
                                 for n, s, u, d in zip(CRITERIA, sums, up, down)) + ".")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benches quality-bar", description=__doc__.split("\n\n")[0],
                                epilog="Each margin's standard error: the half's tasks drawn again "
                                       f"{RESAMPLES} times with replacement (seed {SEED}).")
    p.add_argument("reports", nargs="+", type=Path, metavar="REPORT",
                   help="quality JSON reports, or directories holding them (one level down too)")
    p.add_argument("--against", nargs="+", type=Path, metavar="REPORT",
                   help="an earlier run's reports: print each repository's change and the sums")
    args = p.parse_args(argv)
    reports = load(args.reports)
    if not reports:
        p.error("no quality reports found")
    print(table(reports, load(args.against) if args.against else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
