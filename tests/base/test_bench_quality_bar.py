"""Issue 29's bar read off quality reports (`python -m benches quality-bar`): each criterion's
margin, its standard error over the half's tasks, and the verdicts that tell a miss within that
noise from one further off and a line no ranker can reach."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benches import quality, quality_bar  # noqa: E402


def _task(ours: tuple[float, float, float | None], bm25: tuple[float, float]) -> dict:
    """One task's row as `python -m benches quality` writes it: (recall@10, rr, coverage@8k)."""
    recall, rr, cov = ours
    return {"gold": {"a.py": [1]}, "rankers": {
        "task_context": {"recall@10": recall, "rr": rr, "coverage": {"8000": cov}},
        "bm25": {"recall@10": bm25[0], "rr": bm25[1], "coverage": {"8000": None}}}}


def test_each_criterion_s_margin_and_verdict():
    met = [_task((1.0, 1.0, 0.8), (0.5, 0.5))] * 20
    b = quality_bar.bar(met)
    assert b["met"] and b["tasks"] == 20
    recall = b["criteria"]["recall@10"]
    assert (round(recall["value"], 6), round(recall["line"], 6), round(recall["margin"], 6)) == (1.0, 0.6, 0.4)
    assert recall["se"] == 0.0, "every task alike: no spread"
    assert b["criteria"]["coverage@8k"]["margin"] == pytest.approx(0.8 - 0.5)

    # BM25 finds 95 %: recall must reach 1.05, which no ranker can.
    high = [_task((1.0, 1.0, 0.9), (0.95, 0.5))] * 20
    assert quality_bar.bar(high)["criteria"]["recall@10"]["verdict"] == "unreachable"
    assert not quality_bar.bar(high)["met"]

    # Coverage 0.48 from tasks at 0 and 0.96: a miss by 0.02 where the spread is about 0.1.
    noisy = [_task((1.0, 1.0, 0.0 if i % 2 else 0.96), (0.5, 0.5)) for i in range(50)]
    cov = quality_bar.bar(noisy)["criteria"]["coverage@8k"]
    assert cov["verdict"] == "missed within one standard error"
    assert 0.05 < cov["se"] < 0.085, "about 0.48 / √50, the spread of a mean of 50 such tasks"
    # The same miss with every task alike is a miss outright.
    flat = [_task((1.0, 1.0, 0.48), (0.5, 0.5))] * 50
    assert quality_bar.bar(flat)["criteria"]["coverage@8k"]["verdict"] == "missed"
    # MRR below BM25's on every task.
    worse = [_task((1.0, 0.25, 0.9), (0.5, 0.5))] * 10
    assert quality_bar.bar(worse)["criteria"]["mrr"]["verdict"] == "missed"


def test_the_standard_error_is_the_same_for_the_same_tasks_and_needs_both_rankers():
    rows = [_task((i % 3 / 2, i % 4 / 3, i % 5 / 4), (i % 2, 0.5)) for i in range(60)]
    assert quality_bar.bar(rows) == quality_bar.bar(json.loads(json.dumps(rows)))
    alone = [{"gold": {}, "rankers": {"task_context": r["rankers"]["task_context"]}} for r in rows]
    assert quality_bar.bar(alone) is None
    no_lines = [_task((1.0, 1.0, None), (0.5, 0.5))] * 5
    b = quality_bar.bar(no_lines)
    assert b["criteria"]["coverage@8k"] is None and not b["met"]
    assert "coverage@8k n/a" in quality_bar.sentence(b)


def _report(repo: str, date: str, rows: list[dict], half: str = "held-out") -> dict:
    ranked = ["task_context", "bm25"]
    return {"repo": f"/somewhere/{repo}", "machine": {"date": date}, "half": half, "tasks": len(rows),
            "rankers": {n: quality.summarise(n, [{**r, "rankers": {k: {**v, "recall@5": 0, "tokens": {"8000": 1},
                                                                          "ms": [1.0]}
                                                                      for k, v in r["rankers"].items()}}
                                                 for r in rows], [8000]) for n in ranked},
            "commits": rows}


def _bar(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benches", "quality-bar", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_many_reports_are_read_newest_first_and_compared_with_an_earlier_run(tmp_path):
    good = [_task((1.0, 1.0, 0.8), (0.5, 0.5))] * 10
    short = [_task((0.5, 0.6, 0.3), (0.5, 0.5))] * 10
    now, before = tmp_path / "now", tmp_path / "before"
    for d, alpha in ((now, good), (before, short)):
        (d / "alpha").mkdir(parents=True)
        (d / "alpha" / "2026-11-28T10Z-quality.json").write_text(json.dumps(_report("alpha", "2026-11-28T10", alpha)))
        (d / "beta").mkdir()
        (d / "beta" / "2026-11-28T10Z-quality.json").write_text(json.dumps(_report("beta", "2026-11-28T10", short)))
    # An older report of alpha beside the newer one: the newer counts.
    (now / "alpha" / "2026-11-27T10Z-quality.json").write_text(json.dumps(_report("alpha", "2026-11-27T10", short)))

    out = _bar(str(now), "--against", str(before))
    assert out.returncode == 0, out.stderr
    rows = {line.split(" | ")[0].lstrip("| "): line for line in out.stdout.splitlines() if line.startswith("| ")}
    assert rows["alpha"].startswith("| alpha | held-out | 10 | 1.000 (+0.400 ± 0.000) | 1.000 (+0.500 ± 0.000) | "
                                    "0.800 (+0.300 ± 0.000) | met | +0.500 | +0.400 | +0.500 |")
    assert "| recall@10 missed; coverage@8k missed | +0.000 | +0.000 | +0.000 |" in rows["beta"]
    assert "Met on 1 of 2. Of the 1 that miss, 0 miss only within one standard error" in out.stdout
    assert ("recall@10 +0.500 summed (1 up, 0 down); mrr +0.400 summed (1 up, 0 down); "
            "coverage@8k +0.500 summed (1 up, 0 down)") in out.stdout

    missing = _bar(str(tmp_path / "nowhere"))
    assert missing.returncode != 0 and "no such report or directory" in missing.stderr
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x-quality.json").write_text("{}")
    bad = _bar(str(tmp_path / "bad"))
    assert bad.returncode != 0 and "not a quality report" in bad.stderr


def test_a_report_s_markdown_carries_the_bar():
    rows = [_task((1.0, 1.0, 0.4), (0.5, 0.5))] * 4
    report = {**_report("alpha", "d", rows), "rev": "0" * 40, "selected": 8, "range": {"oldest": "a", "newest": "b"},
              "tokenizer": "bytes4", "budgets": [8000], "skipped": {}, "bar": quality_bar.bar(rows)}
    text = quality.markdown(report)
    assert ("The bar (issue 29), not met: recall@10 1.000 against 0.600, +0.400 ± 0.000: met; mrr 1.000 against "
            "0.500, +0.500 ± 0.000: met; coverage@8k 0.400 against 0.500, -0.100 ± 0.000: missed.") in text
