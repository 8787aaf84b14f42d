"""Timing whole commands: wall and CPU time and peak memory of each run, as medians."""

from __future__ import annotations

import statistics
import subprocess
import sys

# Linux carries a process's peak RSS across exec from the image it was forked from, so a
# child of this (by then large) harness process would report the harness's peak as its own.
# A small launcher forks and times the command; its peak is the launcher's (~9 MiB) at most.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
print(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status), file=sys.stderr)
"""


def run_once(argv: list[str], cwd: str) -> dict:
    out = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=True)
    wall, cpu, maxrss_kib, code = out.stderr.split()[-4:]  # the command's own stderr comes before
    return {"wall_s": float(wall), "cpu_s": float(cpu), "peak_rss_mib": int(maxrss_kib) / 1024, "exit": int(code)}


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
        "wall_p95_s": percentiles([r["wall_s"] for r in runs])["p95"],
        "cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "cpu_p95_s": percentiles([r["cpu_s"] for r in runs])["p95"],
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "exit_codes": sorted({r["exit"] for r in runs}),
    }


def percentiles(samples: list[float]) -> dict:
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]  # noqa: E731
    return {"n": len(s), "p50": statistics.median(s), "p95": pick(0.95), "p99": pick(0.99)}
