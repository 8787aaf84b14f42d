"""`python -m benches.quality_where REPORT …`: where the changed lines a ranker's bundle did not
show went, read off quality reports (`python -m benches quality`, each row keeps the smallest
budget's bundle as `shown`). REPORT is a report's .json or a directory holding them (the newest).

Per ranker, points of coverage (each task's gold lines share 1, averaged over the tasks with gold
lines): shown; in a gold file not among the ten ranked; in a ranked gold file of which nothing is
shown; and in a gold file shown elsewhere, by the distance to the nearest piece. Then, per rank,
the share of the bundle's lines its files take, the share of the changed lines they hold (the
most a bundle could show of them) and the coverage they give.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PLACES = ("shown", "not ranked", "ranked, none shown", "<=20 off", "21-200 off", ">200 off")
RANKS = ("1", "2", "3-10", "past 10")


def _lines(ranges: list[list[int]]) -> list[int]:
    return [n for s, e in ranges for n in range(s, e + 1)]


def _rank(path: str, top10: list[str]) -> str:
    i = top10.index(path) if path in top10 else 10
    return RANKS[0] if i == 0 else RANKS[1] if i == 1 else RANKS[2] if i < 10 else RANKS[3]


def where(gold: dict[str, list[list[int]]], top10: list[str], shown: list) -> dict[str, float] | None:
    """Each place's share of the task's gold lines (None: no gold lines)."""
    lines = {p: _lines(r) for p, r in gold.items()}
    total = sum(len(v) for v in lines.values())
    if not total:
        return None
    out = dict.fromkeys(PLACES, 0.0)
    for path, ls in lines.items():
        pieces = [(s, e) for p, s, e in shown if p == path]
        for n in ls:
            off = min((s - n if n < s else n - e for s, e in pieces), default=None)
            place = ("shown" if off is not None and off <= 0 else "not ranked" if path not in top10
                     else "ranked, none shown" if off is None else "<=20 off" if off <= 20
                     else "21-200 off" if off <= 200 else ">200 off")
            out[place] += 1 / total
    return out


def spent(gold: dict[str, list[list[int]]], top10: list[str], shown: list) -> dict[str, tuple[float, float, float]]:
    """Per rank: the share of the bundle's lines its files take, the share of the task's gold
    lines its files hold (the most they could give), and the coverage they give."""
    lines = {p: set(_lines(r)) for p, r in gold.items()}
    total = sum(len(v) for v in lines.values())
    held = dict.fromkeys(RANKS, 0)
    golden = dict.fromkeys(RANKS, 0)
    for p, ls in lines.items():
        golden[_rank(p, top10)] += len(ls)
    covered = {r: set() for r in RANKS}
    for p, s, e in shown:
        held[_rank(p, top10)] += e - s + 1
        covered[_rank(p, top10)] |= {(p, n) for n in lines.get(p, ()) if s <= n <= e}
    size = sum(held.values()) or 1
    return {r: (held[r] / size, golden[r] / total if total else 0.0, len(covered[r]) / total if total else 0.0)
            for r in RANKS}


def summary(report: dict, ranker: str) -> dict:
    """The mean of `where` and `spent` over the report's tasks with gold lines (None: no bundles kept)."""
    rows = [(c["gold"], c["rankers"][ranker]) for c in report["commits"] if ranker in c["rankers"]]
    placed = [(g, a, where(g, a["top10"], a["shown"])) for g, a in rows if "shown" in a]
    kept = [(g, a, p) for g, a, p in placed if p is not None]
    if not kept:
        return {"tasks": 0}
    places = [p for _, _, p in kept]
    ranks = [spent(g, a["top10"], a["shown"]) for g, a, _ in kept]
    n = len(kept)
    return {"tasks": n,
            "places": {k: sum(p[k] for p in places) / n for k in PLACES},
            "ranks": {r: tuple(sum(x[r][i] for x in ranks) / n for i in range(3)) for r in RANKS}}


def load(path: Path) -> dict:
    if path.is_dir():
        path = sorted(path.glob("*-quality.json"))[-1]
    return json.loads(path.read_text())


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    print("| repository | ranker | tasks | " + " | ".join(PLACES) + " | lines, gold → coverage by rank "
          + " / ".join(RANKS) + " |")
    print("|---|---|---|" + "---|" * len(PLACES) + "---|")
    for path in paths:
        report = load(path)
        for ranker in report["rankers"]:
            s = summary(report, ranker)
            if not s["tasks"]:
                continue
            ranks = " / ".join(f"{h:.2f}, {g:.3f} → {c:.3f}" for h, g, c in s["ranks"].values())
            print(f"| {Path(report['repo']).name} | {ranker} | {s['tasks']} | "
                  + " | ".join(f"{v:.3f}" for v in s["places"].values()) + f" | {ranks} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
