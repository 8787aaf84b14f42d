"""Timing whole commands: wall and CPU time and peak memory of each run, as medians."""

from __future__ import annotations

import os
import statistics
import subprocess
import time


def run_once(argv: list[str], cwd: str) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "exit": proc.returncode,
    }


def command(name: str, argv: list[str], cwd: str, repeat: int = 5, warmup: int = 1) -> dict:
    """Median figures over `repeat` runs after `warmup` runs (which warm the page cache)."""
    for _ in range(warmup):
        run_once(argv, cwd)
    runs = [run_once(argv, cwd) for _ in range(repeat)]
    return {
        "name": name,
        "argv": argv,
        "runs": repeat,
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "wall_min_s": min(r["wall_s"] for r in runs),
        "cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "exit_codes": sorted({r["exit"] for r in runs}),
    }


def percentiles(samples: list[float]) -> dict:
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]  # noqa: E731
    return {"n": len(s), "p50": statistics.median(s), "p95": pick(0.95), "p99": pick(0.99)}
